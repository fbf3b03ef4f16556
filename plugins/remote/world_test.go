package remote_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/workspace"
	"github.com/jake-bot/jake-bot/platforms/platformtest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
	"github.com/jake-bot/jake-bot/plugins/remote"
)

// runNATS runs a real NATS server with JetStream in the test process, on
// loopback.
func runNATS(t testing.TB, opts *server.Options) string {
	t.Helper()
	if opts == nil {
		opts = &server.Options{}
	}
	opts.Port, opts.StoreDir = -1, t.TempDir()
	return serveNATS(t, opts).ClientURL()
}

// serveNATS runs a JetStream server on loopback with opts (its Port and
// StoreDir as given: a test restarts it on both) until t ends.
func serveNATS(t testing.TB, opts *server.Options) *server.Server {
	t.Helper()
	opts.Host, opts.NoLog, opts.NoSigs, opts.JetStream = "127.0.0.1", true, true, true
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server did not start")
	}
	t.Cleanup(s.Shutdown)
	return s
}

func connect(t testing.TB, url string, opts ...nats.Option) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// bigText is what a "big" turn says in one event: 30 KB of what JSON
// escapes to 97 KB.
var bigText = strings.Repeat("<a & b>\n", 3_750)

// The session every turn of a runner's plugin reports.
const session = "11111111-2222-4333-8444-555555555555"

// turn is a runner's "claude" turn: it echoes, asks when told to, waits
// to be stopped or released when told to, and says the runner's secret
// when asked to.
func (r *runner) turn(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	emit(core.Event{Kind: core.EventSession, SessionID: session})
	stopped := func() (core.TurnResult, error) {
		r.stopped <- context.Cause(ctx)
		return core.TurnResult{}, context.Cause(ctx)
	}
	if text, ok := strings.CutPrefix(t.Prompt, "write "); ok || strings.Contains(t.Prompt, "reviewed your change") {
		// An author's turn that changes its workdir; a fix writes
		// "fixed".
		if !ok {
			text = "fixed"
		}
		if err := os.WriteFile(filepath.Join(t.Workdir, "a.txt"), []byte(text+"\n"), 0o644); err != nil {
			return core.TurnResult{}, err
		}
		emit(core.TextEvent("wrote " + text))
		return core.TurnResult{SessionID: session, CostUSD: 0.01}, nil
	}
	switch t.Prompt {
	case "ask", "ask too much":
		answered := make(chan core.Answer, 1)
		q := &core.Question{Tool: "Bash", Summary: "rm -rf build " + r.secret, Answer: func(a core.Answer) { answered <- a }}
		if t.Prompt == "ask too much" { // options larger than a message
			q.Tool, q.Summary = "AskUserQuestion", "which one?"
			for i := range 300 {
				q.Options = append(q.Options, fmt.Sprintf("%d %s", i, strings.Repeat("o", 1000)))
			}
		}
		emit(core.Event{Kind: core.EventQuestion, Question: q})
		select {
		case a := <-answered:
			emit(core.TextEvent(map[core.Decision]string{core.Allow: "the answer was allow", core.Deny: "the answer was deny: " + a.Reason}[a.Decision]))
		case <-ctx.Done():
			return stopped()
		}
	case "wait":
		emit(core.TextEvent("waiting on " + t.Workdir))
		<-ctx.Done()
		return stopped()
	case "slow":
		emit(core.TextEvent("part 1. "))
		emit(core.TextEvent("part 2. "))
		select {
		case <-r.release:
		case <-ctx.Done():
			return stopped()
		}
		emit(core.TextEvent("part 3. "))
		emit(core.TextEvent("part 4."))
	case "steer me":
		return r.steerable(ctx, t, emit, stopped)
	case "planned":
		emit(core.BlockEvent(core.PlanBlock([]core.PlanItem{{Text: "read the logs", Status: core.PlanDone}, {Text: "fix it", Status: core.PlanInProgress}})))
		emit(core.Event{Kind: core.EventBackground, Background: &core.Background{Tasks: []string{"slow job " + r.secret}, Answered: true}})
		emit(core.TextEvent("answered; the job goes on. "))
		select {
		case <-r.release:
		case <-ctx.Done():
			return stopped()
		}
		emit(core.Event{Kind: core.EventBackground, Background: &core.Background{}})
		emit(core.TextEvent("the job reported back."))
	case "use the tools":
		emit(core.TextEvent(useTools(ctx, t.Tools)))
	case "limited":
		emit(core.LimitEvent(core.UsageWindow{Window: "5h", UsedPercent: 95, ResetsAt: time.Date(2030, 1, 2, 18, 40, 0, 0, time.UTC)}))
		emit(core.TextEvent("near the limit"))
	case "big":
		emit(core.TextEvent(bigText))
		emit(core.BlockEvent(core.ResponseBlock{Kind: core.BlockToolUse, Tool: "Bash", Text: "cat big.log", Detail: strings.Repeat("log line\n", 40_000)}))
	case "leak":
		emit(core.TextEvent("my key is " + r.secret))
		emit(core.BlockEvent(core.ResponseBlock{Kind: core.BlockToolUse, Tool: "Bash", Text: "echo " + r.secret, Detail: r.secret}))
		return core.TurnResult{}, core.Errorf("failed with %s", r.secret)
	default:
		emit(core.TextEvent(r.name + " echo: " + t.Prompt))
	}
	return core.TurnResult{SessionID: session, CostUSD: 0.01}, nil
}

// The session every turn of a runner's "codex" reports.
const helperSession = "99999999-8888-4777-8666-555555555555"

// helperTurn is a runner's "codex" turn: it says it is looking, then
// what the test sends on the runner's answers.
func (r *runner) helperTurn(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	emit(core.Event{Kind: core.EventSession, SessionID: helperSession})
	emit(core.TextEvent("Looking. "))
	select {
	case text := <-r.answers:
		emit(core.TextEvent(text))
	case <-ctx.Done():
		r.stopped <- context.Cause(ctx)
		return core.TurnResult{}, context.Cause(ctx)
	}
	return core.TurnResult{SessionID: helperSession, CostUSD: 0.02}, nil
}

// steerable is a turn that takes one message into it: it says what it
// took, with the images that came with it.
func (r *runner) steerable(ctx context.Context, t core.Turn, emit func(core.Event), stopped func() (core.TurnResult, error)) (core.TurnResult, error) {
	steered := make(chan core.Steering, 1)
	t.Inbox.Open(func(s core.Steering) error {
		select {
		case steered <- s:
			return nil
		default:
			return core.ErrNotTaken
		}
	})
	emit(core.TextEvent("ready for more. "))
	select {
	case s := <-steered:
		t.Inbox.Close()
		emit(core.TextEvent(fmt.Sprintf("took %q with images %q", s.Prompt, s.Images)))
	case <-ctx.Done():
		return stopped()
	}
	return core.TurnResult{SessionID: session, CostUSD: 0.01}, nil
}

// fakeTools is an MCP server that serves no CLI: the turn's plugin calls
// the actions the access carries itself.
type fakeTools []string

func (f fakeTools) Open(_ core.TurnActions, only []string) (*core.ToolAccess, func()) {
	tools := slices.DeleteFunc(slices.Clone(f), func(t string) bool { return only != nil && !slices.Contains(only, t) })
	return &core.ToolAccess{URL: "http://127.0.0.1:1/mcp", Token: "t", Tools: tools}, func() {}
}

// useTools calls each agent tool as the CLI of a turn on a runner would,
// and says what each answered.
func useTools(ctx context.Context, access *core.ToolAccess) string {
	if access == nil || access.Actions == nil {
		return "no tools"
	}
	a := access.Actions
	var out []string
	say := func(what string, err error) {
		if err != nil {
			what = "error: " + core.UserMessage(err)
		}
		out = append(out, what)
	}
	say("notified", a.Notify(ctx, "halfway there"))
	say("sent", a.SendFile(ctx, "report.txt", "the report"))
	say("sent", a.SendFile(ctx, "/etc/passwd", ""))
	say(a.Schedule(ctx, "2h", "check the deploy"))
	say(a.Ask(ctx, "which one?", []string{"a", "b"}))
	return "tools: " + strings.Join(out, "; ")
}

// conversations is a runner's "claude" history: one session, whose title
// names the workdir and the runner's secret.
func (r *runner) conversations(_ context.Context, workdir string) ([]core.ConversationInfo, error) {
	return []core.ConversationInfo{{SessionID: session, Title: "earlier in " + filepath.Base(workdir) + " " + r.secret}}, nil
}

// localPlugin is the gateway's own "claude", which must never run here.
func localPlugin(t *testing.T) *plugintest.Scripted {
	return &plugintest.Scripted{Script: func(context.Context, core.Turn, func(core.Event)) (core.TurnResult, error) {
		t.Error("a turn of a runner's conversation ran on the gateway")
		return core.TurnResult{}, errors.New("not here")
	}}
}

// The users: u is an admin, v is not.
const (
	admin = "u"
	user  = "v"
)

// world is a NATS server, runners and gateways on it; the gateways share
// one conversation map, as a gateway restarted with NATS_URL finds it.
type world struct {
	t     *testing.T
	url   string
	convs *core.State
	// clock, offlineAfter (3 s when zero) and gwSecrets are what
	// gateways get.
	clock        core.Clock
	offlineAfter time.Duration
	gwSecrets    []string
	// gwNATS is how gateways sign in (URL: url when empty).
	gwNATS remote.Config
	// gwTools are the agent tools gateways answer (none when empty).
	gwTools []string
	gw      *gateway
}

// dial connects as c says, through remote.Connect, to w's server unless
// c names one.
func (w *world) dial(c remote.Config, more ...nats.Option) *nats.Conn {
	w.t.Helper()
	if c.URL == "" {
		c.URL = w.url
	}
	nc, err := remote.Connect(c, w.t.Name(), nil, more...)
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(nc.Close)
	return nc
}

func newWorld(t *testing.T) *world {
	return &world{t: t, url: runNATS(t, nil), convs: core.NewState()}
}

// newWorldWithBox2 is a world with runner box2 (its roots: dir) and a
// gateway.
func newWorldWithBox2(t *testing.T) (w *world, box2 *runner) {
	w = newWorld(t)
	box2 = w.startRunner(runnerOpts{name: "box2"})
	w.startGateway()
	w.waitOnline("box2")
	return w, box2
}

// tempDir is a test directory with its symlinks resolved.
func tempDir(t *testing.T) string {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func mkdir(t *testing.T, parts ...string) string {
	dir := filepath.Join(parts...)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

type runnerOpts struct {
	name string
	// roots, when empty, are one new directory holding app/.
	roots    []string
	interval time.Duration
	secret   string
	// maxUpload is its MaxUpload.
	maxUpload int64
	// worktreeDir is its WorktreeDir.
	worktreeDir string
	// nats is how it signs in.
	nats remote.Config
	// tools are the agent tools it serves (none when empty).
	tools []string
	// readOnly is its plugin's means to run a read-only turn (none
	// when empty, as a runner of before announces).
	readOnly string
	// codex adds a helper plugin "codex", read-only, whose turns answer
	// what the test sends on the runner's answers.
	codex bool
	// holdStarts lets the test hold the start of its "claude" turns
	// (runner.holdStart).
	holdStarts bool
}

// runner is a runner on its own connection, with its "claude".
type runner struct {
	name, secret string
	// plugin runs turn; Started announces each turn.
	plugin *plugintest.Scripted
	// stopped receives why each turn that was cancelled ended.
	stopped chan error
	// release lets a "slow" turn go on after its first two parts.
	release chan struct{}
	// codex, with runnerOpts.codex, is its helper plugin; each of its
	// turns waits for its answer on answers.
	codex   *plugintest.Scripted
	answers chan string
	// holds, with runnerOpts.holdStarts, takes the hold of the next
	// turn's start.
	holds chan *startHold
	roots []string
	nc    *nats.Conn
	kill  func()
	// stop ends it as stopping its service does: once stop returns,
	// nothing listens on its subjects.
	stop func()
}

// app is the first root's app directory.
func (r *runner) app() string { return filepath.Join(r.roots[0], "app") }

// startRunner runs a runner; its kill takes it off the network, as a
// crash does, and stops it.
func (w *world) startRunner(o runnerOpts) *runner {
	w.t.Helper()
	if len(o.roots) == 0 {
		o.roots = []string{tempDir(w.t)}
		mkdir(w.t, o.roots[0], "app")
	}
	if o.interval == 0 {
		o.interval = 100 * time.Millisecond
	}
	r := &runner{name: o.name, secret: o.secret, stopped: make(chan error, 16), release: make(chan struct{}), roots: o.roots}
	r.plugin = &plugintest.Scripted{Script: r.turn, List: r.conversations,
		CLIModes: []core.Mode{{Name: "careful"}, {Name: "yolo", Bypass: true}}, ReadOnly: o.readOnly}
	r.nc = w.dial(o.nats, remote.RunnerInbox(o.name))
	plugins := []core.Plugin{r.plugin}
	if o.holdStarts {
		r.holds = make(chan *startHold, 1)
		plugins[0] = holding{Scripted: r.plugin, holds: r.holds}
	}
	if o.codex {
		r.answers = make(chan string, 1)
		r.codex = &plugintest.Scripted{PluginID: "codex", PluginName: "Codex", Script: r.helperTurn, ReadOnly: "its read-only sandbox"}
		plugins = append(plugins, r.codex)
	}
	reg, err := core.NewRegistry(plugins...)
	if err != nil {
		w.t.Fatal(err)
	}
	roots, err := core.NewRoots(o.roots)
	if err != nil {
		w.t.Fatal(err)
	}
	var tools core.AgentTools
	if len(o.tools) > 0 {
		tools = fakeTools(o.tools)
	}
	rn, err := remote.NewRunner(r.nc, remote.RunnerConfig{Name: o.name, Plugins: reg, Interval: o.interval, AgentTools: tools,
		Workspace: workspace.Machine{Roots: roots, WorktreeDir: o.worktreeDir},
		Redactor:  core.NewRedactor([]string{o.secret}), AttachmentMaxBytes: o.maxUpload})
	if err != nil {
		w.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		rn.Run(ctx)
		close(done)
	}()
	var once sync.Once
	r.kill = func() {
		once.Do(func() {
			r.nc.Close() // gone from the network first, as in a crash
			cancel()
			<-done
		})
	}
	r.stop = func() {
		cancel()
		<-done
		// The server has the runner's unsubscriptions once it answers.
		if err := r.nc.Flush(); err != nil {
			w.t.Fatal(err)
		}
	}
	w.t.Cleanup(r.kill)
	return r
}

// gateway is a gateway's router on its own connection, with a recorder
// for its platform.
type gateway struct {
	gw   *remote.Gateway
	nc   *nats.Conn
	rec  *platformtest.Recorder
	stop func(crash bool)
}

// startGateway starts a gateway, which becomes w.gw. Its stop(true) takes
// it off the network before its router stops, as a crash does; stop(false)
// shuts the router down first, as a restart does.
func (w *world) startGateway() *gateway {
	w.t.Helper()
	g := &gateway{nc: w.dial(w.gwNATS)}
	var err error
	offline := w.offlineAfter
	if offline == 0 {
		offline = 3 * time.Second
	}
	g.gw, err = remote.NewGateway(context.Background(), g.nc, remote.GatewayConfig{OfflineAfter: offline,
		Clock: w.clock, Redactor: core.NewRedactor(w.gwSecrets)})
	if err != nil {
		w.t.Fatal(err)
	}
	local, err := core.NewRegistry(localPlugin(w.t))
	if err != nil {
		w.t.Fatal(err)
	}
	access := core.NewAccess()
	access.Allow("fake", admin)
	access.Admin("fake", admin)
	access.Allow("fake", user)
	roots, err := core.NewRoots([]string{w.t.TempDir()})
	if err != nil {
		w.t.Fatal(err)
	}
	cfg := core.RouterConfig{Plugins: local, Access: access, Roots: roots, Runners: g.gw}
	if len(w.gwTools) > 0 {
		cfg.AgentTools = fakeTools(w.gwTools)
	}
	router := core.NewRouter(context.Background(), cfg, w.convs)
	ctx, cancel := context.WithCancel(context.Background())
	g.rec = platformtest.NewRecorder(nil, core.Limits{})
	done := make(chan struct{})
	go func() {
		g.rec.Run(ctx, router.Attach(g.rec))
		close(done)
	}()
	var once sync.Once
	g.stop = func(crash bool) {
		once.Do(func() {
			if crash {
				g.nc.Close()
			}
			router.Shutdown()
			router.Wait()
			cancel()
			<-done
			g.gw.Close()
			g.nc.Close()
		})
	}
	w.t.Cleanup(func() { g.stop(false) })
	w.gw = g
	return g
}

// startOn starts the admin's conversation in r's app directory, on r.
func (w *world) startOn(r *runner) {
	w.t.Helper()
	w.say("/claude start " + r.name + ":" + r.app())
	w.expect("conversation started in " + r.name + ":")
}

// key is the conversation of from in channel c.
func key(from string) core.ConversationKey {
	return core.ConversationKey{Platform: "fake", User: from, Channel: "c"}
}

func (w *world) say(text string) { w.sayAs(key(admin), "", text) }

// sayAs writes text in conversation k, as from (the key's user when
// empty).
func (w *world) sayAs(k core.ConversationKey, from, text string) {
	w.gw.rec.Say(core.Message{Key: k, From: from, Text: text})
}

// expect waits for a message containing every one of texts on the
// current gateway.
func (w *world) expect(texts ...string) string {
	w.t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case c := <-w.gw.rec.Written():
			if containsAll(c.Text, texts) {
				return c.Text
			}
		case <-timeout:
			w.t.Fatalf("timed out waiting for %q; messages:\n%s", texts, strings.Join(w.gw.rec.Messages(), "\n---\n"))
		}
	}
}

// expectEach waits for a message containing each of texts, in any order
// (a reply and a notice written at once), and returns them in texts'.
func (w *world) expectEach(texts ...string) []string {
	w.t.Helper()
	got := make([]string, len(texts))
	timeout := time.After(30 * time.Second)
	for missing := len(texts); missing > 0; {
		select {
		case c := <-w.gw.rec.Written():
			for i, want := range texts {
				if got[i] == "" && strings.Contains(c.Text, want) {
					got[i] = c.Text
					missing--
				}
			}
		case <-timeout:
			w.t.Fatalf("timed out waiting for each of %q; messages:\n%s", texts, strings.Join(w.gw.rec.Messages(), "\n---\n"))
		}
	}
	return got
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// waitOnline waits until /runners shows name online: until the gateway
// has heard the runner, /runners says no runner has connected.
func (w *world) waitOnline(name string) {
	w.t.Helper()
	for {
		w.say("/runners")
		if got := w.expect("unner"); strings.Contains(got, name+" (online)") {
			return
		}
	}
}

// recv receives from ch, failing the test if nothing comes.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
	panic("unreachable")
}
