package bot_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jake-bot/jake-bot/bot"
	"github.com/jake-bot/jake-bot/plugins/claude"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
	"github.com/jake-bot/jake-bot/plugins/remote"
)

// One bot, two processes' worth of it: the gateway on the console and a
// runner, both on a real NATS server in the test process. The turn runs
// the real Claude CLI on the runner, in the runner's roots; the gateway
// has no CLI and no such directory.
func TestRunnerOnAnotherMachine(t *testing.T) {
	t.Parallel()
	const runnerKey = "sk-ant-api03-only-on-box2-0007"
	f := newFixture(t, plugintest.Reply{Text: []string{"Hello from box2."}}, plugintest.Reply{Text: []string{"Still box2."}},
		plugintest.Reply{Text: []string{"Your key is " + runnerKey + "."}})
	url := startNATS(t)
	rcfg := f.config()
	rcfg.Secrets = []string{runnerKey} // the runner's own, as its environment would give them
	startRunnerBot(t, url, rcfg)
	gateway := t.TempDir()
	gcfg := gatewayConfig(url, gateway)
	c := f.start(gcfg)
	for {
		c.say("/runners")
		if got := c.expect(`Runners|No runner`); strings.Contains(got, "box2 (online): claude") {
			break
		}
	}
	c.say("/claude start box2:" + f.workdir)
	c.expect(`started in box2:` + f.workdir)
	c.say("say hello")
	c.expect(`Hello from box2\.`)
	c.say("/claude start box2:" + gateway)
	c.expect(`outside`)
	c.close()

	// A new gateway finds the conversation in NATS's key-value bucket and
	// goes on in its session on box2.
	c = f.start(gcfg)
	c.say("/status", "are you there?")
	c.expect(`box2:` + f.workdir)
	c.expect(`Still box2\.`)
	// The runner's Claude CLI prints the runner's key: the chat gets it
	// blanked out by the runner (the gateway does not know it).
	c.say("what is my key?")
	if got := c.expect(`Your key is \[REDACTED\]\.`); strings.Contains(got, runnerKey) {
		t.Errorf("the chat got the runner's key: %s", got)
	}
	c.close()
	if reqs := f.model.Requests(); len(reqs) < 3 || !strings.Contains(reqs[len(reqs)-2].Text(), "say hello") {
		t.Error("the second gateway's turn did not resume the first's session on box2")
	}
	if n := len(f.model.Requests()); n == 0 {
		t.Error("the model got no request: the turn did not run on the runner")
	}
	sessions, _ := filepath.Glob(filepath.Join(f.home, ".claude", "projects", "*", "*.jsonl"))
	if len(sessions) == 0 {
		t.Error("the runner's Claude CLI wrote no session")
	}
}

// startNATS runs a real NATS server with JetStream in the test process.
func startNATS(t testing.TB) string { return startNATSWith(t, &server.Options{}) }

// startNATSWith is startNATS with opts (MaxPayload, say) beside those.
func startNATSWith(t testing.TB, opts *server.Options) string {
	opts.Host, opts.Port, opts.NoLog, opts.NoSigs = "127.0.0.1", -1, true, true
	opts.JetStream, opts.StoreDir = true, t.TempDir()
	ns, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server did not start")
	}
	t.Cleanup(ns.Shutdown)
	return ns.ClientURL()
}

// startRunnerBot runs `jakebot runner` box2 with cfg, on the NATS server
// at url.
func startRunnerBot(t *testing.T, url string, cfg bot.Config) {
	cfg.NATS = remote.Config{URL: url, RunnerName: "box2"}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- bot.RunRunner(ctx, cfg, bot.Stdio{Err: t.Output()}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("runner: %v", err)
		}
	})
}

// gatewayConfig is a gateway's on url, its roots dir, with no CLI of its
// own.
func gatewayConfig(url, dir string) bot.Config {
	return bot.Config{AllowedRoots: []string{dir}, TurnTimeout: time.Minute, QueueLimit: 5, LogLevel: "debug",
		NATS:   remote.Config{URL: url},
		Claude: claude.Config{Settings: cliproc.Settings{Bin: filepath.Join(dir, "no-claude-here")}}}
}

// The bot's own tools (issue 31) for the real Claude Code on a runner: the
// runner serves them beside the CLI and its calls go to the gateway on the
// Telegram fake. send_file sends the runner's file, a path outside the
// runner's roots is refused with the error reaching the model, notify
// posts, and ask_user's button press comes back as the tool's result.
func TestClaudeOnARunnerUsesTheBotsTools(t *testing.T) {
	t.Parallel()
	gateway := t.TempDir()
	outside := filepath.Join(gateway, "elsewhere.txt")
	if err := os.WriteFile(outside, []byte("not yours"), 0o600); err != nil {
		t.Fatal(err)
	}
	call := func(id, name string, in map[string]any) plugintest.Reply {
		return plugintest.Reply{Tool: &plugintest.ToolCall{ID: id, Name: "mcp__jakebot__" + name, Input: in}}
	}
	f := newFixture(t,
		call("toolu_send", "send_file", map[string]any{"path": "report.txt", "caption": "from box2"}),
		call("toolu_out", "send_file", map[string]any{"path": outside}),
		call("toolu_notify", "notify", map[string]any{"text": "tests pass on box2"}),
		call("toolu_ask", "ask_user", map[string]any{"question": "Deploy which?", "options": []string{"staging", "prod"}}),
		plugintest.Reply{Text: []string{"Done on box2."}})
	if err := os.WriteFile(filepath.Join(f.workdir, "report.txt"), []byte("all green on box2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url := startNATS(t)
	rcfg := f.config()
	rcfg.AgentTools = "send_file,notify,ask_user,schedule"
	startRunnerBot(t, url, rcfg)
	gcfg := gatewayConfig(url, gateway)
	gcfg.AgentTools = "send_file,notify,ask_user,schedule"
	d := openTelegram(t, &gcfg).(*telegramDriver)
	c := runChat(t, gcfg, d)
	startOnBox2(c, d, f.workdir)
	c.say("report and deploy")
	c.expect(`Deploy which\?`)
	c.press(owner, "prod")
	c.expect(`Done on box2\.`)

	checkFiles(t, d, received{name: "report.txt", caption: "from box2", data: []byte("all green on box2\n")})
	if !d.sentMessageWith("tests pass on box2") {
		t.Error("notify sent no new message")
	}
	reqs := f.model.Requests()
	if len(reqs) != 5 {
		t.Fatalf("the model saw %d requests, want 5", len(reqs))
	}
	if got := reqs[2].LastUserText(); !strings.Contains(got, "outside") || strings.Contains(got, "not yours") {
		t.Errorf("the refused call's result is %q, want the tool's error", got)
	}
	if got := reqs[4].LastUserText(); !strings.Contains(got, "prod") {
		t.Errorf("ask_user's result is %q, want the option pressed", got)
	}
}

// A message written while the real Claude Code runs a slow command on a
// runner goes into that turn (issue 29): the chat says so, and the model's
// request after the command holds it.
func TestSteeringClaudeOnARunner(t *testing.T) {
	t.Parallel()
	const steered = "STEER: also say banana"
	f := newFixture(t,
		plugintest.Reply{Tool: &plugintest.ToolCall{Name: "Bash", Input: map[string]any{
			"command": "while [ ! -f go ]; do sleep 0.05; done; echo done", "description": "Wait for go"}}},
		plugintest.Reply{Text: []string{"Done, banana."}})
	url := startNATS(t)
	startRunnerBot(t, url, f.config("--allowedTools", "Bash"))
	gcfg := gatewayConfig(url, t.TempDir())
	d := openTelegram(t, &gcfg).(*telegramDriver)
	c := runChat(t, gcfg, d)
	startOnBox2(c, d, f.workdir)
	c.say("run the slow command")
	c.expect(`Wait for go|while \[`)
	c.say(steered)
	c.expect(`Added to the running turn`)
	if err := os.WriteFile(filepath.Join(f.workdir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c.expect(`Done, banana\.`)
	reqs := f.model.Requests()
	if got := reqs[len(reqs)-1].Text(); !strings.Contains(got, steered) {
		t.Errorf("the model's request after the command does not hold the steered message:\n%s", got)
	}
}

// startOnBox2 starts a Claude Code conversation in workdir on box2, in a
// new topic, once the gateway has heard box2.
func startOnBox2(c *chat, d *telegramDriver, workdir string) {
	c.t.Helper()
	d.topic = d.srv.NewTopic(telegramTeam, "work")
	for {
		c.say("/runners")
		if got := c.expect(`Runners|No runner`); strings.Contains(got, "box2 (online)") {
			break
		}
	}
	c.say("/claude start box2:" + workdir)
	c.expect(`started in box2:`)
}

// A runner serves /healthz on HEALTH_ADDR, as the bot does: the image's
// HEALTHCHECK (jakebot health) asks it there.
func TestRunnerServesHealth(t *testing.T) {
	t.Parallel()
	cfg := gatewayConfig(startNATS(t), t.TempDir())
	cfg.NATS.RunnerName, cfg.HealthAddr = "box2", "127.0.0.1:0"
	logs, logw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- bot.RunRunner(ctx, cfg, bot.Stdio{Err: logw})
		logw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("runner: %v", err)
		}
	})
	// The health server starts before the runner serves.
	addr := ""
	lines := bufio.NewScanner(logs)
	for addr == "" && lines.Scan() && !strings.Contains(lines.Text(), `msg="runner serving"`) {
		if m := healthLine.FindStringSubmatch(lines.Text()); m != nil {
			addr = m[1]
		}
	}
	go io.Copy(io.Discard, logs)
	if addr == "" {
		t.Fatal("the runner logged no health address")
	}
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the runner's /healthz = %s, want 200", resp.Status)
	}
}

// Behind the sandbox on a runner (issue 43), as on the bot's own machine:
// the real Claude Code's shell tool on box2 reads neither the .env beside
// the workdir nor another CLI's environment, nor writes beside it; the
// turn answers, /stop stops the next one (interrupted, its session kept)
// and the one after resumes it.
func TestClaudeOnARunnerIsWalled(t *testing.T) {
	t.Parallel()
	probe := plugintest.NewWallProbe(t, plugintest.Sandbox(t, cliproc.SandboxBwrap, ""))
	hold := make(chan struct{})
	defer close(hold)
	f := newFixture(t, plugintest.Reply{Tool: &plugintest.ToolCall{Name: "Bash", Input: map[string]any{"command": probe.Command, "description": "Probe"}}},
		plugintest.Reply{Text: []string{"Walled on box2."}}, plugintest.Reply{Text: []string{"too late"}, Hold: hold},
		plugintest.Reply{Text: []string{"Still walled."}})
	url := startNATS(t)
	rcfg := f.config("--allowedTools", "Bash")
	rcfg.SandboxMode = cliproc.SandboxBwrap
	startRunnerBot(t, url, rcfg)
	gcfg := gatewayConfig(url, t.TempDir())
	d := openTelegram(t, &gcfg).(*telegramDriver)
	c := runChat(t, gcfg, d)
	startOnBox2(c, d, f.workdir)
	c.say("probe the walls")
	c.expect(`Walled on box2\.`)
	probe.Check(t, f.model.Requests(), f.workdir)

	for len(f.model.Arrived()) > 0 {
		<-f.model.Arrived()
	}
	c.say("take your time")
	select {
	case <-f.model.Arrived():
	case <-time.After(time.Minute):
		t.Fatal("the model was never asked")
	}
	c.say("/stop")
	c.expect(`Stopped\. The conversation continues with your next message\.`)
	c.say("still there?")
	c.expect(`Still walled\.`)
	reqs := f.model.Requests()
	if got := reqs[len(reqs)-1].Text(); !strings.Contains(got, "probe the walls") || !strings.Contains(got, "take your time") {
		t.Errorf("the turn after /stop did not resume the session:\n%s", got)
	}
}

// A gateway restart keeps a state larger than a NATS message (the
// server's max_payload, 32 KiB here): twenty schedules of 2.5 KB each
// that hardly compress. Before, each save of it failed ("state not
// saved: nats: maximum payload exceeded" logged at Error, nothing in the
// chat) and the next gateway found the state last saved, the conversation
// without its schedules ("Nothing is scheduled here").
func TestGatewayRestartKeepsAStateLargerThanAMessage(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	url := startNATSWith(t, &server.Options{MaxPayload: 32 << 10})
	startRunnerBot(t, url, f.config())
	gcfg := gatewayConfig(url, t.TempDir())
	c := f.start(gcfg)
	c.awaitBox2()
	c.say("/claude start box2:" + f.workdir)
	c.expect(`started in box2:`)
	const n = 20 // the most one user may have
	for i := 1; i <= n; i++ {
		var text strings.Builder
		for text.Len() < 2500 {
			text.WriteString(rand.Text()) // random: gzip hardly shrinks it
		}
		c.say(fmt.Sprintf("/every 1h schedule %d %s", i, text.String()))
		c.expect(fmt.Sprintf(`Scheduled #%d `, i))
	}
	c.close()

	c = f.start(gcfg)
	c.say("/schedules")
	got := c.expect(`#1 `)
	for i := 1; i <= n; i++ {
		if !strings.Contains(got, fmt.Sprintf("schedule %d ", i)) {
			t.Errorf("schedule %d lost in the restart:\n%.2000s", i, got)
		}
	}
	c.close()
}

// A gateway that finds the state in NATS unreadable (a part of it lost)
// starts all the same, with no conversations and an Error in its log, and
// its first save replaces that state by its own (the compare-and-set on
// what it found).
func TestGatewayRestartWithAnUnreadableState(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	url := startNATSWith(t, &server.Options{MaxPayload: 32 << 10})
	nc := natsConn(t, url)
	ctx := context.Background()
	store, err := remote.OpenState(ctx, nc)
	if err != nil {
		t.Fatal(err)
	}
	// What the state held does not matter: a part of it goes.
	data := make([]byte, 64<<10)
	rand.Read(data) // random: gzip cannot shrink it into one message
	if err := store.Save(ctx, data); err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, "jakebot_state")
	if err != nil {
		t.Fatal(err)
	}
	if err := kv.Purge(ctx, "chunks."+partsID(t, kv)+".0"); err != nil {
		t.Fatal(err)
	}

	// Its input ends after one command: it exits then, as it would at
	// once (before, "load state ... unreadable") had it not started.
	out := make(replies, 100)
	if err := bot.Run(ctx, gatewayConfig(url, f.workdir), bot.Stdio{In: strings.NewReader("/status all\n"), Out: out, Err: t.Output()}); err != nil {
		t.Fatalf("the gateway exited with %v", err)
	}
	select {
	case got := <-out:
		if !strings.HasPrefix(got, "0 active conversations") {
			t.Errorf("/status all = %q, want no conversations", got)
		}
	default: // it wrote what it wrote before it returned
		t.Error("no answer to /status all")
	}
	if info, err := remote.ReadState(ctx, nc); err != nil || info.Data == nil {
		t.Fatalf("the state after the gateway's save: %d bytes, %v; want it readable", len(info.Data), err)
	}
}

// partsID is the id of the parts the state in kv is saved in.
func partsID(t *testing.T, kv jetstream.KeyValue) string {
	t.Helper()
	keys, err := kv.Keys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if rest, ok := strings.CutPrefix(k, "chunks."); ok {
			id, _, _ := strings.Cut(rest, ".")
			return id
		}
	}
	t.Fatal("the state is in one message, not in parts")
	return ""
}
