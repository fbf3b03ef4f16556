package telegram

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/platforms/internal/fakeserver"
	"github.com/jake-bot/jake-bot/platforms/telegram/telegramtest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

var (
	alice = telegramtest.User{ID: 1001, FirstName: "Alice", Username: "alice"}
	carol = telegramtest.User{ID: 1003, FirstName: "Carol"}
	bob   = telegramtest.User{ID: 2002, FirstName: "Bob"} // not allowed
	team  = telegramtest.Chat{ID: -100123, Type: "supergroup", Title: "Team", IsForum: true}
)

// newScripted is a plugin that hands every turn to the test (nextTurn),
// which feeds it event by event.
func newScripted() *plugintest.Scripted {
	p := &plugintest.Scripted{}
	p.Script = p.HandOver
	return p
}

// turn is a turn handed to the test.
type turn struct {
	*plugintest.LiveTurn
	t *testing.T
	// took is the duration the turn reports; zero means 2s.
	took time.Duration
}

func (tr *turn) say(text string) {
	tr.t.Helper()
	tr.Emit(tr.t, core.TextEvent(text))
}

// end ends the turn in its session, costing a cent.
func (tr *turn) end() {
	tr.t.Helper()
	tr.End(tr.t, core.TurnResult{SessionID: "session-" + tr.Key.Thread + tr.Key.User, Duration: cmp.Or(tr.took, 2*time.Second), CostUSD: 0.01})
}

// syncBuffer collects log output from many goroutines.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed fakeserver.Signal
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.changed.Notify()
	return s.b.Write(p)
}

// waitFor waits until the log holds text, and reports whether it did
// within fakeserver.WaitLimit.
func (s *syncBuffer) waitFor(text string) bool {
	return s.changed.WaitFor(func() bool { return strings.Contains(s.String(), text) })
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// harness runs the real router with the adapter against the fake Bot API.
type harness struct {
	t      *testing.T
	srv    *telegramtest.Server
	clock  *coretest.ManualClock
	plugin *plugintest.Scripted
	took   time.Duration // what every turn reports; zero means 2s
	// drive bounds how far ahead a wait may be for until and nextTurn
	// to move the clock to it (negative: any); a longer one, such as a
	// schedule's, stays pending until the test advances the clock.
	drive  time.Duration
	bot    *Adapter
	router *core.Router
	logs   *syncBuffer
	cancel context.CancelFunc
	done   chan error
	root   string // the allowed root, the default workdir
}

func newHarness(t *testing.T, configure ...func(*Config, *Options)) *harness {
	t.Helper()
	return newHarnessRouting(t, nil, configure...)
}

// newHarnessRouting is newHarness with the router's configuration
// adjusted by route too.
func newHarnessRouting(t *testing.T, route func(*core.RouterConfig), configure ...func(*Config, *Options)) *harness {
	t.Helper()
	h := &harness{t: t, srv: telegramtest.New(t), clock: coretest.NewManualClock(), plugin: newScripted(), logs: &syncBuffer{}, drive: -1}
	h.srv.Now = h.clock.Now
	logger := slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg := Config{
		Token:        telegramtest.Token,
		AllowedUsers: UserIDs{alice.ID, carol.ID},
		APIEndpoint:  h.srv.Endpoint(),
	}
	opts := Options{Plugins: []core.Plugin{h.plugin}, Clock: h.clock, Logger: logger}
	for _, f := range configure {
		f(&cfg, &opts)
	}
	bot, err := New(cfg, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	h.bot = bot
	reg, err := core.NewRegistry(opts.Plugins...)
	if err != nil {
		t.Fatal(err)
	}
	access := core.NewAccess()
	cfg.Grant(access)
	roots, err := core.NewRoots([]string{t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	h.root = roots[0]
	ctx, cancel := context.WithCancel(context.Background())
	rc := core.RouterConfig{Plugins: reg, Access: access, Roots: roots, Clock: h.clock, Logger: logger}
	if route != nil {
		route(&rc)
	}
	h.router = core.NewRouter(context.Background(), rc, nil)
	handler := h.router.Attach(bot)
	h.cancel = cancel
	h.done = make(chan error, 1)
	go func() { h.done <- bot.Run(ctx, handler) }()
	t.Cleanup(h.close)
	return h
}

// close stops the adapter and the router, and checks that the token never
// reached the logs.
func (h *harness) close() {
	h.clock.Free()
	h.stop()
	h.router.Shutdown()
	h.router.Wait()
	if strings.Contains(h.logs.String(), telegramtest.Token) {
		h.t.Errorf("the bot token appears in the logs:\n%s", h.logs.String())
	}
	if v := h.srv.Violations(); len(v) > 0 {
		h.t.Errorf("writes during flood control: %+v", v)
	}
}

// stop cancels Run and waits for it to return.
func (h *harness) stop() {
	h.cancel()
	select {
	case err := <-h.done:
		if err != nil {
			h.t.Errorf("Run: %v", err)
		}
		h.done <- nil // later calls return at once
	case <-time.After(30 * time.Second):
		h.t.Fatal("Run did not return after cancel")
	}
}

// until waits for cond, driving the fake clock: whenever the bot waits on
// a timer (within drive), the clock jumps to it. It jumps even while a
// write is on its way (the poll loop waits on the clock whenever an update
// is being handled), so the fake may stamp a write a second later than it
// left: check the spacing of writes as checkRate does, not pair by pair.
func (h *harness) until(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.After(90 * time.Second) // a failure guard: a cold CLI start is slow
	for {
		srvCh, clkCh := h.srv.Changed(), h.clock.Waiting()
		if cond() {
			return
		}
		if h.clock.AdvanceWithin(h.drive) {
			continue
		}
		select {
		case <-srvCh:
		case <-clkCh:
		case <-deadline:
			h.t.Fatalf("timed out waiting for %s; messages: %s", what, h.dump())
		}
	}
}

// nextTurn waits for the plugin to start a turn.
func (h *harness) nextTurn() *turn {
	h.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case lt := <-h.plugin.Handed():
			return &turn{LiveTurn: lt, t: h.t, took: h.took}
		case <-h.srv.Changed():
		case <-h.clock.Waiting():
		case <-deadline:
			h.t.Fatalf("no turn started; messages: %s", h.dump())
		}
		h.clock.AdvanceWithin(h.drive)
	}
}

// says makes user write text in chat (and topic) and waits until the
// bot has written something new in that chat.
func (h *harness) says(chat telegramtest.Chat, from telegramtest.User, topic int, text string) {
	h.t.Helper()
	before := h.writes(chat.ID)
	h.srv.UserSays(chat, from, topic, text)
	h.until(fmt.Sprintf("a reply to %q", text), func() bool { return h.writes(chat.ID) > before })
}

// writes counts the successful sendMessage and editMessageText calls to
// chat.
func (h *harness) writes(chat int64) int {
	n := 0
	for _, c := range h.srv.Calls("sendMessage", "editMessageText") {
		if c.Params.Get("chat_id") == strconv.FormatInt(chat, 10) && c.Error == "" {
			n++
		}
	}
	return n
}

// last returns the plain text of the bot's newest message in chat.
func (h *harness) last(chat int64) string {
	ms := h.srv.Messages(chat)
	if len(ms) == 0 {
		return ""
	}
	return plain(h.t, ms[len(ms)-1])
}

func plain(t *testing.T, m telegramtest.Message) string {
	t.Helper()
	if m.ParseMode != "HTML" {
		return m.Text
	}
	s, err := telegramtest.ParseHTML(m.Text)
	if err != nil {
		t.Fatalf("message %d is not valid Telegram HTML: %v\n%s", m.ID, err, m.Text)
	}
	return s
}

func (h *harness) dump() string {
	var b strings.Builder
	for _, c := range h.srv.Calls() {
		if c.Method != "getUpdates" {
			fmt.Fprintf(&b, "\n  %s %s chat=%s thread=%s %q %s", c.At.Format("15:04:05.000"), c.Method, c.Params.Get("chat_id"), c.Params.Get("message_thread_id"), core.Shorten(c.Params.Get("text"), 80), c.Error)
		}
	}
	return b.String()
}
