package core

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// cmdConversations answers /<plugin> conversations.
func cmdConversations(c *call) (string, error) { return c.listConversations(c.cmd.Plugin, "") }

// listConversations shows the plugin's past conversations for this
// conversation's workdir, as buttons where the platform has them.
func (c *call) listConversations(pluginID, resumeCmd string) (string, error) {
	r, ctx, a, m := c.r, c.ctx, c.a, c.m
	p, _ := r.cfg.Plugins.Get(pluginID)
	where, infos, _, err := c.history(ctx, p)
	if err != nil {
		return "", err
	}
	wd := where.Shown(where.Workdir)
	admin := c.who.Admin
	if len(infos) == 0 && !admin {
		return fmt.Sprintf("No %s conversations of yours in %s yet (you see those you started from chat).", p.Name(), wd), nil
	}
	if len(infos) == 0 {
		return fmt.Sprintf("No %s conversations in %s yet.", p.Name(), wd), nil
	}
	if resumeCmd == "" {
		resumeCmd = "/" + p.ID() + " resume"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s conversations in %s (newest first):", p.Name(), wd)
	var choices []Choice
	for i, info := range infos[:min(len(infos), listLimit)] {
		fmt.Fprintf(&b, "\n%d. %s  %s  %s", i+1, shortID(info.SessionID), info.Updated.Local().Format("2006-01-02 15:04"), Shorten(info.Title, 60))
		if admin {
			owner := r.convs.Owner(p.ID(), info.SessionID)
			if owner == "" {
				owner = "not started from chat"
			}
			fmt.Fprintf(&b, "  [%s]", owner)
		}
		choices = append(choices, Choice{Label: r.cfg.Redactor.Redact(Shorten(info.Title, 40)), Command: resumeCmd + " " + info.SessionID})
	}
	if o, ok := a.p.(ChoiceOfferer); ok {
		if _, err := o.OfferChoices(ctx, m.Target(), r.cfg.Redactor.Redact(b.String()), choices); err == nil {
			return "", nil
		}
	}
	fmt.Fprintf(&b, "\nResume one with %s <id or number>.", resumeCmd)
	return b.String(), nil
}

// history is p's past conversations in m's workdir that m's author may
// resume; listed says whether the CLI listed any at all. where is that
// workdir, and its runner.
func (c *call) history(ctx context.Context, p Plugin) (where Conversation, infos []ConversationInfo, listed bool, err error) {
	r, m := c.r, c.m
	conv, ok := c.lastConversation()
	where.Workdir = r.here.defaultWorkdir()
	if ok {
		// The conversation's machine lists its CLI's history, and the
		// conversation resumed stays there.
		place := r.placeOf(conv, c.who)
		if p, err = place.Plugin(p.ID(), m); err != nil {
			return Conversation{}, nil, false, err
		}
		if where.Workdir, err = place.Workdir(ctx, conv.Workdir); err != nil {
			return Conversation{}, nil, false, err
		}
		where.Runner = conv.Runner
	}
	if infos, err = p.Conversations(ctx, where.Workdir); err != nil {
		return Conversation{}, nil, false, fmt.Errorf("list %s conversations: %w", p.Name(), err)
	}
	return where, c.ownSessions(p.ID(), infos), len(infos) > 0, nil
}

// lastConversation is m's conversation or, when it has none, where the
// one that ended there last was (Conversations.Ended), so that a bare
// /resume lists and resumes where the user just was. An ended
// conversation whose worktree was removed with it is taken to be in its
// repository. ok is false when there is neither.
func (c *call) lastConversation() (conv Conversation, ok bool) {
	r, m := c.r, c.m
	if c.hasConv {
		return c.conv, true
	}
	if conv, ok = r.convs.Ended(m.Key); ok && conv.Worktree != "" && c.worktreeGone(conv) {
		conv.Workdir, conv.Worktree, conv.Branch, conv.Repo = conv.Repo, "", "", ""
	}
	return conv, ok
}

// worktreeGone reports whether conv's worktree, here or on its runner, is
// no longer there (not merely out of reach).
func (c *call) worktreeGone(conv Conversation) bool {
	r := c.r
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := r.placeOf(conv, c.who).Resolve(ctx, conv.Worktree)
	return errors.Is(err, ErrNoSuchDir)
}

// resumePlugin is the plugin /resume means: the one named, or the
// conversation's current or last one.
func (c *call) resumePlugin(cmd Command) (Plugin, error) {
	r := c.r
	pluginID := cmd.Plugin
	if pluginID == "" {
		last, _ := c.lastConversation()
		pluginID = last.Plugin
		if pluginID == "" {
			return nil, Errorf("no current or previous conversation here; use /<plugin> resume <id>, e.g. /%s resume <id>", r.cfg.Plugins.IDs()[0])
		}
	}
	p, ok := r.cfg.Plugins.Get(pluginID)
	if !ok {
		return nil, Errorf("plugin %q is not configured", pluginID)
	}
	return p, nil
}

// cmdResume answers /resume [id] and /<plugin> resume [id]: without an
// id, the listing to pick from.
func cmdResume(c *call) (string, error) {
	r, ctx, m, cmd := c.r, c.ctx, c.m, c.cmd
	p, err := c.resumePlugin(cmd)
	if err != nil {
		return "", err
	}
	if cmd.Arg == "" {
		resumeCmd := "/resume"
		if cmd.Plugin != "" {
			resumeCmd = "/" + p.ID() + " resume"
		}
		return c.listConversations(p.ID(), resumeCmd)
	}
	where, infos, listed, err := c.history(ctx, p)
	if err != nil {
		return "", err
	}
	wd := where.Shown(where.Workdir)
	info, err := pickConversation(infos, cmd.Arg)
	if err != nil {
		if ck, ok := p.(SessionIDChecker); ok && !listed {
			// A CLI without a listing: trust an id of the right form,
			// of a session the author may resume.
			if cerr := ck.CheckSessionID(cmd.Arg); cerr == nil && c.mayResume(p.ID(), cmd.Arg) {
				info, err = ConversationInfo{SessionID: cmd.Arg}, nil
			}
		}
		if err != nil {
			return "", Errorf("%v in %s's %s history. /%s conversations lists them", err, wd, p.Name(), p.ID())
		}
	}
	// An id from the CLI's history on disk reaches its argv too: it must
	// have the form the CLI's ids have, whatever a file there is named.
	if ck, ok := p.(SessionIDChecker); ok {
		if err := ck.CheckSessionID(info.SessionID); err != nil {
			return "", err
		}
	}
	now := r.clock.Now()
	conv := Conversation{Plugin: p.ID(), Runner: where.Runner, Workdir: where.Workdir, SessionID: info.SessionID, Started: now, LastUsed: now}
	if old, ok := c.lastConversation(); ok && old.Worktree != "" && old.Runner == conv.Runner && (Roots{old.Worktree}).Contains(conv.Workdir) {
		// Resumed in the worktree: the conversation keeps it.
		conv.Worktree, conv.Branch, conv.Repo = old.Worktree, old.Branch, old.Repo
	}
	r.convs.Put(m.Key, conv)
	title := ""
	if info.Title != "" {
		title = " (" + Shorten(info.Title, 60) + ")"
	}
	return fmt.Sprintf("Resumed %s conversation %s%s in %s. Just type to chat.", p.Name(), info.SessionID, title, wd), nil
}

// ownSessions keeps the sessions m's author may see and resume: the ones
// they started from chat, or every one for an admin. Sessions started on
// the host, outside the chat, are the admins'.
func (c *call) ownSessions(pluginID string, infos []ConversationInfo) []ConversationInfo {
	if c.who.Admin {
		return infos
	}
	var own []ConversationInfo
	for _, info := range infos {
		if c.mayResume(pluginID, info.SessionID) {
			own = append(own, info)
		}
	}
	return own
}

func (c *call) mayResume(pluginID, session string) bool {
	r, m := c.r, c.m
	return c.who.Admin || r.convs.Owner(pluginID, session) == OwnerOf(m)
}

// pickConversation finds arg among infos (newest first): "latest", a full
// id, an unambiguous prefix, or a number from the listing.
func pickConversation(infos []ConversationInfo, arg string) (ConversationInfo, error) {
	if strings.EqualFold(arg, "latest") && len(infos) > 0 {
		return infos[0], nil
	}
	if n, err := strconv.Atoi(arg); err == nil && n >= 1 && n <= min(len(infos), listLimit) && len(arg) <= 2 {
		return infos[n-1], nil
	}
	var found []ConversationInfo
	for _, c := range infos {
		if c.SessionID == arg {
			return c, nil
		}
		if strings.HasPrefix(c.SessionID, arg) {
			found = append(found, c)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return ConversationInfo{}, fmt.Errorf("no conversation %q", arg)
	}
	return ConversationInfo{}, fmt.Errorf("%q matches %d conversations; give more of the id", arg, len(found))
}
