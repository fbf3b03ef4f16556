package core

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// listLimit is how many past conversations a listing shows.
const listLimit = 10

// command runs a slash command from m and records it. It reports
// whether it took done, m's, to call later: an answer to a question holds
// it until the turn ends.
func (r *Router) command(ctx context.Context, a *attached, m Message, id string, done func()) (tookDone bool) {
	started := r.clock.Now()
	rec := Record{Kind: RecordCommand, ID: id, Time: started, Key: m.Key, Author: m.Author(), Text: m.Text, Outcome: OutcomeOK}
	cmd, err := r.cfg.Plugins.Commands().Parse(m.Text)
	if err == nil && (cmd.Name == CmdAllow || cmd.Name == CmdDeny || cmd.Name == CmdAnswer) {
		rec.Command = strings.TrimSpace("/" + string(cmd.Name) + " " + cmd.Arg)
		qid, ans := answerCommand(cmd)
		if tookDone = r.tryAnswer(a, m, qid, ans, done); !tookDone {
			err = Errorf("no question is waiting for an answer here")
		}
	} else if err == nil {
		rec.Command = strings.TrimSpace("/" + string(cmd.Name) + " " + cmd.Arg)
		if cmd.Plugin != "" {
			rec.Command = strings.TrimSpace("/" + cmd.Plugin + " " + string(cmd.Name) + " " + cmd.Arg)
		}
		r.logger.Info("command", "id", id, "conversation", m.Key.String(), "command", string(cmd.Name), "plugin", cmd.Plugin)
		var text string
		text, err = r.runCommand(ctx, a, &m, cmd)
		if err == nil && text != "" {
			r.reply(a, m.Target(), text)
		}
	}
	rec.Key = m.Key // a /start may have moved it to a thread of its own
	if conv, ok := r.convs.Get(m.Key); ok {
		rec.Plugin, rec.Workdir, rec.SessionID = conv.Plugin, conv.Shown(conv.Workdir), conv.SessionID
	}
	if err != nil {
		rec.Outcome = OutcomeError
		r.replyError(a, m.Target(), id, err)
	}
	rec.Duration = r.clock.Now().Sub(started)
	r.obs.Record(rec)
	return tookDone
}

// changesConversation reports whether cmd moves the conversation to
// another plugin, session or directory, or ends it: refused while a turn
// runs or messages wait, since they belong to the conversation as it was.
func changesConversation(cmd Command) bool {
	switch cmd.Name {
	case CmdStart, CmdWorkdirSet, CmdEnd, CmdMerge, CmdStartNow:
		return true
	case CmdResume:
		return cmd.Arg != "" // a bare /resume only lists
	}
	return false
}

func (r *Router) runCommand(ctx context.Context, a *attached, m *Message, cmd Command) (string, error) {
	if changesConversation(cmd) {
		if why := r.busy(m.Key); why != "" {
			return "", Errorf("%s", why)
		}
	}
	if cmd.Plugin != "" && cmd.Name != CmdStart && cmd.Name != CmdConversations && cmd.Name != CmdResume && cmd.Name != CmdStartNow {
		return r.pluginCommand(ctx, *m, cmd)
	}
	switch cmd.Name {
	case CmdHelp:
		return r.cfg.Plugins.Commands().Help(), nil
	case CmdStart:
		text, err := r.start(ctx, a, m, cmd)
		return r.rewarm(*m, true)(text, err)
	case CmdEnd:
		return r.end(ctx, *m), nil
	case CmdCost:
		return r.cost(*m, cmd.Arg == "all")
	case CmdAt, CmdEvery:
		return r.schedule(a, *m, cmd)
	case CmdSchedules:
		return r.listSchedules(*m), nil
	case CmdUnschedule:
		return r.unschedule(*m, cmd.Arg)
	case CmdFile:
		return r.sendFile(ctx, a, *m, cmd.Arg)
	case CmdRunners:
		return r.listRunners(), nil
	case CmdLimits:
		return r.listLimits(), nil
	case CmdStartNow:
		return r.startNow(ctx, a, m, cmd)
	case CmdDiff:
		return r.diff(ctx, a, *m)
	case CmdMerge:
		return r.merge(ctx, *m)
	case CmdSteer, CmdQueue:
		return r.busyMessage(a, *m, cmd)
	case CmdNow:
		return r.sendNow(*m, cmd.Arg)
	case CmdStop:
		return r.stopCommand(*m), nil
	case CmdStatus:
		return r.status(*m, cmd.Arg == "all")
	case CmdWorkdir:
		return r.workdirAnswer(*m), nil
	case CmdModel:
		return r.model(*m, cmd.Arg)
	case CmdMode:
		return r.mode(*m, cmd.Arg)
	case CmdWorkdirSet:
		return r.rewarm(*m, true)(r.setWorkdir(*m, cmd.Arg))
	case CmdConversations:
		return r.listConversations(ctx, a, *m, cmd.Plugin, "")
	case CmdResume:
		return r.rewarm(*m, cmd.Arg != "")(r.resume(ctx, a, *m, cmd))
	}
	return "", Errorf("command %q is not implemented", cmd.Name)
}

// stateOf says what k's conversation is doing, for /status: idle or
// running (with its queue and background work), its next CLI warm, a
// question waiting.
func (r *Router) stateOf(k ConversationKey) string {
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

// workdirAnswer answers /workdir: the conversation's, or the default.
func (r *Router) workdirAnswer(m Message) string {
	if conv, ok := r.convs.Get(m.Key); ok {
		return "Workdir: " + conv.Shown(conv.Workdir)
	}
	return "No conversation here. The default workdir is " + r.defaultWorkdir()
}

// rewarm passes a command's answer on; when the command succeeded and
// placed the conversation on a new session (or in a new workdir), the
// warm CLI of the old one is dropped and the new one's started.
func (r *Router) rewarm(m Message, moved bool) func(string, error) (string, error) {
	return func(text string, err error) (string, error) {
		if err == nil && moved {
			r.warm.drop(m.Key)
			r.warmUp(m)
		}
		return text, err
	}
}

// end ends m's conversation: its turn stopped, the rest let go (retire).
func (r *Router) end(ctx context.Context, m Message) string {
	conv, ok := r.convs.End(m.Key)
	if !ok {
		return "There is no conversation here to end."
	}
	r.stop(m.Key)
	ended := "Conversation ended. Its history stays with the CLI: /resume brings it back"
	if line := r.terminalLine(conv); line != "" {
		ended += ", and in a terminal: " + line
	}
	return ended + "." + r.retire(ctx, m.Key, conv)
}

// retire lets go of what belonged to conv, the conversation k had, once
// it ended or was replaced by a new one: its schedules are removed (they
// were set for it, not for whatever starts there next) and its worktree
// too when nothing in it is unmerged. It says what became of them.
func (r *Router) retire(ctx context.Context, k ConversationKey, conv Conversation) string {
	note := ""
	if n := r.convs.removeSchedulesOf(k); n > 0 {
		r.armSchedules()
		note = fmt.Sprintf("\nIts %d schedules are removed.", n)
		if n == 1 {
			note = "\nIts schedule is removed."
		}
	}
	return note + r.endWorktree(ctx, conv)
}

// stopCommand answers /stop.
func (r *Router) stopCommand(m Message) string {
	dropped, running := r.stop(m.Key)
	switch {
	case !running:
		return "Nothing is running."
	case dropped > 0:
		return fmt.Sprintf("Stopping the running turn; %d queued messages dropped.", dropped)
	}
	return "Stopping the running turn."
}

// pluginCommand runs one of a plugin's own commands (CommandProvider).
func (r *Router) pluginCommand(ctx context.Context, m Message, cmd Command) (string, error) {
	if p, ok := r.cfg.Plugins.Get(cmd.Plugin); ok {
		if cp, ok := p.(CommandProvider); ok {
			conv, ok := r.convs.Get(m.Key)
			if !ok || conv.Plugin != cmd.Plugin {
				conv = Conversation{}
			}
			return cp.RunCommand(ctx, conv, cmd)
		}
	}
	return "", Errorf("command %q is not implemented", cmd.Name)
}

func (r *Router) defaultWorkdir() string {
	if r.cfg.DefaultWorkdir != "" {
		return r.cfg.DefaultWorkdir
	}
	return r.cfg.Roots[0]
}

// userWorkdir resolves a user's path for m's conversation, against its
// current workdir, and checks it (the current workdir, for an empty
// path) against m's author's roots.
func (r *Router) userWorkdir(m Message, path string) (string, error) {
	wd := r.defaultWorkdir()
	if conv, ok := r.convs.Get(m.Key); ok && conv.Runner == "" {
		wd = conv.Workdir
	}
	if path != "" {
		var err error
		if wd, err = r.space(m).Resolve(path, wd); err != nil {
			return "", WorkError(err)
		}
	}
	if !r.mayWorkIn(m, wd) {
		return "", Errorf("workdir %q is outside %s; only admins may work in the other allowed roots", path, r.defaultRoot)
	}
	return wd, nil
}

// mayWorkIn reports whether m's author may work in the resolved directory
// wd.
func (r *Router) mayWorkIn(m Message, wd string) bool { return r.userRoots(m).Contains(wd) }

// isAdmin reports whether m's author is an admin of m's platform.
func (r *Router) isAdmin(m Message) bool { return r.cfg.Access.IsAdmin(m.Key.Platform, m.Author()) }

// userRoots are the roots m's author may work in (workspace.UserRoots).
func (r *Router) userRoots(m Message) Roots { return r.space(m).Roots }

// conversationWorkdir resolves a conversation's stored workdir again, for
// m's author, each time it is used: a root narrowed since, a symlink
// swapped in later, or a writer who is not an admin in an admin's shared
// thread must not run, list or resume anything outside their policy.
func (r *Router) conversationWorkdir(m Message, conv Conversation) (string, error) {
	if conv.Runner != "" {
		return "", Errorf("that works only for conversations on this machine; this one is on runner %s", conv.Runner)
	}
	return r.storedWorkdir(conv.Workdir, r.isAdmin(m))
}

// storedWorkdir is conversationWorkdir of a workdir here, for a user who
// is an admin or not.
func (r *Router) storedWorkdir(stored string, admin bool) (string, error) {
	wd, err := r.cfg.Roots.Resolve(stored, "")
	if err != nil {
		return "", Errorf("this conversation's workdir is no longer allowed: %v. Start a new conversation", err)
	}
	if !r.spaceOf(admin).Roots.Contains(wd) {
		return "", Errorf("this conversation works in %s, outside %s; only admins may work in the other allowed roots", wd, r.defaultRoot)
	}
	return wd, nil
}

// currentWorkdir is conversationWorkdir of m's conversation, or the
// default workdir when there is none.
func (r *Router) currentWorkdir(m Message) (string, error) {
	conv, ok := r.convs.Get(m.Key)
	if !ok {
		return r.defaultWorkdir(), nil
	}
	return r.conversationWorkdir(m, conv)
}

// userPlace resolves a path a user typed for m's conversation of
// pluginID: "runner:path" on that runner, any other here (userWorkdir).
// An empty path, in a conversation on a runner, is its workdir there.
func (r *Router) userPlace(ctx context.Context, m Message, pluginID, path string) (runner, wd string, err error) {
	if conv, ok := r.convs.Get(m.Key); ok && conv.Runner != "" && path == "" {
		path = conv.Shown(conv.Workdir)
	}
	if runner, rest, remote := r.remoteWorkdir(path); remote {
		wd, err = r.remoteStart(ctx, m, pluginID, runner, rest)
		return runner, wd, err
	}
	wd, err = r.userWorkdir(m, path)
	return "", wd, err
}

// start answers /<plugin> start. Where the platform opens a thread for a
// new conversation (ThreadOpener), the conversation moves there, and so
// does m: its replies go to the thread.
func (r *Router) start(ctx context.Context, a *attached, m *Message, cmd Command) (string, error) {
	p, _ := r.cfg.Plugins.Get(cmd.Plugin)
	path, worktree, name := startArgs(cmd.Arg)
	runner, wd, err := r.userPlace(ctx, *m, p.ID(), path)
	if err != nil {
		return "", err
	}
	now := r.clock.Now()
	conv := Conversation{Plugin: p.ID(), Runner: runner, Workdir: wd, Started: now, LastUsed: now}
	note, warning := "", ""
	if (worktree == nil && r.cfg.Worktrees) || (worktree != nil && *worktree) {
		if note, err = r.newWorktree(ctx, *m, &conv, name, worktree != nil); err != nil {
			return "", err
		}
	}
	r.openThread(ctx, a, m, conv.Shown(wd), p)
	if conv.Worktree == "" {
		warning = r.sharedWorkdir(m.Key, conv)
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
		replaced = fmt.Sprintf("\nThe %s conversation that was here has ended (/%s resume brings it back).%s", old.Plugin, old.Plugin, r.retire(ctx, m.Key, old))
	}
	r.convs.Put(m.Key, conv)
	return fmt.Sprintf("%s conversation started in %s.%s Just type to chat.%s%s", p.Name(), conv.Shown(conv.Workdir), note, replaced, warning), nil
}

// openThread moves m to a thread of its own where the platform opens one
// for a new conversation; nothing can refuse the start any more. A thread
// that cannot be opened leaves the conversation where it was started.
func (r *Router) openThread(ctx context.Context, a *attached, m *Message, workdir string, p Plugin) {
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

func (r *Router) setWorkdir(m Message, path string) (string, error) {
	conv, ok := r.convs.Get(m.Key)
	if !ok {
		return "", Errorf("no conversation here; start one with a workdir: /%s start <path>", r.cfg.Plugins.IDs()[0])
	}
	runner, wd, err := r.userPlace(context.Background(), m, conv.Plugin, path)
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

func (r *Router) status(m Message, all bool) (string, error) {
	if all {
		if !r.isAdmin(m) {
			return "", Errorf("/status all is for admins")
		}
		entries := r.convs.All()
		var b strings.Builder
		fmt.Fprintf(&b, "%d active conversations", len(entries))
		for _, e := range entries {
			fmt.Fprintf(&b, "\n%s: %s in %s, last used %s", e.Key, e.Plugin, e.Shown(e.Workdir), e.LastUsed.Format(time.DateTime))
		}
		return b.String(), nil
	}
	conv, ok := r.convs.Get(m.Key)
	if !ok {
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
	state := r.stateOf(m.Key)
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
	return out, nil
}
