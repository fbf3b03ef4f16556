package core

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// stateOf says what k's conversation is doing, for /status: idle or
// running (with its queue and background work), its next CLI warm, a
// question waiting.
func (c *call) stateOf(k ConversationKey) string {
	r := c.r
	state := "idle"
	if st, running := r.turns.state(k); running {
		state = fmt.Sprintf("running a turn, %d queued", st.waiting) + backgroundState(st.background)
	}
	if r.warm.has(k) {
		state += ", next turn's CLI warm"
	}
	if pq := r.questions.find("", k); pq != nil {
		state += fmt.Sprintf(", waiting for an answer: allow %s? (%s)", pq.q.Tool, pq.id)
	}
	return state
}

// cmdWorkdir answers /workdir: the conversation's, or the default.
func cmdWorkdir(c *call) (string, error) {
	if c.hasConv {
		return "Workdir: " + c.conv.Shown(c.conv.Workdir), nil
	}
	return "No conversation here. The default workdir is " + c.r.here.defaultWorkdir(), nil
}

// cmdHelp answers /help: the table's overview.
func cmdHelp(c *call) (string, error) { return c.r.cfg.Plugins.Commands().Help(), nil }

// cmdEnd ends c's conversation: its turn stopped, the rest let go
// (retire).
func cmdEnd(c *call) (string, error) {
	r, m := c.r, c.m
	conv, ok := r.convs.End(m.Key)
	if !ok {
		return "There is no conversation here to end.", nil
	}
	r.stop(m.Key)
	ended := "Conversation ended. Its history stays with the CLI: /resume brings it back"
	if line := r.terminalLine(conv); line != "" {
		ended += ", and in a terminal: " + line
	}
	return ended + "." + c.retire(c.ctx, m.Key, conv), nil
}

// retire lets go of what belonged to conv, the conversation k had, once
// it ended or was replaced by a new one: its schedules are removed (they
// were set for it, not for whatever starts there next) and its worktree
// too when nothing in it is unmerged. It says what became of them.
func (c *call) retire(ctx context.Context, k ConversationKey, conv Conversation) string {
	r := c.r
	note := ""
	if n := r.convs.removeSchedulesOf(k); n > 0 {
		r.sched.armSchedules()
		note = fmt.Sprintf("\nIts %d schedules are removed.", n)
		if n == 1 {
			note = "\nIts schedule is removed."
		}
	}
	return note + r.endWorktree(ctx, conv)
}

// cmdStop answers /stop.
func cmdStop(c *call) (string, error) {
	paired := c.r.side.stopLoop(c.m.Key)
	dropped, running := c.r.stop(c.m.Key)
	switch {
	case paired && running:
		return "Stopping the pair loop and its running turn.", nil
	case paired:
		return "The pair loop is stopped.", nil
	case !running:
		return "Nothing is running.", nil
	case dropped > 0:
		return fmt.Sprintf("Stopping the running turn; %d queued messages dropped.", dropped), nil
	}
	return "Stopping the running turn.", nil
}

// cmdPlugin runs one of a plugin's own commands (CommandProvider), with
// c's conversation when it is that plugin's.
func cmdPlugin(c *call) (string, error) {
	if p, ok := c.r.cfg.Plugins.Get(c.cmd.Plugin); ok {
		if cp, ok := p.(CommandProvider); ok {
			conv := c.conv
			if !c.hasConv || conv.Plugin != c.cmd.Plugin {
				conv = Conversation{}
			}
			return cp.RunCommand(c.ctx, conv, c.cmd)
		}
	}
	return "", Errorf("command %q is not implemented", c.cmd.Name)
}

// cmdStart answers /<plugin> start.
func cmdStart(c *call) (string, error) { return c.start(c.cmd) }

// start starts the conversation cmd (a /<plugin> start) says. Where the
// platform opens a thread for a new conversation (ThreadOpener), the
// conversation moves there, and so does c.m: its replies go to the
// thread.
func (c *call) start(cmd Command) (string, error) {
	r, ctx, m := c.r, c.ctx, &c.m
	p, _ := r.cfg.Plugins.Get(cmd.Plugin)
	path, worktree, name := startArgs(cmd.Arg)
	runner, wd, err := c.userPlace(ctx, p.ID(), path)
	if err != nil {
		return "", err
	}
	now := r.clock.Now()
	conv := Conversation{Plugin: p.ID(), Runner: runner, Workdir: wd, Started: now, LastUsed: now}
	note, warning := "", ""
	if (worktree == nil && r.cfg.Worktrees) || (worktree != nil && *worktree) {
		if note, err = c.newWorktree(ctx, &conv, name, worktree != nil); err != nil {
			return "", err
		}
	}
	c.openThread(ctx, m, conv.Shown(wd), p)
	if conv.Worktree == "" {
		warning = c.sharedWorkdir(m.Key, conv)
	}
	replaced := ""
	if old, ok := r.convs.Get(m.Key); ok {
		if old.Worktree != "" && conv.Worktree == "" && old.Runner == conv.Runner && (Roots{old.Worktree}).Contains(conv.Workdir) {
			// Started again in the worktree: the new conversation keeps it.
			conv.Worktree, conv.Branch, conv.Repo = old.Worktree, old.Branch, old.Repo
			old.Worktree = ""
		}
		// The new conversation replaces the old one here: what was the
		// old one's must not pass to it, nor be forgotten.
		replaced = fmt.Sprintf("\nThe %s conversation that was here has ended (/%s resume brings it back).%s", old.Plugin, old.Plugin, c.retire(ctx, m.Key, old))
	}
	r.convs.Put(m.Key, conv)
	c.conv, c.hasConv = conv, true
	return fmt.Sprintf("%s conversation started in %s.%s Just type to chat.%s%s", p.Name(), conv.Shown(conv.Workdir), note, replaced, warning), nil
}

// openThread moves m to a thread of its own where the platform opens one
// for a new conversation; nothing can refuse the start any more. A thread
// that cannot be opened leaves the conversation where it was started.
func (c *call) openThread(ctx context.Context, m *Message, workdir string, p Plugin) {
	r, a := c.r, c.a
	t, ok := a.p.(ThreadOpener)
	if !ok {
		return
	}
	thread, err := t.OpenThread(ctx, *m, workdir, p.Name())
	if err != nil {
		r.logger.Warn("no thread; the conversation stays where it was started", "conversation", m.Key.String(), "err", err)
		return
	}
	if thread != "" {
		m.Key.Channel, m.ReplyTo = thread, ""
	}
}

// cmdSetWorkdir answers /workdir set.
func cmdSetWorkdir(c *call) (string, error) {
	r, m, path, conv := c.r, c.m, c.cmd.Arg, c.conv
	if !c.hasConv {
		return "", Errorf("no conversation here; start one with a workdir: /%s start <path>", r.cfg.Plugins.IDs()[0])
	}
	runner, wd, err := c.userPlace(context.Background(), conv.Plugin, path)
	if err != nil {
		return "", err
	}
	if conv.Worktree != "" && (runner != conv.Runner || !(Roots{conv.Worktree}).Contains(wd)) {
		return "", Errorf("this conversation works in its worktree %s: it may move only within it. For another directory, start a new conversation (/conversation end first, to remove the worktree)", conv.Shown(conv.Worktree))
	}
	r.convs.Update(m.Key, func(c *Conversation) {
		if c.Workdir != wd || c.Runner != runner {
			// Every CLI keys its sessions by directory: the old session
			// cannot be resumed from the new one.
			c.SessionID = ""
		}
		c.Runner, c.Workdir = runner, wd
	})
	return "Workdir set to " + (Conversation{Runner: runner}).Shown(wd) + ". The next message starts a new session there.", nil
}

// cmdStatus answers /status [all].
func cmdStatus(c *call) (string, error) {
	r, m := c.r, c.m
	if c.cmd.Arg == "all" {
		if !c.who.Admin {
			return "", Errorf("/status all is for admins")
		}
		entries := r.convs.All()
		var b strings.Builder
		fmt.Fprintf(&b, "%d active conversations", len(entries))
		if r.cfg.Gateway != "" {
			fmt.Fprintf(&b, " (gateway %s)", r.cfg.Gateway)
		}
		for _, e := range entries {
			fmt.Fprintf(&b, "\n%s: %s in %s, last used %s", e.Key, e.Plugin, e.Shown(e.Workdir), e.LastUsed.Format(time.DateTime))
		}
		return b.String(), nil
	}
	conv := c.conv
	if !c.hasConv {
		return r.noConversation(), nil
	}
	p, _ := r.cfg.Plugins.Get(conv.Plugin)
	name := conv.Plugin
	if p != nil {
		name = p.Name()
	}
	session := conv.SessionID
	if session == "" {
		session = "new (none yet)"
	}
	if k, ok := p.(SessionKeeper); ok && !k.KeepsSessions() {
		session = fmt.Sprintf("none: %s cannot resume a session, so each turn starts fresh", name)
	}
	state := c.stateOf(m.Key)
	allowed := "none"
	if len(conv.AllowedTools) > 0 {
		allowed = strings.Join(conv.AllowedTools, ", ")
	}
	model := conv.Model
	if model == "" {
		model = "the plugin's default"
	}
	worktree := "none (works directly in its workdir)"
	if conv.Worktree != "" {
		worktree = fmt.Sprintf("%s on branch %s (/merge merges it in %s)", conv.Shown(conv.Worktree), conv.Branch, conv.Shown(conv.Repo))
	}
	out := fmt.Sprintf("%s in %s\nWorktree: %s\nSession: %s\nModel: %s\nMode: %s\nStarted: %s\nLast used: %s\nState: %s\nAlways allowed: %s\nWarm CLIs: %s",
		name, conv.Shown(conv.Workdir), worktree, session, model, r.modeSummary(conv), conv.Started.Format(time.DateTime), conv.LastUsed.Format(time.DateTime), state, allowed,
		r.warmSummary())
	out += c.sideStatus(conv)
	if line := r.terminalLine(conv); line != "" {
		out += "\nIn a terminal: " + line
	}
	if r.cfg.Sandbox != "" {
		where := r.cfg.Sandbox
		if conv.Runner != "" {
			where = "the runner's own (its start-up log says which)"
		}
		out += "\nSandbox: " + where
	}
	if r.cfg.Gateway != "" {
		out += "\nGateway: " + r.cfg.Gateway
	}
	return out, nil
}
