package matrix

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/lanes"
)

// hintEvery bounds the hints, and the refusals of encrypted rooms, in
// one place.
const hintEvery = 10 * time.Minute

// Run checks the token (/account/whoami), then long-polls /sync until ctx
// ends, backing off when the homeserver fails; then it waits for the
// handlers it started. The first sync only learns where the timeline is
// (and the invitations waiting): what was said while the bot was away is
// not replayed. It returns an error when the homeserver refuses the token
// at start, or the token is another account's.
func (a *Adapter) Run(ctx context.Context, h core.Handler) error {
	who, err := a.cli.Whoami(ctx)
	if err != nil {
		return fmt.Errorf("matrix: whoami: %w", err)
	}
	if who.UserID != a.self {
		return fmt.Errorf("matrix: MATRIX_ACCESS_TOKEN is %s's, not MATRIX_USER_ID %s", who.UserID, a.self)
	}
	a.cli.DeviceID = who.DeviceID
	a.logger.Info("connected", "config", a.cfg, "device", who.DeviceID)
	var work lanes.PerKey[string]
	defer work.Close()
	since, failures := "", 0
	for ctx.Err() == nil {
		resp, err := a.cli.FullSyncRequest(ctx, mautrix.ReqSync{Timeout: int(a.syncTimeout / time.Millisecond), Since: since})
		if ctx.Err() != nil {
			break
		}
		if err != nil {
			err = a.apiError(err)
			failures++
			wait := min(time.Second<<min(failures-1, 6), time.Minute)
			if rl, ok := core.AsRateLimit(err); ok {
				wait = rl.RetryAfter
			}
			if errors.Is(err, mautrix.MUnknownToken) {
				a.logger.Error("the homeserver no longer accepts MATRIX_ACCESS_TOKEN", "err", err)
			} else {
				a.logger.Warn("sync", "err", err, "failures", failures)
			}
			a.Set(fmt.Errorf("sync: %w", err))
			sleep(ctx, a.clock, wait)
			continue
		}
		if failures > 0 {
			a.Set(nil)
		}
		failures = 0
		a.handleSync(ctx, resp, since == "", h, &work)
		since = resp.NextBatch
	}
	return nil
}

// handleSync handles one /sync answer: invitations, then each joined
// room's state and timeline. On the first, the timeline's messages are
// the past, only read for the room's state.
func (a *Adapter) handleSync(ctx context.Context, resp *mautrix.RespSync, first bool, h core.Handler, work *lanes.PerKey[string]) {
	for room, inv := range resp.Rooms.Invite {
		a.onInvite(ctx, room, inv.State.Events)
	}
	for room, joined := range resp.Rooms.Join {
		for _, ev := range joined.State.Events {
			a.onState(ctx, room, ev, first)
		}
		// A room the bot has just joined shows what was said before:
		// the past, as on the first sync.
		past := first || slices.ContainsFunc(joined.Timeline.Events, a.joinedNow)
		for _, ev := range joined.Timeline.Events {
			ev.RoomID = room
			if ev.StateKey != nil {
				a.onState(ctx, room, ev, first)
				if a.joinedNow(ev) {
					past = first
				}
				continue
			}
			if past || ev.Sender == a.self || !a.seen.Add(ev.ID.String(), struct{}{}) {
				continue
			}
			switch ev.Type {
			case event.EventMessage:
				a.onMessage(ctx, ev, h, work)
			case event.EventReaction:
				a.onReaction(ctx, ev, h, work)
			case event.EventEncrypted:
				a.refuseEncrypted(ctx, room, ev.Sender)
			}
		}
	}
}

// joinedNow reports whether ev is the bot's own join.
func (a *Adapter) joinedNow(ev *event.Event) bool {
	if ev.Type != event.StateMember || ev.GetStateKey() != a.self.String() || !parsed(ev) {
		return false
	}
	return ev.Content.AsMember().Membership == event.MembershipJoin
}

// parsed parses ev's content, once, and reports whether it could be.
func parsed(ev *event.Event) bool {
	err := ev.Content.ParseRaw(ev.Type)
	return err == nil || errors.Is(err, event.ErrContentAlreadyParsed)
}

// onInvite joins a room an allowed user invited the bot to, and rejects
// any other invitation.
func (a *Adapter) onInvite(ctx context.Context, room id.RoomID, state []*event.Event) {
	var inviter id.UserID
	for _, ev := range state {
		if ev.Type == event.StateMember && ev.GetStateKey() == a.self.String() {
			inviter = ev.Sender
		}
	}
	m := core.Message{Key: core.ConversationKey{Platform: Name, Channel: room.String()}, From: inviter.String()}
	if inviter == "" || !a.lookup.Admits(m) {
		a.logger.Info("rejecting an invitation", "room", room, "inviter", inviter)
		if _, err := a.cli.LeaveRoom(ctx, room); err != nil {
			a.logger.Warn("reject an invitation", "room", room, "err", a.apiError(err))
		}
		return
	}
	if _, err := a.cli.JoinRoomByID(ctx, room); err != nil {
		a.logger.Warn("join", "room", room, "inviter", inviter, "err", a.apiError(err))
		return
	}
	a.logger.Info("joined", "room", room, "inviter", inviter)
}

// onState notes what the adapter keeps of a room's state: whether it is
// encrypted (said once in the room when it becomes so), and who its
// members are (a room of two is a direct chat).
func (a *Adapter) onState(ctx context.Context, room id.RoomID, ev *event.Event, first bool) {
	switch ev.Type {
	case event.StateEncryption:
		a.encrypted.Set(room.String(), struct{}{})
		if !first {
			a.refuseEncrypted(ctx, room, ev.Sender)
		}
	case event.StateMember:
		a.members.Delete(room.String())
		if parsed(ev) {
			if mem := ev.Content.AsMember(); mem.Displayname != "" {
				a.names.Set(ev.GetStateKey(), mem.Displayname)
			}
		}
	}
}

// refuseEncrypted tells an allowed user in room, once every hintEvery,
// in plain text, that the bot cannot read encrypted rooms.
func (a *Adapter) refuseEncrypted(ctx context.Context, room id.RoomID, sender id.UserID) {
	m := core.Message{Key: core.ConversationKey{Platform: Name, Channel: room.String()}, From: sender.String()}
	if sender == a.self || !a.lookup.Admits(m) || !a.hinted.Take("encrypted/"+room.String()) {
		return
	}
	text := "This room is end-to-end encrypted, and jake-bot does not support encrypted rooms: it cannot read what is said here. Talk to it in a room without encryption (encryption cannot be turned off in a room: create a new one)."
	c := &event.MessageEventContent{MsgType: event.MsgNotice, Body: text, Mentions: &event.Mentions{}}
	if err := a.gate.wait(ctx); err != nil {
		return
	}
	if _, err := a.send(ctx, room.String(), event.EventMessage, c); err != nil {
		a.logger.Warn("refuse an encrypted room", "room", room, "err", err)
	}
}

// direct reports whether room is a direct chat: the bot and one person.
func (a *Adapter) direct(ctx context.Context, room string) bool {
	n, ok := a.members.Get(room)
	if !ok {
		resp, err := a.cli.JoinedMembers(ctx, id.RoomID(room))
		if err != nil {
			a.logger.Warn("joined members", "room", room, "err", a.apiError(err))
			return false
		}
		n = len(resp.Joined)
		a.members.Set(room, n)
	}
	return n == 2
}

// onMessage turns a message into a core.Message and hands it to its
// conversation's lane. In a direct chat the room is one conversation; in
// any other room a conversation is a thread, started by a command at the
// room's top level (the command's event is the thread's root), and a
// message in a thread is a turn where a conversation is.
func (a *Adapter) onMessage(ctx context.Context, ev *event.Event, h core.Handler, work *lanes.PerKey[string]) {
	if !parsed(ev) {
		return
	}
	c := ev.Content.AsMessage()
	if c.MsgType == event.MsgNotice || c.RelatesTo.GetReplaceID() != "" {
		return // another bot's, or an edit
	}
	room := ev.RoomID.String()
	if _, ok := a.encrypted.Get(room); ok {
		a.refuseEncrypted(ctx, ev.RoomID, ev.Sender)
		return
	}
	text, mentioned := a.clean(c)
	name, _ := a.names.Get(ev.Sender.String())
	m := core.Message{
		Key:      core.ConversationKey{Platform: Name, Channel: room, Thread: c.RelatesTo.GetThreadParent().String()},
		ID:       ev.ID.String(),
		UserName: name,
		Text:     text,
		From:     ev.Sender.String(),
		Files:    a.attachments(c),
	}
	if len(m.Files) > 0 {
		m.Text = ""
		if c.FileName != "" && c.Body != c.FileName {
			m.Text = c.Body // a caption
		}
	}
	lane := func(m core.Message, f func()) { work.Do(m.Key.Channel+"/"+m.Key.Thread, f) }
	switch {
	case a.direct(ctx, room):
		m.Key.Thread = ""
		lane(m, func() {
			if _, ok := a.lookup.Conversation(m.Key); ok || core.IsCommand(m.Text) {
				h(ctx, m)
				return
			}
			a.hint(ctx, m, "")
		})
	case m.Key.Thread == "" && core.IsCommand(m.Text):
		m.Key.Thread = m.ID
		lane(m, func() { h(ctx, m) })
	case m.Key.Thread == "":
		if mentioned { // the top of a room is people talking
			m.Key.Thread = m.ID
			lane(m, func() { a.hint(ctx, m, "") })
		}
	default:
		lane(m, func() {
			if _, ok := a.lookup.Conversation(m.Key); ok || core.IsCommand(m.Text) {
				h(ctx, m)
				return
			}
			if mentioned {
				a.hint(ctx, m, "No conversation in this thread (the bot may have restarted).")
			}
		})
	}
}

// hint tells someone the router serves how to start a conversation where
// m was written; at most once per place every hintEvery.
func (a *Adapter) hint(ctx context.Context, m core.Message, why string) {
	if !a.lookup.Admits(m) || !a.hinted.Take(m.Key.Channel+"/"+m.Key.Thread) {
		return
	}
	text := strings.TrimSpace(fmt.Sprintf("%s To start a conversation, send `/%s start [workdir]` (Element asks whether to send an unknown command as a message: it is one); in a room it lives in that message's thread. `/%s resume` continues an earlier one.",
		why, a.plugin, a.plugin))
	pages := a.Render([]core.ResponseBlock{{Kind: core.BlockText, Text: text}})
	if len(pages) == 0 || a.gate.wait(ctx) != nil {
		return
	}
	if _, err := a.Send(ctx, m.Target(), pages[0]); err != nil {
		a.logger.Warn("hint", "room", m.Key.Channel, "err", err)
	}
}

// clean returns a message's text without a leading mention of the bot
// ("jakebot: /status", as clients write a pill), and whether the message
// mentions the bot at all.
func (a *Adapter) clean(c *event.MessageEventContent) (string, bool) {
	mentioned := c.Mentions != nil && c.Mentions.Has(a.self)
	text := strings.TrimSpace(c.Body)
	local := strings.TrimPrefix(strings.SplitN(a.self.String(), ":", 2)[0], "@")
	name, _ := a.names.Get(a.self.String())
	for _, prefix := range []string{a.self.String(), name, local} {
		if prefix == "" || len(text) <= len(prefix) || !strings.EqualFold(text[:len(prefix)], prefix) {
			continue
		}
		if rest := text[len(prefix):]; strings.IndexAny(rest[:1], " :,") == 0 {
			return strings.TrimLeft(rest, " :,"), true
		}
	}
	return text, mentioned || strings.Contains(c.Body, a.self.String())
}
