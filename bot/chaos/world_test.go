package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jake-bot/jake-bot/platforms/slack/slacktest"
	"github.com/jake-bot/jake-bot/platforms/telegram/telegramtest"
	"github.com/jake-bot/jake-bot/plugins/remote"
)

// world is what the run drives: the NATS server, the platform fakes, the
// gateways and runners (jakebot processes), and the folders they work in.
type world struct {
	t      *testing.T
	bin    string // the built jakebot
	dir    string
	logs   string // the processes' stderr, and the fake CLIs' fault log
	mark   string // the process marker every process started gets
	nats   *natsServer
	tg     *telegramtest.Server
	sl     *slacktest.Server
	tgUser []telegramtest.User
	slUser []string

	mu       sync.Mutex
	gateways []*proc // alive: the one with the lease, and standbys
	killed   int     // gateways killed so far
	runners  map[string]*proc
	started  int
}

// proc is a jakebot process: a gateway or a runner.
type proc struct {
	name   string
	cmd    *exec.Cmd
	exited chan struct{}
}

// natsServer is the NATS server embedded in the test, restarted on the
// same port with the same store, as a server restarted on its host is.
type natsServer struct {
	t    testing.TB
	opts server.Options
	srv  *server.Server
	url  string
}

func startNATS(t testing.TB, storeDir string) *natsServer {
	n := &natsServer{t: t, opts: server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true,
		JetStream: true, StoreDir: storeDir}}
	n.start()
	n.opts.Port = n.srv.Addr().(*net.TCPAddr).Port
	n.url = n.srv.ClientURL()
	t.Cleanup(func() { n.srv.Shutdown() })
	return n
}

func (n *natsServer) start() {
	opts := n.opts
	ns, err := server.NewServer(&opts)
	if err != nil {
		n.t.Fatalf("nats server: %v", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		n.t.Fatal("nats server did not start")
	}
	n.srv = ns
}

// restart stops the server, which drops every client, and starts it again
// down after it is down. The clients reconnect by themselves.
func (n *natsServer) restart(down time.Duration) {
	n.srv.Shutdown()
	n.srv.WaitForShutdown()
	time.Sleep(down) // the outage itself, not a synchronisation
	n.start()
}

// buildJakebot builds the jakebot binary once per test binary.
var built struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

func buildJakebot(t testing.TB, dir string) string {
	t.Helper()
	built.once.Do(func() {
		built.path = filepath.Join(dir, "jakebot")
		built.out, built.err = exec.Command("go", "build", "-o", built.path, "github.com/jake-bot/jake-bot/cmd/jakebot").CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("build jakebot: %v\n%s", built.err, built.out)
	}
	return built.path
}

// roots are the folders a gateway's and a runner's conversations work in.
func (w *world) root(machine string) string {
	d := filepath.Join(w.dir, "roots", machine)
	if err := os.MkdirAll(d, 0o755); err != nil {
		w.t.Fatal(err)
	}
	return d
}

// env is what every jakebot process gets: the fake CLI as Claude Code,
// short timeouts, and the NATS server.
func (w *world) env(machine string) []string {
	home := filepath.Join(w.dir, "home", machine)
	os.MkdirAll(home, 0o755)
	root := w.root(machine)
	return []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, w.mark,
		"NATS_URL=" + w.nats.url,
		"CLAUDE_BIN=" + os.Args[0], cliEnv + "=1", cliLogEnv + "=" + w.logs,
		"CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude"),
		"ALLOWED_ROOTS=" + root, "DEFAULT_WORKDIR=" + root,
		"SANDBOX=off", "LOG_LEVEL=debug",
		// A hung CLI is stopped after its silence: the fake's deltas come
		// far more often.
		"TURN_IDLE_TIMEOUT=" + idleTimeout.String(), "TURN_TIMEOUT=2m",
		"NOTIFY_AFTER=0", "USER_RATE=6000/m", "QUEUE_LIMIT=20",
	}
}

const idleTimeout = 10 * time.Second

// gatewayEnv adds the chat platforms, on their fakes.
func (w *world) gatewayEnv() []string {
	var tgIDs []string
	for _, u := range w.tgUser {
		tgIDs = append(tgIDs, strconv.FormatInt(u.ID, 10))
	}
	return append(w.env("gateway"),
		"TELEGRAM_TOKEN="+telegramtest.Token, "TELEGRAM_API_ENDPOINT="+w.tg.Endpoint(),
		"TELEGRAM_ALLOWED_USERS="+strings.Join(tgIDs, ","), "TELEGRAM_ADMIN_USERS="+strings.Join(tgIDs, ","),
		"TELEGRAM_EDIT_INTERVAL=200ms", "TELEGRAM_POLL_TIMEOUT=1s", "TELEGRAM_GROUP_WRITES_PER_MINUTE=100000",
		"SLACK_APP_TOKEN="+slacktest.AppToken, "SLACK_BOT_TOKEN="+slacktest.BotToken, "SLACK_API_URL="+w.sl.URL,
		"SLACK_ALLOWED_USERS="+strings.Join(w.slUser, ","), "SLACK_ADMIN_USERS="+strings.Join(w.slUser, ","),
		"SLACK_EDIT_INTERVAL=200ms", "SLACK_DEFAULT_PLUGIN=claude",
	)
}

// spawn starts jakebot with env and args; its stderr goes to a log file
// named after it.
func (w *world) spawn(name string, env []string, args ...string) *proc {
	w.mu.Lock()
	w.started++
	logName := filepath.Join(w.logs, name+"-"+strconv.Itoa(w.started)+".log")
	w.mu.Unlock()
	logf, err := os.Create(logName)
	if err != nil {
		w.t.Fatal(err)
	}
	cmd := exec.Command(w.bin, args...)
	cmd.Env, cmd.Stderr, cmd.Dir = env, logf, w.dir
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	p := &proc{name: name, cmd: cmd, exited: make(chan struct{})}
	go func() {
		cmd.Wait()
		logf.Close()
		close(p.exited)
	}()
	return p
}

// failoverAfter is the gateways' lease: how long a standby waits once the
// active one stopped renewing it. The default: with 3 s, every NATS restart
// and a loaded machine's stalls cost the active gateway its lease.
const failoverAfter = 10 * time.Second

// startGateway starts a gateway, gw1, gw2…: the one that takes the lease
// serves, the others stand by.
func (w *world) startGateway() *proc {
	w.mu.Lock()
	name := "gw" + strconv.Itoa(len(w.gateways)+w.killed+1)
	w.mu.Unlock()
	p := w.spawn(name, append(w.gatewayEnv(), "GATEWAY_NAME="+name, "FAILOVER_AFTER="+failoverAfter.String()))
	w.mu.Lock()
	w.gateways = append(w.gateways, p)
	w.mu.Unlock()
	return p
}

// activeGateway returns the gateway that holds the lease, as the lease's
// key in NATS names it, waiting for one to hold it.
func (w *world) activeGateway(tb testing.TB) *proc {
	nc, err := nats.Connect(w.nats.url)
	if err != nil {
		tb.Fatalf("nats: %v", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		tb.Fatalf("jetstream: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The first gateway makes the bucket; another process's doing, which
	// only asking again shows.
	kv, err := js.KeyValue(ctx, "jakebot_lease")
	for errors.Is(err, jetstream.ErrBucketNotFound) && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
		kv, err = js.KeyValue(ctx, "jakebot_lease")
	}
	if err != nil {
		tb.Fatalf("the lease bucket: %v", err)
	}
	watch, err := kv.Watch(ctx, "active")
	if err != nil {
		tb.Fatalf("watch the lease: %v", err)
	}
	defer watch.Stop()
	for e := range watch.Updates() {
		if e == nil || e.Operation() != jetstream.KeyValuePut {
			continue // the initial values' end, an expiry's marker
		}
		var h remote.Holder
		if err := json.Unmarshal(e.Value(), &h); err != nil {
			tb.Fatalf("the lease's value %q: %v", e.Value(), err)
		}
		w.mu.Lock()
		for _, p := range w.gateways {
			if p.name == h.Name {
				w.mu.Unlock()
				return p
			}
		}
		w.mu.Unlock()
	}
	tb.Fatalf("no gateway alive holds the lease: %v", ctx.Err())
	return nil
}

// forget drops a killed gateway from the living ones.
func (w *world) forget(p *proc) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.gateways = slices.DeleteFunc(w.gateways, func(g *proc) bool { return g == p })
	w.killed++
}

// startRunner starts runner name (box1…).
func (w *world) startRunner(name string) *proc {
	p := w.spawn(name, append(w.env(name), "RUNNER_NAME="+name), "runner")
	w.mu.Lock()
	w.runners[name] = p
	w.mu.Unlock()
	return p
}

// kill SIGKILLs p and waits until it is reaped.
func (p *proc) kill(t testing.TB) {
	if !p.signal(syscall.SIGKILL) {
		t.Errorf("%s was not reaped a minute after SIGKILL", p.name)
	}
}

// stop ends p as its service manager would (SIGTERM), and waits for it.
func (p *proc) stop(t testing.TB) {
	if !p.signal(syscall.SIGTERM) {
		t.Errorf("%s did not stop a minute after SIGTERM", p.name)
		p.kill(t)
	}
}

// signal sends sig and reports whether p exited within a minute.
func (p *proc) signal(sig syscall.Signal) bool {
	p.cmd.Process.Signal(sig)
	select {
	case <-p.exited:
		return true
	case <-time.After(time.Minute):
		return false
	}
}

// stopAll stops every process, runners first.
func (w *world) stopAll() {
	w.mu.Lock()
	procs := make([]*proc, 0, len(w.runners)+len(w.gateways))
	for _, p := range w.runners {
		procs = append(procs, p)
	}
	procs = append(procs, w.gateways...)
	w.mu.Unlock()
	for _, p := range procs {
		p.stop(w.t)
	}
}
