package core_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/platforms/platformtest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

func TestAccessReport(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		allow     []string
		admins    []string
		rules     []string
		wantLevel string
		want      string
	}{
		{"nobody", nil, nil, nil, "ERROR", "fake serves nobody: no allowed users. Set FAKE_ALLOWED_USERS"},
		{"everyone", []string{"*"}, nil, nil, "WARN", `WARNING: fake allows EVERYONE (FAKE_ALLOWED_USERS contains "*")`},
		{"everyone an admin", nil, []string{"*"}, nil, "WARN", "and everyone is an admin"},
		{"a list", []string{"alice", "bob"}, []string{"carol"}, nil, "INFO", "fake serves 3 allowed users (1 admins)"},
		{"only a rule", nil, nil, []string{"members of 2 roles"}, "INFO", "fake serves 0 allowed users (0 admins) and members of 2 roles"},
		{"a list and a rule", []string{"alice"}, nil, []string{"members of 1 roles"}, "INFO", "fake serves 1 allowed users (0 admins) and members of 1 roles"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := core.NewAccess()
			a.Allow("fake", tt.allow...)
			a.Admin("fake", tt.admins...)
			for _, r := range tt.rules {
				a.AllowBy("fake", r)
			}
			var buf bytes.Buffer
			got := a.Report(slog.New(slog.NewTextHandler(&buf, nil)), "fake", "FAKE_ALLOWED_USERS")
			if !strings.Contains(got, tt.want) {
				t.Errorf("Report = %q, want it to contain %q", got, tt.want)
			}
			if !strings.Contains(buf.String(), "level="+tt.wantLevel) {
				t.Errorf("logged %q, want level %s", buf.String(), tt.wantLevel)
			}
		})
	}
}

func TestParseRate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    core.Rate
		wantErr bool
	}{
		{"", core.Rate{}, false},
		{"off", core.Rate{}, false},
		{"10/m", core.Rate{N: 10, Per: time.Minute}, false},
		{"1/s", core.Rate{N: 1, Per: time.Second}, false},
		{" 100 / hour ", core.Rate{N: 100, Per: time.Hour}, false},
		{"5/minute", core.Rate{N: 5, Per: time.Minute}, false},
		{"10", core.Rate{}, true},
		{"0/m", core.Rate{}, true},
		{"-1/m", core.Rate{}, true},
		{"10/d", core.Rate{}, true},
		{"x/m", core.Rate{}, true},
	}
	for _, tt := range tests {
		got, err := core.ParseRate(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"10/m", "1/s", "3/h", "", "/", "99999999999999999999/s", "1/\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := core.ParseRate(s)
		if err == nil && r.N != 0 && (r.N < 0 || r.Per <= 0) {
			t.Fatalf("ParseRate(%q) = %+v: accepted a rate that cannot work", s, r)
		}
	})
}

func TestRouterUserRateLimit(t *testing.T) {
	t.Parallel()
	f := newRouterFixtureWith(t, echo, nil, func(c *core.RouterConfig) {
		c.UserRate = core.Rate{N: 2, Per: time.Minute}
		c.Access.Admin("fake", "root")
	})
	f.say("alice", "/help")
	f.expectHelp("Commands:")
	f.say("alice", "/help")
	f.expectHelp("Commands:")
	f.say("alice", "/help")
	f.expect("faster than this bot allows (2/m). Try again in 30s; this message was not sent")
	f.say("bob", "/help") // per user: bob has his own allowance
	f.expectHelp("Commands:")
	for range 5 { // admins are not limited
		f.say("root", "/help")
		f.expectHelp("Commands:")
	}
}

func TestRouterAdminsMayLeaveTheDefaultRoot(t *testing.T) {
	t.Parallel()
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, other := filepath.Join(tmp, "home"), filepath.Join(tmp, "other")
	for _, d := range []string{home + "/proj", other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f := newRouterFixtureWith(t, echo, nil, func(c *core.RouterConfig) {
		roots, err := core.NewRoots([]string{other, home})
		if err != nil {
			t.Fatal(err)
		}
		c.Roots = roots
		c.DefaultWorkdir = home + "/proj" // the default root is home, not the first root
		c.Access.Admin("fake", "bob")
	})
	tests := []struct{ user, cmd, want string }{
		{"alice", "/fake start", "started in " + home + "/proj"},
		{"alice", "/workdir set ..", "Workdir set to " + home},
		{"alice", "/fake start " + other, "outside " + home + "; only admins may work in the other allowed roots"},
		{"alice", "/workdir set " + other, "only admins"},
		{"alice", "/workdir set ../../etc", "allowed roots"},
		{"alice", "/workdir set " + strings.Repeat("../", 40) + "etc", "outside the allowed roots"},
		{"alice", "/status all", "/status all is for admins"},
		{"bob", "/fake start " + other, "started in " + other},
		{"bob", "/workdir set " + home, "Workdir set to " + home},
		{"bob", "/status all", "2 active conversations"},
	}
	for _, tt := range tests {
		f.say(tt.user, tt.cmd)
		if got := f.next(); !strings.Contains(got, tt.want) {
			t.Errorf("%s: %s → %q, want it to contain %q", tt.user, tt.cmd, got, tt.want)
		}
	}
}

// hang runs until its turn is cancelled.
func hang(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	emit(core.TextEvent("working…"))
	<-ctx.Done()
	return core.TurnResult{}, ctx.Err()
}

func TestRouterSaysWhichTimeoutFired(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		turn, idle  time.Duration
		want, since string
	}{
		{"idle", time.Hour, 5 * time.Millisecond, "Idle timeout: Fake fake printed nothing for 5ms and was stopped", ""},
		{"total", 5 * time.Millisecond, time.Hour, "Turn timeout: the turn took longer than 5ms and was stopped", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			obs := &recordingObserver{}
			f := newRouterFixtureWith(t, hang, nil, func(c *core.RouterConfig) {
				c.TurnTimeout, c.IdleTimeout, c.Observer = tt.turn, tt.idle, obs
			})
			f.say("alice", "/fake start")
			f.expect("started")
			f.say("alice", "hello")
			f.expect(tt.want)
			f.router.Wait()
			turns := obs.kind(core.RecordTurn)
			if len(turns) != 1 || turns[0].Outcome != map[string]string{"idle": core.OutcomeIdleTimeout, "total": core.OutcomeTimeout}[tt.name] {
				t.Fatalf("turn records %+v, want one with the %s outcome", turns, tt.name)
			}
		})
	}
}

func TestIdleWatchIsResetByActivity(t *testing.T) {
	t.Parallel()
	clock := coretest.NewManualClock()
	fired := make(chan struct{}, 1)
	w := core.NewIdleWatch(clock, 10*time.Second, func() { fired <- struct{}{} })
	defer w.Stop()
	<-clock.Waiting()
	clock.Advance(6 * time.Second)
	w.Touch() // activity at 6s: the deadline moves to 16s
	clock.Advance(4 * time.Second)
	if d := <-clock.Waiting(); d != 6*time.Second {
		t.Fatalf("re-armed for %s, want the 6s left", d)
	}
	select {
	case <-fired:
		t.Fatal("fired 4s after activity")
	default:
	}
	clock.Advance(6 * time.Second)
	select {
	case <-fired:
	default:
		t.Fatal("did not fire after 10s of quiet")
	}
}

func TestRouterRecoversPanicsInCommands(t *testing.T) {
	t.Parallel()
	f := newRouterFixture(t, echo)
	f.plugin.List = func(context.Context, string) ([]core.ConversationInfo, error) { panic("listing exploded") }
	f.say("alice", "/fake start")
	f.expect("started")
	f.say("alice", "/fake conversations")
	if got := f.next(); !strings.Contains(got, "handling your message crashed") || strings.Contains(got, "listing exploded") {
		t.Errorf("bot wrote %q, want the crash reported without its panic value", got)
	}
	f.say("bob", "/fake start") // another conversation is unaffected
	f.expect("started")
	f.say("bob", "hi")
	f.expect("echo: hi")
	f.say("alice", "still here?") // and so is alice's
	f.expect("echo: still here?")
}

// checkedPlugin is a scripted plugin whose session ids must look like "s-<digits>".
type checkedPlugin struct{ *plugintest.Scripted }

func (checkedPlugin) CheckSessionID(id string) error {
	if !strings.HasPrefix(id, "s-") || strings.Trim(id[2:], "0123456789") != "" {
		return core.Errorf("%q is not a session id", id)
	}
	return nil
}

func TestRouterHostileMessages(t *testing.T) {
	t.Parallel()
	f := newRouterFixture(t, echo)
	f.say("alice", "/fake start")
	f.expect("started")
	tests := []struct {
		name, text, want string
		runs             bool // the message reaches the plugin
	}{
		{"1 MB message", strings.Repeat("a", 1<<20), "your message is 1048576 bytes; the limit is 100000", false},
		{"NUL bytes", "rm\x00 -rf", "contains NUL bytes", false},
		{"invalid UTF-8 is repaired", "caf\xe9 \xff", "echo: caf\uFFFD \uFFFD", true},
		{"a shell line as a session id", "/fake resume ; rm -rf ~", "usage: /fake resume <id>", false},
		{"command substitution as a session id", "/fake resume $(touch${IFS}/tmp/pwned)", `no conversation "$(touch${IFS}/tmp/pwned)"`, false},
		{"unknown plugin", "/codex start", "unknown command /codex", false},
		{"workdir escape", "/workdir set ../../etc", "(allowed roots: ", false},
		{"deep workdir escape", "/workdir set " + strings.Repeat("../", 40) + "etc", "outside the allowed roots", false},
		{"a message that looks like a flag", "--dangerously-skip-permissions", "echo: --dangerously-skip-permissions", true},
	}
	for _, tt := range tests {
		f.say("alice", tt.text)
		if got := f.next(); !strings.Contains(got, tt.want) {
			t.Errorf("%s: bot wrote %q, want it to contain %q", tt.name, got, tt.want)
		}
		f.router.Wait()
		select {
		case turn := <-f.plugin.Started():
			if !tt.runs {
				t.Errorf("%s: reached the plugin as %q", tt.name, turn.Prompt)
			}
		default:
			if tt.runs {
				t.Errorf("%s: never reached the plugin", tt.name)
			}
		}
	}
	if _, err := os.Stat("/tmp/pwned"); err == nil {
		t.Error("/tmp/pwned exists")
	}
}

func TestRouterRefusesMalformedResumeIDsWithoutAListing(t *testing.T) {
	t.Parallel()
	f := newRouterFixture(t, echo)
	reg, err := core.NewRegistry(checkedPlugin{f.plugin})
	if err != nil {
		t.Fatal(err)
	}
	roots, _ := core.NewRoots([]string{f.root})
	access := core.NewAccess()
	access.Admin("fake", "alice") // the session was not started from chat: an admin's to resume
	router := core.NewRouter(context.Background(), core.RouterConfig{Plugins: reg, Access: access, Roots: roots, Clock: coretest.NewInstantClock()}, nil)
	f.handle = router.Attach(f.rec)
	for _, id := range []string{";rm${IFS}-rf${IFS}~", "$(id)", "`id`", "s-1;reboot", "../../../etc/passwd", "-rf"} {
		f.say("alice", "/fake resume "+id)
		f.expect("no conversation")
	}
	f.say("alice", "/fake resume s-42")
	f.expect("Resumed Fake fake conversation s-42")
	f.say("alice", "go")
	if turn := <-f.plugin.Started(); turn.SessionID != "s-42" {
		t.Fatalf("resumed with %q", turn.SessionID)
	}
	f.expect("echo: go")
}

// recordingObserver keeps what the router tells it.
type recordingObserver struct {
	mu         sync.Mutex
	records    []core.Record
	deliveries map[core.DeliveryOp]int
}

func (o *recordingObserver) Record(r core.Record) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.records = append(o.records, r)
}

func (o *recordingObserver) Delivery(platform string, op core.DeliveryOp) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.deliveries == nil {
		o.deliveries = map[core.DeliveryOp]int{}
	}
	o.deliveries[op]++
}

func (o *recordingObserver) kind(k core.RecordKind) []core.Record {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []core.Record
	for _, r := range o.records {
		if r.Kind == k {
			out = append(out, r)
		}
	}
	return out
}

func TestRouterTellsTheObserver(t *testing.T) {
	t.Parallel()
	obs := &recordingObserver{}
	f := newRouterFixtureWith(t, func(ctx context.Context, turn core.Turn, emit func(core.Event)) (core.TurnResult, error) {
		emit(core.TextEvent("hi"))
		return core.TurnResult{SessionID: "tok-1", CostUSD: 0.25, Duration: 3 * time.Second}, nil
	}, nil, func(c *core.RouterConfig) { c.Observer = obs })
	f.say("mallory", "let me in")
	f.expect("not on this bot's allow-list")
	f.say("alice", "/fake start")
	f.expect("started")
	f.say("alice", "hello")
	f.expect("hi")
	f.router.Wait()

	if got := obs.kind(core.RecordRefused); len(got) != 1 || got[0].Author != "mallory" {
		t.Errorf("refused records %+v, want one for mallory", got)
	}
	cmds := obs.kind(core.RecordCommand)
	if len(cmds) != 1 || cmds[0].Command != "/fake start" || cmds[0].Outcome != core.OutcomeOK || cmds[0].Plugin != "fake" || cmds[0].Workdir != f.root {
		t.Errorf("command records %+v", cmds)
	}
	turns := obs.kind(core.RecordTurn)
	if len(turns) != 1 {
		t.Fatalf("turn records %+v, want one", turns)
	}
	tr := turns[0]
	if tr.SessionID != "tok-1" || tr.CostUSD != 0.25 || tr.Duration != 3*time.Second || tr.Outcome != core.OutcomeOK ||
		tr.Plugin != "fake" || tr.Text != "hello" || tr.Key.User != "alice" || tr.ID == "" || tr.ID == cmds[0].ID {
		t.Errorf("turn record %+v", tr)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if obs.deliveries[core.DeliverySend] != 3 {
		t.Errorf("deliveries %v, want 3 sends (refusal, started, reply)", obs.deliveries)
	}
}

func TestRouterWindDownNotifiesAndGivesGrace(t *testing.T) {
	t.Parallel()
	clock := coretest.NewManualClock()
	release := make(chan struct{})
	// The router has taken a turn's session once its emit returned: only
	// then may the notices name it.
	sessions := make(chan struct{}, 2)
	f := newRouterFixtureWith(t, func(ctx context.Context, turn core.Turn, emit func(core.Event)) (core.TurnResult, error) {
		emit(core.Event{Kind: core.EventSession, SessionID: "sess-" + turn.Key.User})
		sessions <- struct{}{}
		if turn.Key.User == "alice" {
			<-release // finishes within the grace period
			return core.TurnResult{SessionID: "sess-alice"}, nil
		}
		<-ctx.Done() // bob's turn outlasts it
		return core.TurnResult{}, ctx.Err()
	}, clock, nil)
	for _, u := range []string{"alice", "bob"} {
		f.say(u, "/fake start")
		f.expect("started")
		f.say(u, "work")
		<-f.plugin.Started()
		<-sessions
	}
	f.say("bob", "queued behind the turn")
	f.expect("Queued (1 waiting)")

	drained := make(chan struct{})
	go func() {
		f.router.WindDown(30 * time.Second)
		close(drained)
	}()
	notices := map[string]string{}
	for range 2 {
		c := <-f.rec.Written()
		notices[c.Ref.Target.Channel+c.Text] = c.Text
	}
	var all []string
	for _, n := range notices {
		all = append(all, n)
	}
	joined := strings.Join(all, "\n")
	for _, want := range []string{"The bot is restarting. The running turn has 30s to finish", "/fake resume sess-alice", "/fake resume sess-bob", "1 queued messages were not run"} {
		if !strings.Contains(joined, want) {
			t.Errorf("notices %q lack %q", all, want)
		}
	}
	<-clock.Waiting() // the grace period has begun
	f.say("alice", "one more")
	f.expect("starts no new turns")
	close(release)
	f.expect("— ") // alice's turn ends normally: its footer
	select {
	case <-drained:
		t.Fatal("WindDown returned while bob's turn still ran")
	default:
	}
	clock.Advance(30 * time.Second)
	f.expect("The bot is restarting; this turn was stopped")
	<-drained
	if st := f.router.Stats(); st.Running != 0 || st.Queued != 0 || st.Conversations != 2 {
		t.Fatalf("after WindDown: %+v, want no turns and both conversations kept", st)
	}
}

func TestCapPages(t *testing.T) {
	t.Parallel()
	var pages []string
	for i := range 100 {
		pages = append(pages, strings.Repeat("x", i))
	}
	got := core.CapPages(pages)
	if len(got) != core.MaxPages {
		t.Fatalf("%d pages, want %d", len(got), core.MaxPages)
	}
	if got[0] != pages[0] || got[core.MaxPages-3] != pages[core.MaxPages-3] || got[core.MaxPages-1] != pages[99] {
		t.Error("the first pages and the last must stay")
	}
	if !strings.Contains(got[core.MaxPages-2], "81 more messages of output were cut") {
		t.Errorf("note = %q", got[core.MaxPages-2])
	}
	if few := core.CapPages(pages[:3]); len(few) != 3 {
		t.Errorf("CapPages cut a short reply to %d pages", len(few))
	}
}

// A flood of tiny deltas, interleaved with blocks, arrives whole: the
// reply accumulates text in linear time.
func TestCoordinatorFloodOfTinyDeltas(t *testing.T) {
	t.Parallel()
	clock := coretest.NewInstantClock()
	rec := platformtest.NewRecorder(clock, core.Limits{FinalOnly: true})
	rec.MaxLen = 1 << 30
	coord := core.NewStreamCoordinator(rec, clock, nil)
	ctx := context.Background()
	r := coord.NewReply(ctx, target)
	for i := range 300_000 {
		r.Emit(core.TextEvent(string(rune('a' + i%26))))
		if i == 100_000 {
			r.Add(core.ResponseBlock{Kind: core.BlockStatus, Text: "middle"})
		}
	}
	r.Close(ctx)
	blocks := r.Blocks()
	if len(blocks) != 3 || len(blocks[0].Text) != 100_001 || len(blocks[2].Text) != 199_999 || blocks[1].Text != "middle" {
		t.Fatalf("got %d blocks, want text, status, text with every delta", len(blocks))
	}
	if got, want := blocks[2].Text[:3], "fgh"; got != want { // 100001 % 26 == 5
		t.Fatalf("second text starts %q, want %q", got, want)
	}
}

// A turn that ignores its cancellation does not keep shutdown from ending.
func TestRouterWindDownHasAHardDeadline(t *testing.T) {
	t.Parallel()
	stuck := make(chan struct{})
	t.Cleanup(func() { close(stuck) })
	f := newRouterFixtureWith(t, func(ctx context.Context, turn core.Turn, emit func(core.Event)) (core.TurnResult, error) {
		<-stuck // never looks at ctx
		return core.TurnResult{}, nil
	}, nil, func(cfg *core.RouterConfig) { cfg.StopDeadline = time.Millisecond })
	f.say("alice", "/fake start")
	f.expect("started")
	f.say("alice", "hang")
	<-f.plugin.Started()
	f.router.WindDown(0) // returns: the test would hang otherwise
	f.expect("The bot is restarting. The running turn has")
}

// An id listed from the CLI's history still has to be of the CLI's form
// before it reaches its arguments: a file named like a flag is refused.
func TestRouterChecksListedResumeIDs(t *testing.T) {
	t.Parallel()
	f := newRouterFixture(t, echo)
	f.plugin.List = plugintest.History([]core.ConversationInfo{{SessionID: "--dangerously-skip-permissions", Title: "planted"}, {SessionID: "s-7", Title: "real"}})
	reg, err := core.NewRegistry(checkedPlugin{f.plugin})
	if err != nil {
		t.Fatal(err)
	}
	roots, _ := core.NewRoots([]string{f.root})
	access := core.NewAccess()
	access.Admin("fake", "alice")
	router := core.NewRouter(context.Background(), core.RouterConfig{Plugins: reg, Access: access, Roots: roots, Clock: coretest.NewInstantClock()}, nil)
	f.handle = router.Attach(f.rec)
	f.say("alice", "/fake resume 1")
	f.expect("is not a session id")
	f.say("alice", "/fake resume 2")
	f.expect("Resumed Fake fake conversation s-7")
}
