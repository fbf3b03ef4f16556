package core

import ()

// queued is a message waiting for its turn, with its correlation id and
// the conversation it was written to: a message belongs to the
// conversation it was sent in, whatever happens to the chat meanwhile.
type queued struct {
	m    Message
	id   string
	conv Conversation
	// may is what m may do, decided as it arrived (Router.permitsOf).
	may permits
	// done is m's Done, called once the message is delivered or dropped.
	done func()
	// follow, for a turn an earlier process of the bot left running on a
	// runner, is what streams the rest of it (Runners.Unfinished).
	follow Plugin
	// saved, for a message whose files were saved for a running turn
	// that could not take it after all (steer), is its prompt and images
	// as they were saved: its turn saves nothing again.
	saved *Steering
	// notSteered says why the message was not added to the running turn
	// (Router.permitsOf), for the chat.
	notSteered string
	// side, for a turn of agents side by side (/ask, /review, /pair),
	// says which agent runs it and how (core/sidebyside.go).
	side *sideTurn
}

// finish calls every function in fs.
func finish(fs []func()) {
	for _, f := range fs {
		f()
	}
}

// finishAll calls done of every message in ms.
func finishAll(ms []queued) {
	for _, m := range ms {
		m.done()
	}
}

// errNoLongerWaiting answers a button of a message that no longer waits.
var errNoLongerWaiting = Errorf("that message is no longer waiting: it has run already, or was dropped")

// pluginOf is the plugin that runs qm's turn in conv.
func (qm queued) pluginOf(conv Conversation) string {
	if qm.side.helps() {
		return qm.side.helper
	}
	return conv.Plugin
}

// sessionOf is the session qm's turn continues in conv: a helper's own,
// else the conversation's.
func (qm queued) sessionOf(conv Conversation) string {
	if qm.side.helps() {
		return conv.helperSession(qm.side.helper)
	}
	return conv.SessionID
}

// applySide makes t the turn qm's side says: a helper's continues the
// helper's own session, with its plugin's own model and mode (the
// conversation's are its author's).
func (qm queued) applySide(t *Turn, conv Conversation) {
	s := qm.side
	if s == nil {
		return
	}
	t.ReadOnly = s.readOnly
	if s.helps() {
		t.SessionID, t.Model, t.Mode = qm.sessionOf(conv), "", ""
	}
}
