package slack_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/platforms/slack"
	"github.com/jake-bot/jake-bot/platforms/slack/slacktest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// Users of the fake workspace.
const (
	alice   = "UALICE"
	bob     = "UBOB"
	mallory = "UMALLORY"
	general = "CGENERAL"
	mention = "<@" + slacktest.BotUser + ">"
)

// guard bounds every wait, so a broken test fails instead of hanging.
const guard = 20 * time.Second

// testPlugin scripts turns: a prompt starting with "live" is handed to
// the test (Next); any other is answered at once with "echo: <prompt>",
// or with answer's events when it is set. Every turn reports its session
// first.
type testPlugin struct {
	*plugintest.Scripted
	answer func(prompt string) []core.Event
}

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
	events := []core.Event{core.TextEvent("echo: " + t.Prompt)}
	if p.answer != nil {
		events = p.answer(t.Prompt)
	}
	for _, ev := range events {
		emit(ev)
	}
	return core.TurnResult{SessionID: token, Duration: time.Second}, nil
}

// harness is the real router with the adapter, against the fake Slack.
type harness struct {
	t    *testing.T
	fake *slacktest.Server
	// clock is the manual clock of tests with the scripted plugin; nil
	// with a real plugin.
	clock  *coretest.ManualClock
	plugin *testPlugin
	// drive bounds the waits until moves the clock to (zero: any).
	drive   time.Duration
	router  *core.Router
	adapter *slack.Adapter
	root    string // the allowed root, the default workdir
}

type setup struct {
	limit  int
	before func(*slacktest.Server)
	// plugin replaces the scripted test plugin, and workdir the temporary
	// root; with a real plugin the clock is an instant one.
	plugin  core.Plugin
	workdir string
	// router adjusts the router's configuration.
	router func(*core.RouterConfig)
	// steerable makes the scripted plugin's live turns take messages
	// into them (plugintest.Scripted.Steerable).
	steerable bool
	// drive, when set, leaves pending the waits longer than it, such as
	// a schedule's, which the test then advances to itself.
	drive time.Duration
}

func start(t *testing.T, s setup) *harness {
	t.Helper()
	fake := slacktest.New(t)
	if s.before != nil {
		s.before(fake)
	}
	h := &harness{t: t, fake: fake, plugin: newTestPlugin(), drive: s.drive}
	h.plugin.Steerable = s.steerable
	var clock core.Clock = coretest.NewInstantClock()
	var plugin core.Plugin = s.plugin
	if plugin == nil {
		h.clock = coretest.NewManualClock()
		clock, plugin = h.clock, h.plugin
	}
	fake.SetClock(clock.Now)
	reg, err := core.NewRegistry(plugin)
	if err != nil {
		t.Fatal(err)
	}
	cfg := slack.Config{
		AppToken: slacktest.AppToken, BotToken: slacktest.BotToken,
		AllowedUsers: []string{alice, bob}, EditInterval: time.Second, APIURL: fake.URL,
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
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	rc := core.RouterConfig{Plugins: reg, Access: access, Roots: roots, Clock: clock, Logger: logger}
	if s.router != nil {
		s.router(&rc)
	}
	h.router = core.NewRouter(ctx, rc, nil)
	a, err := slack.New(cfg, slack.Options{Plugins: []core.Plugin{plugin}, Lookup: h.router, MessageLimit: s.limit, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	h.adapter = a
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, h.router.Attach(a)) }()
	t.Cleanup(func() {
		if h.clock != nil {
			// A reply may still wait on the clock (its last edit): the
			// test is over, so every wait is.
			h.clock.Free()
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
		h.router.Shutdown()
		h.router.Wait()
	})
	fake.WaitConnected(t)
	return h
}

// until moves the fake clock on whenever the coordinator waits on it,
// until cond holds: every wait (edit interval, Retry-After) passes without
// the test sleeping.
func (h *harness) until(what string, cond func() bool) {
	h.t.Helper()
	timeout := time.After(guard)
	for {
		changed := h.fake.Changed()
		if cond() {
			return
		}
		var waiting <-chan time.Duration
		if h.clock != nil {
			waiting = h.clock.Waiting()
		}
		select {
		case d := <-waiting:
			if h.drive == 0 || d <= h.drive {
				h.clock.Advance(d)
			}
		case <-changed:
		case <-timeout:
			h.t.Fatalf("timed out waiting for %s; calls:\n%v", what, h.fake.Calls())
		}
	}
}

// startThread runs /claude start in channel as user and returns the
// thread, once the bot has said the conversation started.
func (h *harness) startThread(user, channel string) string {
	h.t.Helper()
	before := len(h.fake.Replies(channel, ""))
	env := h.fake.SlashCommand(h.t, user, channel, "/claude", "start")
	h.fake.WaitAck(h.t, env)
	var parent slacktest.Message
	h.fake.WaitFor(h.t, "the thread parent", func() bool {
		top := h.fake.Replies(channel, "")
		if len(top) > before {
			parent = top[before]
			return true
		}
		return false
	})
	if want := "<@" + user + "> `/claude start`"; parent.Text != want {
		h.t.Errorf("thread parent = %q, want %q", parent.Text, want)
	}
	h.waitReply(channel, parent.TS, "conversation started")
	return parent.TS
}

// waitTimer waits until the coordinator waits on the clock, and returns
// for how long.
func (h *harness) waitTimer() time.Duration {
	h.t.Helper()
	select {
	case d := <-h.clock.Waiting():
		return d
	case <-time.After(guard):
		h.t.Fatal("the coordinator never waited on the clock")
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

// waitReply waits until one of the bot's messages in thread contains
// want, driving the clock, and returns the thread's replies.
func (h *harness) waitReply(channel, thread, want string) []slacktest.Message {
	h.t.Helper()
	var replies []slacktest.Message
	h.until(fmt.Sprintf("a reply containing %q in %s/%s", want, channel, thread), func() bool {
		replies = h.fake.Replies(channel, thread)
		for _, m := range replies {
			if strings.Contains(m.Text, want) {
				return true
			}
		}
		return false
	})
	return replies
}

// texts returns the messages' texts.
func texts(ms []slacktest.Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Text)
	}
	return out
}
