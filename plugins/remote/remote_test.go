package remote_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/platformtest"
	"github.com/jake-bot/jake-bot/plugins/remote"
)

// runNATS runs a real NATS server in the test process, on loopback.
func runNATS(t testing.TB, opts *server.Options) string {
	t.Helper()
	if opts == nil {
		opts = &server.Options{}
	}
	opts.Host, opts.Port, opts.NoLog, opts.NoSigs = "127.0.0.1", -1, true, true
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server did not start")
	}
	t.Cleanup(s.Shutdown)
	return s.ClientURL()
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

// runnerPlugin is the runner's "claude": it echoes, asks when told to,
// and waits to be stopped when told to.
type runnerPlugin struct {
	started chan core.Turn
}

func (p *runnerPlugin) ID() string   { return "claude" }
func (p *runnerPlugin) Name() string { return "Claude Code" }
func (p *runnerPlugin) Conversations(ctx context.Context, workdir string) ([]core.ConversationInfo, error) {
	return []core.ConversationInfo{{ID: "11111111-2222-4333-8444-555555555555", Title: "earlier in " + filepath.Base(workdir)}}, nil
}
func (p *runnerPlugin) Run(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	p.started <- t
	emit(core.Event{Kind: core.EventSession, ResumeToken: "11111111-2222-4333-8444-555555555555"})
	switch t.Prompt {
	case "ask":
		answered := make(chan core.Answer, 1)
		emit(core.Event{Kind: core.EventQuestion, Question: &core.Question{Tool: "Bash", Summary: "rm -rf build",
			Answer: func(a core.Answer) { answered <- a }}})
		select {
		case a := <-answered:
			emit(core.TextEvent(map[core.Decision]string{core.Allow: "the answer was allow", core.Deny: "the answer was deny"}[a.Decision]))
		case <-ctx.Done():
			return core.TurnResult{}, context.Cause(ctx)
		}
	case "wait":
		emit(core.TextEvent("waiting on " + t.Workdir))
		<-ctx.Done()
		return core.TurnResult{}, context.Cause(ctx)
	default:
		emit(core.TextEvent("remote echo: " + t.Prompt))
	}
	return core.TurnResult{ResumeToken: "11111111-2222-4333-8444-555555555555", CostUSD: 0.01}, nil
}

// localPlugin is the gateway's own "claude", which must never run here.
type localPlugin struct{ t *testing.T }

func (p localPlugin) ID() string   { return "claude" }
func (p localPlugin) Name() string { return "Claude Code" }
func (p localPlugin) Conversations(context.Context, string) ([]core.ConversationInfo, error) {
	return nil, nil
}
func (p localPlugin) Run(context.Context, core.Turn, func(core.Event)) (core.TurnResult, error) {
	p.t.Error("a turn of a runner's conversation ran on the gateway")
	return core.TurnResult{}, errors.New("not here")
}

// world is a gateway's router and one runner, box2, on one NATS server.
type world struct {
	t         *testing.T
	url       string
	rec       *platformtest.Recorder
	plugin    *runnerPlugin
	runnerDir string
	stopBox2  func()
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{t: t, url: runNATS(t, nil), plugin: &runnerPlugin{started: make(chan core.Turn, 16)}}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w.runnerDir = dir
	if err := os.Mkdir(filepath.Join(dir, "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	w.stopBox2 = w.startRunner("box2", dir)

	gw, err := remote.NewGateway(connect(t, w.url), 3*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gw.Close)
	local, err := core.NewRegistry(localPlugin{t})
	if err != nil {
		t.Fatal(err)
	}
	access := core.NewAccess()
	access.Allow("fake", "u")
	access.Admin("fake", "u")
	roots, err := core.NewRoots([]string{t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	router := core.NewRouter(ctx, core.RouterConfig{Plugins: local, Access: access, Roots: roots, Runners: gw}, nil)
	w.rec = platformtest.NewRecorder(nil, core.Limits{})
	done := make(chan struct{})
	go func() {
		w.rec.Run(ctx, router.Attach(w.rec))
		close(done)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		router.Shutdown()
		router.Wait()
	})
	return w
}

// startRunner runs a runner on its own connection; the function it
// returns kills it, connection and all.
func (w *world) startRunner(name, root string) (kill func()) {
	w.t.Helper()
	nc := connect(w.t, w.url)
	reg, err := core.NewRegistry(w.plugin)
	if err != nil {
		w.t.Fatal(err)
	}
	roots, err := core.NewRoots([]string{root})
	if err != nil {
		w.t.Fatal(err)
	}
	r, err := remote.NewRunner(nc, name, reg, roots, 100*time.Millisecond, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		r.Run(ctx)
		close(done)
	}()
	var once sync.Once
	kill = func() {
		once.Do(func() {
			nc.Close() // gone from the network first, as in a crash
			cancel()
			<-done
		})
	}
	w.t.Cleanup(kill)
	return kill
}

func (w *world) say(text string) {
	w.rec.Say(core.Message{Key: core.ConversationKey{Platform: "fake", User: "u", Channel: "c"}, Text: text})
}

// expect waits for a message containing text.
func (w *world) expect(text string) string {
	w.t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case c := <-w.rec.Written():
			if strings.Contains(c.Text, text) {
				return c.Text
			}
		case <-timeout:
			w.t.Fatalf("timed out waiting for %q; messages:\n%s", text, strings.Join(w.rec.Messages(), "\n---\n"))
		}
	}
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

// A conversation on another machine: started there within the runner's
// roots, its turns run there with the events back in order, questions
// answered from the chat, its history listed there; paths outside the
// runner's roots and unknown runners refused.
func TestConversationOnARunner(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.waitOnline("box2")
	app := filepath.Join(w.runnerDir, "app")

	w.say("/claude start box2:" + app)
	w.expect("conversation started in box2:" + app)
	w.say("hello")
	w.expect("remote echo: hello")
	if turn := <-w.plugin.started; turn.Workdir != app || turn.Prompt != "hello" {
		t.Errorf("the runner ran %+v", turn)
	}

	w.say("ask")
	w.expect("rm -rf build")
	w.say("/allow")
	w.expect("the answer was allow")
	<-w.plugin.started

	w.say("/claude conversations")
	w.expect("earlier in app")

	w.say("/status")
	w.expect("box2:" + app)

	w.say("/claude start box2:/etc")
	w.expect("outside")
	w.say("/claude start box9:/srv")
	w.expect(`no runner "box9" has connected`)
	w.say("/file notes.txt")
	w.expect("only for conversations on this machine")
}

// A runner that goes away mid-turn: the chat is told, and the
// conversation is offline until the runner is back.
func TestRunnerLostMidTurn(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.waitOnline("box2")
	app := filepath.Join(w.runnerDir, "app")
	w.say("/claude start box2:" + app)
	w.expect("conversation started")
	w.say("wait")
	w.expect("waiting on " + app)
	<-w.plugin.started
	w.stopBox2()
	w.expect("runner box2 went offline during the turn")
	w.say("are you back?")
	w.expect("runner box2 is offline")

	w.startRunner("box2", w.runnerDir)
	w.waitOnline("box2")
	w.say("now?")
	w.expect("remote echo: now?")
}

// The server, not the runner's good manners, keeps a runner to its own
// subjects: box3 can neither send box2 a turn nor speak as box2.
func TestRunnerPermissions(t *testing.T) {
	t.Parallel()
	runner := func(name, password string) *server.User {
		own := []string{"jakebot.v1.runner." + name + ".>"}
		return &server.User{Username: name, Password: password, Permissions: &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: append([]string{"jakebot.v1.announce." + name}, own...)},
			Subscribe: &server.SubjectPermission{Allow: append([]string{"jakebot.v1.discover"}, own...)},
			Response:  &server.ResponsePermission{MaxMsgs: 1},
		}}
	}
	url := runNATS(t, &server.Options{Users: []*server.User{
		{Username: "gateway", Password: "gw-secret"}, runner("box2", "b2-secret"), runner("box3", "b3-secret"),
	}})
	violations := make(chan error, 8)
	box3 := connect(t, url, nats.UserInfo("box3", "b3-secret"), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		violations <- err
	}))
	box2 := connect(t, url, nats.UserInfo("box2", "b2-secret"))
	heard := make(chan *nats.Msg, 8)
	if _, err := box2.ChanSubscribe("jakebot.v1.runner.box2.>", heard); err != nil {
		t.Fatal(err)
	}
	box2.Flush()
	for _, subject := range []string{"jakebot.v1.runner.box2.turn", "jakebot.v1.announce.box2"} {
		if err := box3.Publish(subject, []byte(`{"id":"forged"}`)); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-violations:
			if !strings.Contains(strings.ToLower(err.Error()), "permissions violation") {
				t.Errorf("publish to %s: %v, want a permissions violation", subject, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the server let box3 publish to %s", subject)
		}
	}
	// box3's own subjects pass, and box2 heard nothing forged.
	if err := box3.Publish("jakebot.v1.runner.box3.turn.x.event", nil); err != nil {
		t.Fatal(err)
	}
	if err := box3.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := box2.Flush(); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-heard:
		t.Errorf("box2 heard %s: %s", m.Subject, m.Data)
	default:
	}
}
