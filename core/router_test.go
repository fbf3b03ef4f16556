package core_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/bot/cronexpr"
	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/platforms/platformtest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// echo answers with the prompt and a new token.
func echo(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	emit(core.TextEvent("echo: " + t.Prompt))
	return core.TurnResult{SessionID: "tok-" + t.Prompt}, nil
}

type routerFixture struct {
	t      testing.TB
	router *core.Router
	rec    *platformtest.Recorder
	plugin *plugintest.Scripted
	handle core.Handler
	root   string
}

func newRouterFixture(t testing.TB, run func(context.Context, core.Turn, func(core.Event)) (core.TurnResult, error)) *routerFixture {
	t.Helper()
	return newRouterFixtureWith(t, run, nil, nil)
}

// newRouterFixtureWith is newRouterFixture with a clock (nil: instant) and
// a function that adjusts the router's configuration.
func newRouterFixtureWith(t testing.TB, run func(context.Context, core.Turn, func(core.Event)) (core.TurnResult, error),
	clock core.Clock, configure func(*core.RouterConfig)) *routerFixture {
	t.Helper()
	return newRouterFixtureLimited(t, run, clock, configure, core.Limits{FinalOnly: true})
}

// newRouterFixtureLimited is newRouterFixtureWith on a platform with lim
// (the others get only final replies).
func newRouterFixtureLimited(t testing.TB, run func(context.Context, core.Turn, func(core.Event)) (core.TurnResult, error),
	clock core.Clock, configure func(*core.RouterConfig), lim core.Limits) *routerFixture {
	t.Helper()
	if clock == nil {
		clock = coretest.NewInstantClock()
	}
	p := &plugintest.Scripted{PluginID: "fake", PluginName: "Fake fake", Script: run}
	reg, err := core.NewRegistry(p)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	roots, err := core.NewRoots([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	access := core.NewAccess()
	access.Allow("fake", "alice", "bob")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cfg := core.RouterConfig{Plugins: reg, Access: access, Roots: roots, Clock: clock, QueueLimit: 2, ParseCron: cronexpr.Parse}
	if configure != nil {
		configure(&cfg)
	}
	router := core.NewRouter(ctx, cfg, nil)
	rec := platformtest.NewRecorder(clock, lim)
	return &routerFixture{t: t, router: router, rec: rec, plugin: p, handle: router.Attach(rec), root: roots[0]}
}

func (f *routerFixture) say(user, text string) {
	f.handle(context.Background(), core.Message{Key: core.ConversationKey{Platform: "fake", User: user, Channel: "c"}, Text: text})
}

// next returns the next message the bot wrote.
func (f *routerFixture) next() string {
	f.t.Helper()
	return (<-f.rec.Written()).Text
}

func (f *routerFixture) expect(substr string) {
	f.t.Helper()
	if got := f.next(); !strings.Contains(got, substr) {
		f.t.Fatalf("bot wrote %q, want it to contain %q", got, substr)
	}
}

// expectHelp reads /help's answer, which may come in more than one
// message, and checks that it contains substr.
func (f *routerFixture) expectHelp(substr string) {
	f.t.Helper()
	var all strings.Builder
	for !strings.Contains(all.String(), "Once a conversation is started") {
		all.WriteString(f.next())
	}
	if !strings.Contains(all.String(), substr) {
		f.t.Fatalf("/help's answer is %q, want it to contain %q", all.String(), substr)
	}
}

func TestRouterConversationFlow(t *testing.T) {
	t.Parallel()
	f := newRouterFixture(t, echo)
	f.say("alice", "hello")
	f.expect("No conversation here yet. Start one with /fake start")
	f.say("alice", "/fake start")
	f.expect("Fake fake conversation started in " + f.root)
	f.say("alice", "one")
	f.expect("echo: one")
	f.router.Wait()
	f.say("alice", "two")
	if turn := <-f.plugin.Started(); turn.SessionID != "" || turn.Prompt != "one" {
		t.Fatalf("first turn = %+v, want a new session", turn)
	}
	if turn := <-f.plugin.Started(); turn.SessionID != "tok-one" {
		t.Fatalf("second turn resumes %q, want the first turn's token", turn.SessionID)
	}
	f.expect("echo: two")
	f.router.Wait()
	f.say("alice", "/status")
	f.expect("Session: tok-two")
	f.say("bob", "/status")
	f.expect("No conversation here yet")
	f.say("alice", "/conversation end")
	f.expect("Conversation ended")
	f.say("alice", "three")
	f.expect("No conversation here yet")
}

func TestRouterRefusesUnknownUsersAndCommands(t *testing.T) {
	t.Parallel()
	f := newRouterFixture(t, echo)
	f.say("mallory", "/fake start")
	f.expect("not on this bot's allow-list. Your fake user id is mallory")
	for range 3 {
		f.say("mallory", "let me in") // told once, not at every line
	}
	f.say("alice", "/frobnicate")
	f.expect("unknown command /frobnicate")
	f.say("alice", "/fake start ../../..")
	f.expect("outside the allowed roots")
	f.say("alice", "/fake resume ; rm -rf ~")
	f.expect("usage: /fake resume <id>")
}

func TestRouterQueuesAndStops(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var mu sync.Mutex
	var order []string
	f := newRouterFixture(t, func(ctx context.Context, turn core.Turn, emit func(core.Event)) (core.TurnResult, error) {
		mu.Lock()
		order = append(order, turn.Prompt)
		mu.Unlock()
		if turn.Prompt == "slow" {
			<-ctx.Done()
			return core.TurnResult{}, ctx.Err()
		}
		<-release
		return echo(ctx, turn, emit)
	})
	f.say("alice", "/fake start")
	f.expect("started")
	f.say("alice", "first")
	<-f.plugin.Started()
	f.say("alice", "second")
	f.expect("Queued (1 waiting)")
	f.say("alice", "third")
	f.expect("Queued (2 waiting)")
	f.say("alice", "fourth")
	f.expect("this one was not queued")
	close(release)
	f.expect("echo: first")
	f.expect("echo: second")
	f.expect("echo: third")
	f.router.Wait()
	if want := "first,second,third"; strings.Join(order, ",") != want {
		t.Fatalf("turns ran in order %v, want %s", order, want)
	}

	f.say("alice", "slow")
	<-f.plugin.Started() // empties the queue: "second", "third"
	<-f.plugin.Started()
	<-f.plugin.Started()
	f.say("alice", "/stop")
	got := []string{f.next(), f.next()}
	joined := strings.Join(got, "\n")
	if !strings.Contains(joined, "Stopping the running turn") || !strings.Contains(joined, "Stopped.") {
		t.Fatalf("after /stop the bot wrote %q, want the acknowledgement and the stopped turn", got)
	}
	f.router.Wait()
	f.say("alice", "/stop")
	f.expect("Nothing is running")
}

func TestRouterTimeoutAndPanicAreReported(t *testing.T) {
	t.Parallel()
	f := newRouterFixture(t, func(ctx context.Context, turn core.Turn, emit func(core.Event)) (core.TurnResult, error) {
		if turn.Prompt == "panic" {
			panic("boom")
		}
		return core.TurnResult{}, fmt.Errorf("plain failure")
	})
	f.say("alice", "/fake start")
	f.expect("started")
	// The chat learns what happened and where to look, never the
	// internals: a panic value or an error's text is for the log.
	for _, step := range []struct{ say, want, never string }{
		{"panic", "the Fake fake plugin crashed; the bot's log has the details", "boom"},
		{"fail", "internal error (id ", "plain failure"},
	} {
		f.router.Wait()
		f.say("alice", step.say)
		if got := f.next(); !strings.Contains(got, step.want) || strings.Contains(got, step.never) {
			t.Errorf("after %q the bot wrote %q, want %q and not %q", step.say, got, step.want, step.never)
		}
	}
}

func TestRouterResume(t *testing.T) {
	t.Parallel()
	// The sessions were not started from chat: an admin's to resume.
	f := newRouterFixtureWith(t, echo, nil, func(cfg *core.RouterConfig) { cfg.Access.Admin("fake", "alice") })
	f.plugin.List = plugintest.History([]core.ConversationInfo{
		{SessionID: "aaaa1111-0000", Title: "fix the tests", Updated: time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)},
		{SessionID: "aaaa2222-0000", Title: "write docs"},
		{SessionID: "bbbb3333-0000", Title: "refactor"},
	})
	f.say("alice", "/resume")
	f.expect("no current or previous conversation")
	f.say("alice", "/fake conversations")
	f.expect("1. aaaa1111  ")
	f.say("alice", "/fake resume aaaa")
	f.expect(`"aaaa" matches 2 conversations`)
	f.say("alice", "/fake resume zzzz")
	f.expect(`no conversation "zzzz"`)
	f.say("alice", "/fake resume bbbb")
	f.expect("Resumed Fake fake conversation bbbb3333-0000 (refactor)")
	f.say("alice", "/conversation end")
	f.expect("ended")
	f.say("alice", "/resume")
	f.expect("Resume one with /resume <id or number>")
	f.say("alice", "/resume 2")
	f.expect("Resumed Fake fake conversation aaaa2222-0000")
	f.say("alice", "go on")
	if turn := <-f.plugin.Started(); turn.SessionID != "aaaa2222-0000" {
		t.Fatalf("turn resumes %q, want aaaa2222-0000", turn.SessionID)
	}
	f.expect("echo: go on")
}

// After /conversation end, a bare /resume lists and resumes the sessions
// of the workdir the ended conversation was in, not the default one's;
// that workdir is resolved again under the author's policy.
func TestBareResumeAfterEndIsWhereTheConversationWas(t *testing.T) {
	t.Parallel()
	f := newRouterFixtureWith(t, echo, nil, func(cfg *core.RouterConfig) { cfg.Access.Admin("fake", "alice") })
	project, moved := filepath.Join(f.root, "project"), filepath.Join(f.root, "moved")
	for _, d := range []string{project, moved} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f.plugin.List = func(_ context.Context, wd string) ([]core.ConversationInfo, error) {
		return []core.ConversationInfo{{SessionID: "s-" + filepath.Base(wd), Title: "work in " + filepath.Base(wd)}}, nil
	}
	f.say("alice", "/fake start "+project)
	f.expect("conversation started in " + project)
	f.say("alice", "/conversation end")
	f.expect("Conversation ended.")
	f.say("alice", "/resume")
	f.expect("Fake fake conversations in " + project + " (newest first):\n1. s-projec")
	f.say("alice", "/resume 1")
	f.expect("Resumed Fake fake conversation s-project (work in project) in " + project)
	f.say("alice", "go on")
	if turn := <-f.plugin.Started(); turn.Workdir != project || turn.SessionID != "s-project" {
		t.Errorf("the resumed turn runs in %s on %q, want %s on s-project", turn.Workdir, turn.SessionID, project)
	}
	f.expect("echo: go on")

	// Ended, then its directory swapped for a symlink out of the roots.
	f.say("bob", "/fake start "+moved)
	f.expect("conversation started in " + moved)
	f.say("bob", "/conversation end")
	f.expect("Conversation ended.")
	if err := os.Remove(moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), moved); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"/resume", "/resume s-moved"} {
		f.say("bob", text)
		f.expect("this conversation's workdir is no longer allowed")
	}
}

// freshPlugin is a scripted plugin that cannot resume a session.
type freshPlugin struct{ *plugintest.Scripted }

func (freshPlugin) KeepsSessions() bool { return false }

func TestRouterStatusOfAPluginWithoutSessions(t *testing.T) {
	t.Parallel()
	clock := coretest.NewInstantClock()
	p := freshPlugin{&plugintest.Scripted{PluginID: "fresh", PluginName: "Fake fresh", Script: echo}}
	reg, err := core.NewRegistry(p)
	if err != nil {
		t.Fatal(err)
	}
	roots, err := core.NewRoots([]string{t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	access := core.NewAccess()
	access.Allow("fake", "alice")
	router := core.NewRouter(context.Background(), core.RouterConfig{Plugins: reg, Access: access, Roots: roots, Clock: clock}, nil)
	rec := platformtest.NewRecorder(clock, core.Limits{FinalOnly: true})
	f := &routerFixture{t: t, router: router, rec: rec, plugin: p.Scripted, handle: router.Attach(rec)}
	f.say("alice", "/fresh start")
	f.expect("started")
	f.say("alice", "/status")
	f.expect("Session: none: Fake fresh cannot resume a session, so each turn starts fresh")
}

func TestIsReserved(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]bool{"help": true, "Status": true, "conversation": true, "claude": false, "aider": false} {
		if got := core.IsReserved(id); got != want {
			t.Errorf("IsReserved(%q) = %v, want %v", id, got, want)
		}
	}
}

// Whatever a CLI prints, the bot's secrets never reach the chat: not in
// text, a tool's result nor a listing.
func TestRouterRedactsSecretsFromEveryReply(t *testing.T) {
	t.Parallel()
	const token = "xoxb-the-bots-own-token"
	leak := func(ctx context.Context, turn core.Turn, emit func(core.Event)) (core.TurnResult, error) {
		emit(core.TextEvent("the token is " + token + "."))
		emit(core.BlockEvent(core.ResponseBlock{Kind: core.BlockToolUse, Tool: "Bash", Text: "env", Detail: "SLACK_BOT_TOKEN=" + token, Status: core.ToolDone}))
		return core.TurnResult{SessionID: "tok"}, nil
	}
	f := newRouterFixtureWith(t, leak, nil, func(cfg *core.RouterConfig) {
		cfg.Redactor = core.NewRedactor([]string{token, "short"})
		cfg.Access.Admin("fake", "alice")
	})
	f.plugin.List = plugintest.History([]core.ConversationInfo{{SessionID: "s1", Title: "print " + token}})
	f.say("alice", "/fake start")
	f.expect("conversation started")
	f.say("alice", "print it")
	got := f.next()
	if strings.Contains(got, token) || strings.Count(got, core.Redacted) != 2 {
		t.Errorf("reply %q shows the token, or not twice %s", got, core.Redacted)
	}
	f.router.Wait()
	f.say("alice", "/fake conversations")
	if got := f.next(); strings.Contains(got, token) || !strings.Contains(got, "print "+core.Redacted) {
		t.Errorf("listing %q shows the token", got)
	}
}

func TestRedactor(t *testing.T) {
	t.Parallel()
	r := core.NewRedactor([]string{"abcdef", "abcdefgh", "tiny", ""})
	for in, want := range map[string]string{
		"abcdefgh and abcdef": core.Redacted + " and " + core.Redacted,
		"tiny stays":          "tiny stays",
		"nothing":             "nothing",
	} {
		if got := r.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
	var none *core.Redactor
	if got := none.Redact("abcdef"); got != "abcdef" || core.NewRedactor([]string{"tiny"}) != nil {
		t.Errorf("a nil redactor changed %q, or a redactor of nothing is not nil", got)
	}
}

// The author's policy holds at every turn, listing and resume, not only
// at /start: a writer who is not an admin cannot use an admin's shared
// conversation in an admin-only root, and a workdir swapped for a symlink
// out of the roots after /start is refused.
func TestRouterAppliesTheWorkdirPolicyAtEveryTurn(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	open, adminOnly, outside := filepath.Join(base, "open"), filepath.Join(base, "admin"), filepath.Join(base, "outside")
	for _, d := range []string{open, adminOnly, outside, filepath.Join(open, "project")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f := newRouterFixtureWith(t, echo, nil, func(cfg *core.RouterConfig) {
		roots, err := core.NewRoots([]string{open, adminOnly})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Roots = roots
		cfg.Access.Admin("fake", "alice")
	})
	shared := core.ConversationKey{Platform: "fake", Channel: "c", Thread: "t"}
	say := func(from, text string) {
		f.handle(context.Background(), core.Message{Key: shared, From: from, Text: text})
	}
	f.plugin.List = plugintest.History([]core.ConversationInfo{{SessionID: "s1", Title: "old work"}})

	say("alice", "/fake start "+adminOnly)
	f.expect("conversation started in " + adminOnly)
	for _, text := range []string{"run something", "/fake conversations", "/resume s1"} {
		say("bob", text)
		if got := f.next(); !strings.Contains(got, "only admins may work in the other allowed roots") {
			t.Errorf("bob's %q in alice's admin-only conversation: %q", text, got)
		}
	}
	f.router.Wait()
	say("alice", "run something")
	f.expect("echo: run something")
	f.router.Wait()

	// A workdir that was a directory at /start and became a symlink out.
	project := filepath.Join(open, "project")
	say("bob", "/fake start "+project)
	f.expect("conversation started in " + project)
	if err := os.Remove(project); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, project); err != nil {
		t.Fatal(err)
	}
	say("bob", "run there")
	if got := f.next(); !strings.Contains(got, "no longer allowed") || !strings.Contains(got, "outside the allowed roots") {
		t.Errorf("a turn in a workdir swapped for a symlink out of the roots: %q", got)
	}
	f.router.Wait()
	select {
	case turn := <-f.plugin.Started():
		if turn.Prompt != "run something" || turn.Workdir != adminOnly {
			t.Errorf("turn %+v ran", turn)
		}
	default:
		t.Fatal("alice's turn did not run")
	}
	select {
	case turn := <-f.plugin.Started():
		t.Errorf("a refused turn ran: %+v", turn)
	default:
	}
}

// Turns beyond MaxRunningTurns and MaxUserTurns wait in line, are told
// their place, and start in order as slots free up; a user at their own
// limit lets others pass.
func TestRouterLimitsRunningTurns(t *testing.T) {
	t.Parallel()
	release := map[string]chan struct{}{}
	for _, p := range []string{"a1", "a2", "b1", "c1", "d1"} {
		release[p] = make(chan struct{})
	}
	hold := func(ctx context.Context, turn core.Turn, emit func(core.Event)) (core.TurnResult, error) {
		select {
		case <-release[turn.Prompt]:
		case <-ctx.Done():
			return core.TurnResult{}, ctx.Err()
		}
		emit(core.TextEvent("done " + turn.Prompt))
		return core.TurnResult{}, nil
	}
	f := newRouterFixtureWith(t, hold, nil, func(cfg *core.RouterConfig) {
		cfg.MaxRunningTurns, cfg.MaxUserTurns = 2, 1
		cfg.Access.Allow("fake", "carol", "dave")
	})
	in := func(user, channel, text string) {
		f.handle(context.Background(), core.Message{Key: core.ConversationKey{Platform: "fake", User: user, Channel: channel}, Text: text})
	}
	started := func(want string) {
		t.Helper()
		if got := (<-f.plugin.Started()).Prompt; got != want {
			t.Fatalf("turn %q started, want %q", got, want)
		}
	}
	for _, c := range []struct{ user, channel string }{{"alice", "c1"}, {"alice", "c2"}, {"bob", "c1"}, {"carol", "c1"}, {"dave", "c1"}} {
		in(c.user, c.channel, "/fake start")
		f.expect("conversation started")
	}
	in("alice", "c1", "a1")
	started("a1")
	in("alice", "c2", "a2") // alice is at her own limit
	f.expect("number 1 in line")
	in("bob", "c1", "b1") // passes alice's second turn
	started("b1")
	in("carol", "c1", "c1") // the bot is full
	f.expect("number 2 in line")
	if st := f.router.Stats(); st.Running != 2 || st.Queued != 2 {
		t.Errorf("stats %+v, want 2 running and 2 waiting", st)
	}
	in("dave", "c1", "d1")
	f.expect("number 3 in line")
	in("carol", "c1", "/stop") // leaves the line
	if got := f.next() + f.next(); !strings.Contains(got, "waited in line and was not sent: Stopped") {
		t.Errorf("carol's stopped turn: %q", got)
	}
	close(release["b1"])
	f.expect("done b1")
	started("d1") // alice's a2 is still held by her own limit
	close(release["a1"])
	f.expect("done a1")
	started("a2")
	close(release["a2"])
	close(release["d1"])
	f.router.Wait()
	select {
	case turn := <-f.plugin.Started():
		t.Errorf("turn %q ran after it was stopped", turn.Prompt)
	default:
	}
}

// Users sharing a workdir list and resume only the sessions they started
// from chat; admins see every one, marked with its owner.
func TestRouterSessionsBelongToTheirStarter(t *testing.T) {
	t.Parallel()
	f := newRouterFixtureWith(t, echo, nil, func(cfg *core.RouterConfig) {
		cfg.Access.Admin("fake", "carol")
	})
	for _, user := range []string{"alice", "bob"} {
		f.say(user, "/fake start")
		f.expect("conversation started")
		f.say(user, "hi-"+user)
		f.expect("echo: hi-" + user)
		f.router.Wait()
	}
	f.plugin.List = plugintest.History([]core.ConversationInfo{{SessionID: "tok-hi-alice", Title: "alice's"}, {SessionID: "tok-hi-bob", Title: "bob's"}, {SessionID: "on-the-host", Title: "the host's"}})

	f.say("alice", "/fake conversations")
	if got := f.next(); !strings.Contains(got, "alice's") || strings.Contains(got, "bob's") || strings.Contains(got, "host's") {
		t.Errorf("alice's listing: %q", got)
	}
	for _, id := range []string{"tok-hi-bob", "on-the-host"} {
		f.say("alice", "/fake resume "+id)
		f.expect("no conversation")
	}
	f.say("alice", "/fake resume tok-hi-alice")
	f.expect("Resumed")
	f.say("carol", "/fake conversations")
	got := f.next()
	for _, want := range []string{"alice's  [fake/alice]", "bob's  [fake/bob]", "the host's  [not started from chat]"} {
		if !strings.Contains(got, want) {
			t.Errorf("carol's listing %q lacks %q", got, want)
		}
	}
	f.say("carol", "/fake resume tok-hi-bob")
	f.expect("Resumed")
}
