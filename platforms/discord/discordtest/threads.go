package discordtest

import (
	"encoding/json"
	"net/http"
	"slices"
)

// startThread answers POST channels/<parent>/threads: a public thread the
// bot owns. Its THREAD_CREATE, then the OnThreadStart hooks, run before
// the call is answered, as Discord's gateway may well be ahead of its
// REST answer; d.mu is held.
func (d *Server) startThread(parent string, c Call) restReply {
	p, ok := d.channels[parent]
	if !ok {
		return notFound("Channel", 10003)
	}
	if p.Type != TextChannel {
		return replyWith(http.StatusBadRequest, apiError{Message: "Cannot execute action on this channel type", Code: 50024})
	}
	var b struct {
		Name string `json:"name"`
		Type int    `json:"type"`
	}
	if err := json.Unmarshal(c.Body, &b); err != nil || b.Name == "" || len([]rune(b.Name)) > 100 {
		return replyWith(http.StatusBadRequest, apiError{Message: "Invalid Form Body", Code: 50035})
	}
	if b.Type == 0 {
		b.Type = ThreadChannel
	}
	th := &Channel{ID: d.newID(), Type: b.Type, GuildID: p.GuildID, ParentID: parent, Name: b.Name, OwnerID: d.BotID}
	d.channels[th.ID] = th
	created, hooks := *th, slices.Clone(d.threadHooks)
	rep := replyWith(http.StatusCreated, th)
	rep.after = func() {
		d.Dispatch("THREAD_CREATE", threadCreate(created))
		for _, f := range hooks {
			f(created)
		}
	}
	return rep
}

// threadCreate is a THREAD_CREATE payload: the thread, newly created.
func threadCreate(th Channel) map[string]any {
	return map[string]any{"id": th.ID, "type": th.Type, "guild_id": th.GuildID, "parent_id": th.ParentID,
		"name": th.Name, "owner_id": th.OwnerID, "newly_created": true}
}

// OnThreadStart makes the fake call f each time the bot starts a thread:
// once the thread exists and its THREAD_CREATE is dispatched, before the
// bot's call is answered. What f dispatches (a user's first words in the
// thread, followed by Sync) thus reaches the bot before it even knows the
// thread's id.
func (d *Server) OnThreadStart(f func(thread Channel)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.threadHooks = append(d.threadHooks, f)
}

// NewThread returns a public thread in parent that owner (a user's id, or
// BotID) opened earlier: one the bot opened before it restarted, or a
// user's own. No event is dispatched: it is not new.
func (d *Server) NewThread(owner, parent, name string) Channel {
	d.mu.Lock()
	defer d.mu.Unlock()
	th := &Channel{ID: d.newID(), Type: ThreadChannel, GuildID: d.guildOf(parent), ParentID: parent, Name: name, OwnerID: owner}
	d.channels[th.ID] = th
	return *th
}

// Sync returns once the client has handled every event dispatched before
// it. It asks for a heartbeat (op 1), which discordgo answers from its
// read loop once the events before have been handled (the adapter handles
// them in that loop, in order). It asks twice, since a heartbeat of the
// client's own may come in between: at Discord's interval, never two.
// It may be called from an OnThreadStart hook; it reports a timeout with
// t.Errorf.
func (d *Server) Sync() {
	d.t.Helper()
	before := d.Gateway().Heartbeats
	d.gw.mu.Lock()
	c := d.gw.conn
	for range 2 {
		if c != nil {
			_ = c.send(frame{Op: opHeartbeat})
		}
	}
	d.gw.mu.Unlock()
	if c == nil {
		d.t.Errorf("fake discord: Sync with no client connected")
		return
	}
	if !d.changes.WaitFor(func() bool { return d.Gateway().Heartbeats >= before+2 }) {
		d.t.Errorf("fake discord: timed out waiting for the client's heartbeats")
	}
}
