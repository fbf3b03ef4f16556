package matrix_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/matrix"
	"github.com/jake-bot/jake-bot/platforms/matrix/matrixtest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// testPlugin scripts turns: a prompt starting with "live" is handed to
// the test (Next); any other is answered at once with "echo: <prompt>".
type testPlugin struct{ *plugintest.Scripted }

func newTestPlugin() *testPlugin {
	p := &testPlugin{Scripted: &plugintest.Scripted{}}
	p.Script = p.run
	return p
}

func (p *testPlugin) run(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	token := p.Session(t)
	emit(core.Event{Kind: core.EventSession, SessionID: token})
	if strings.HasPrefix(t.Prompt, "live") {
		res, err := p.HandOver(ctx, t, emit)
		res.SessionID = token
		return res, err
	}
	emit(core.TextEvent("echo: " + t.Prompt))
	return core.TurnResult{SessionID: token, Duration: time.Second}, nil
}

// harness is the real router with the adapter, against a real Dendrite:
// alice and bob are allowed, mallory is not. Each person's client watches
// its rooms through /sync.
type harness struct {
	t                   *testing.T
	server              *matrixtest.Server
	plugin              *testPlugin
	router              *core.Router
	adapter             *matrix.Adapter
	bot                 matrixtest.User
	alice, bob, mallory matrixtest.User
	seen                *matrixtest.Timeline // alice's
}

func start(t *testing.T) *harness {
	t.Helper()
	srv := matrixtest.Start(t, "alice", "bob", "mallory")
	h := &harness{t: t, server: srv, plugin: newTestPlugin(),
		bot: srv.Register(t, "jakebot"), alice: srv.Register(t, "alice"), bob: srv.Register(t, "bob"), mallory: srv.Register(t, "mallory")}
	h.seen = h.alice.Watch(t)
	reg, err := core.NewRegistry(h.plugin)
	if err != nil {
		t.Fatal(err)
	}
	cfg := matrix.Config{Homeserver: srv.URL, UserID: h.bot.ID.String(), AccessToken: core.Secret(h.bot.Token),
		AllowedUsers: []string{h.alice.ID.String(), h.bob.ID.String()}, EditInterval: 50 * time.Millisecond}
	access := core.NewAccess()
	cfg.Grant(access)
	root := t.TempDir()
	roots, err := core.NewRoots([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	logs := &testLog{w: t.Output()}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	h.router = core.NewRouter(ctx, core.RouterConfig{Plugins: reg, Access: access, Roots: roots, Logger: logger, Reactions: true}, nil)
	a, err := matrix.New(cfg, matrix.Options{Plugins: []core.Plugin{h.plugin}, Lookup: h.router, Logger: logger, SyncTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	h.adapter = a
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, h.router.Attach(a)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
		h.router.Shutdown()
		h.router.Wait()
		logs.close()
	})
	return h
}

// room has alice create a room with bob (who joins) and invite the bot,
// and waits until the bot has joined.
func (h *harness) room() id.RoomID {
	h.t.Helper()
	ctx := context.Background()
	resp, err := h.alice.Client.CreateRoom(ctx, &mautrix.ReqCreateRoom{Preset: "private_chat", Invite: []id.UserID{h.bob.ID, h.bot.ID}})
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := h.bob.Client.JoinRoomByID(ctx, resp.RoomID); err != nil {
		h.t.Fatal(err)
	}
	h.joined(resp.RoomID)
	return resp.RoomID
}

// joined waits until alice sees the bot join room.
func (h *harness) joined(room id.RoomID) {
	h.t.Helper()
	h.seen.Until(h.t, "the bot to join", func() bool {
		for _, ev := range h.seen.Events(room) {
			if ev.Type == event.StateMember && ev.GetStateKey() == h.bot.ID.String() && ev.Content.AsMember().Membership == event.MembershipJoin {
				return true
			}
		}
		return false
	})
}

// say sends text as u in room, in thread when it is set, and returns the
// event's id.
func (h *harness) say(u matrixtest.User, room id.RoomID, thread id.EventID, text string) id.EventID {
	h.t.Helper()
	c := &event.MessageEventContent{MsgType: event.MsgText, Body: text}
	if thread != "" {
		c.RelatesTo = (&event.RelatesTo{}).SetThread(thread, thread)
	}
	resp, err := u.Client.SendMessageEvent(context.Background(), room, event.EventMessage, c)
	if err != nil {
		h.t.Fatalf("%s says %q: %v", u.ID, text, err)
	}
	return resp.EventID
}

// startThread has alice send "/claude start" at the top of room, and
// returns the thread (her message), once the bot said the conversation
// started there.
func (h *harness) startThread(room id.RoomID) id.EventID {
	h.t.Helper()
	root := h.say(h.alice, room, "", "/claude start")
	h.waitReply(room, root, "conversation started")
	return root
}

// botMessages returns the bot's messages in room's thread ("" for the
// top level), as alice's client shows them.
func (h *harness) botMessages(room id.RoomID, thread id.EventID) []matrixtest.Message {
	var out []matrixtest.Message
	for _, m := range h.seen.Messages(room) {
		if m.Sender == h.bot.ID && m.Thread == thread {
			out = append(out, m)
		}
	}
	return out
}

// waitReply waits until one of the bot's messages in the thread holds
// want in its body, and returns the bot's messages there.
func (h *harness) waitReply(room id.RoomID, thread id.EventID, want string) []matrixtest.Message {
	h.t.Helper()
	var got []matrixtest.Message
	h.seen.Until(h.t, "a reply containing "+want, func() bool {
		got = h.botMessages(room, thread)
		for _, m := range got {
			if strings.Contains(m.Content.Body, want) {
				return true
			}
		}
		return false
	})
	return got
}

// message returns the message id in room as alice's client shows it.
func (h *harness) message(room id.RoomID, eventID id.EventID) matrixtest.Message {
	for _, m := range h.seen.Messages(room) {
		if m.ID == eventID {
			return m
		}
	}
	return matrixtest.Message{}
}

func bodies(ms []matrixtest.Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Content.Body)
	}
	return out
}

// testLog is the test's output until the test ends.
type testLog struct {
	mu     sync.Mutex
	w      io.Writer
	closed bool
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return len(p), nil
	}
	return l.w.Write(p)
}

func (l *testLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
}
