package mattermost_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/platforms/mattermost"
	"github.com/jake-bot/jake-bot/platforms/mattermost/mattermosttest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// guard bounds every wait, so a broken test fails instead of hanging.
const guard = 20 * time.Second

// testPlugin scripts turns: a prompt starting with "live" is handed to
// the test (Next); any other is answered at once with "echo: <prompt>".
// Every turn reports its session first.
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

// harness is the real router with the adapter, against the fake server:
// alice and bob are allowed, mallory is not.
type harness struct {
	t                   *testing.T
	fake                *mattermosttest.Server
	clock               *coretest.ManualClock // nil with a real plugin
	plugin              *testPlugin
	router              *core.Router
	adapter             *mattermost.Adapter
	root                string
	alice, bob, mallory mattermosttest.User
}

type setup struct {
	// buttons serves button presses (MATTERMOST_ACTIONS_URL).
	buttons bool
	limit   int
	before  func(*mattermosttest.Server)
	// plugin replaces the scripted test plugin, and workdir the temporary
	// root; with a real plugin the clock is an instant one.
	plugin  core.Plugin
	workdir string
	router  func(*core.RouterConfig)
}

func start(t *testing.T, s setup) *harness {
	t.Helper()
	fake := mattermosttest.New(t)
	h := &harness{t: t, fake: fake, plugin: newTestPlugin(),
		alice: fake.NewUser("alice"), bob: fake.NewUser("bob"), mallory: fake.NewUser("mallory")}
	var clock core.Clock = coretest.NewInstantClock()
	var plugin core.Plugin = s.plugin
	if plugin == nil {
		h.clock = coretest.NewManualClock()
		clock, plugin = h.clock, h.plugin
	}
	fake.SetClock(clock.Now)
	if s.before != nil {
		s.before(fake)
	}
	reg, err := core.NewRegistry(plugin)
	if err != nil {
		t.Fatal(err)
	}
	cfg := mattermost.Config{URL: fake.URL, Token: mattermosttest.Token,
		AllowedUsers: []string{h.alice.ID, h.bob.ID}, EditInterval: time.Second}
	opts := mattermost.Options{Plugins: []core.Plugin{plugin}, Clock: clock, MessageLimit: s.limit}
	if s.buttons {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		cfg.ActionsURL = "http://" + ln.Addr().String() + "/mattermost/actions"
		opts.Listener = ln
	}
	access := core.NewAccess()
	cfg.Grant(access)
	if s.workdir == "" {
		s.workdir = t.TempDir()
	}
	h.root = s.workdir
	roots, err := core.NewRoots([]string{s.workdir})
	if err != nil {
		t.Fatal(err)
	}
	logs := &testLog{w: t.Output()}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	rc := core.RouterConfig{Plugins: reg, Access: access, Roots: roots, Clock: clock, Logger: logger, Reactions: true}
	if s.router != nil {
		s.router(&rc)
	}
	h.router = core.NewRouter(ctx, rc, nil)
	opts.Lookup, opts.Logger = h.router, logger
	a, err := mattermost.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	h.adapter = a
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, h.router.Attach(a)) }()
	t.Cleanup(func() {
		if h.clock != nil {
			h.clock.Free()
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
		h.router.Shutdown()
		h.router.Wait()
		logs.close()
	})
	fake.WaitConnected(t)
	return h
}

// until moves the fake clock on whenever something waits on it, until
// cond holds: every wait (edit interval, Retry-After) passes without the
// test sleeping.
func (h *harness) until(what string, cond func() bool) {
	h.t.Helper()
	h.drive(what, 0, cond)
}

// drive is until, but moves the clock only for waits shorter than below
// (0: every wait), and returns the others, which stay pending. The clock
// moves to the earliest wait, never by the sum of everyone's waits: the
// router, the adapter's gate and the fake's rate limit share it, and the
// spacing of their calls is what each waited for.
func (h *harness) drive(what string, below time.Duration, cond func() bool) (pending []time.Duration) {
	h.t.Helper()
	timeout := time.After(guard)
	within := time.Duration(-1) // every wait
	if below > 0 {
		within = below - 1
	}
	for {
		changed := h.fake.Changed()
		if cond() {
			return pending
		}
		var waiting <-chan time.Duration
		if h.clock != nil {
			waiting = h.clock.Waiting()
		}
		select {
		case d := <-waiting:
			if below == 0 || d < below {
				h.clock.AdvanceWithin(within)
			} else {
				pending = append(pending, d)
			}
		case <-changed:
		case <-timeout:
			h.t.Fatalf("timed out waiting for %s; calls:\n%v", what, h.fake.Calls())
		}
	}
}

// startThread posts " /claude start" at the top of channel as u, and
// returns the thread (the post), once the bot said the conversation
// started.
func (h *harness) startThread(u mattermosttest.User, channel string) string {
	h.t.Helper()
	p := h.fake.Say(h.t, u, channel, "", " /claude start")
	h.waitReply(channel, p.ID, "conversation started")
	return p.ID
}

// waitReply waits until one of the bot's posts in the thread contains
// want, driving the clock, and returns the bot's posts there.
func (h *harness) waitReply(channel, thread, want string) []mattermosttest.Post {
	h.t.Helper()
	var replies []mattermosttest.Post
	h.until(fmt.Sprintf("a reply containing %q in %s/%s", want, channel, thread), func() bool {
		replies = h.fake.BotReplies(channel, thread)
		for _, p := range replies {
			if strings.Contains(p.Message, want) {
				return true
			}
		}
		return false
	})
	return replies
}

// waitTimer waits until something waits on the clock, and returns for
// how long.
func (h *harness) waitTimer() time.Duration {
	h.t.Helper()
	select {
	case d := <-h.clock.Waiting():
		return d
	case <-time.After(guard):
		h.t.Fatal("nothing waited on the clock")
		return 0
	}
}

// forgetTimers forgets the waits so far, so waitTimer sees the next one.
func (h *harness) forgetTimers() {
	for {
		select {
		case <-h.clock.Waiting():
		default:
			return
		}
	}
}

func messages(ps []mattermosttest.Post) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Message)
	}
	return out
}

// testLog is the test's output until the test ends: a retry the clock's
// Free let go may still log after that.
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
