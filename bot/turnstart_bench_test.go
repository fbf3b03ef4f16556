package bot_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// What a person waits for before the model even starts (issue 15): the
// time from their message to the model's request, with the real CLIs and
// fake models answering at once. Measured, not asserted: run with
// `make bench-warm`.

// BenchmarkTurnStart runs each CLI's turns through jakebot on the console
// with APPROVALS=ask, as configured by default, and auto, and reports message →
// model request for a turn started cold (the CLI spawned with the
// message) and warm (the CLI started before and waiting, its handshake
// done: jakebot_cli_warm_ready; Claude Code, which has none, 3 s after
// its spawn), and the memory
// of the waiting CLI's processes (VmRSS). Each op is one cold and one
// warm turn; medians are reported.
func BenchmarkTurnStart(b *testing.B) {
	// Every CLI speaks its protocol under both approval modes, so every
	// one starts warm.
	for _, tc := range []struct{ id, approvals string }{
		{"claude", "ask"}, {"claude", "auto"}, {"codex", "ask"}, {"codex", "auto"}, {"gemini", "ask"}, {"gemini", "auto"},
	} {
		id := tc.id
		b.Run(id+"-"+tc.approvals, func(b *testing.B) {
			r := newTurnBench(b, askers[id].otherCLI, tc.approvals, time.Hour)
			r.c.start(id)
			var cold, warm, rss []float64
			for b.Loop() {
				r.c.say("/stop") // no warm CLI: the next turn is cold
				r.c.expect(`Nothing is running`)
				r.w.waitWarm(0)
				r.quiet()
				took, _ := r.routed("cold", false)
				cold = append(cold, took)
				// The CLI has started and done its handshake, as
				// between a person's messages.
				r.w.waitReady(1)
				if id == "claude" {
					// Claude Code has no handshake: it writes nothing
					// before its message, so it is ready as soon as it
					// is spawned. Its start-up is given a fixed pause.
					time.Sleep(3 * time.Second)
				}
				rss = append(rss, r.rss())
				took, _ = r.routed("warm", false)
				warm = append(warm, took)
			}
			b.ReportMetric(median(cold), "cold-ms")
			b.ReportMetric(median(warm), "warm-ms")
			b.ReportMetric(median(rss), "warm-rss-MB")
		})
	}
}

// BenchmarkColdTurn compares message → model request through jakebot on
// the console with the same command spawned directly (the same arguments,
// environment, working directory and standard input), in pairs: what the
// bot adds to a cold turn. Claude Code runs with APPROVALS=ask and auto
// (its control protocol either way, the message on stdin); Codex and
// Gemini CLI speak only their protocols now (app-server, ACP), whose
// direct spawn would need a client.
// "router" runs jakebot in this process; "binary" runs the built jakebot,
// which re-executes itself and starts each CLI without CAP_SYS_PTRACE.
func BenchmarkColdTurn(b *testing.B) {
	for _, tc := range []struct {
		name, id, approvals string
		binary              bool
	}{
		{"claude-ask/router", "claude", "ask", false},
		{"claude-ask/binary", "claude", "ask", true},
		{"claude/router", "claude", "auto", false},
		{"claude/binary", "claude", "auto", true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			r := newTurnBench(b, askers[tc.id].otherCLI, tc.approvals, 0)
			input := claudeInput("direct")
			turn := func() (float64, spawned) { return r.routed("routed", true) }
			if tc.binary {
				turn = r.binary(tc.approvals)
			} else {
				r.c.start(tc.id)
			}
			_, again := turn()
			// The machine's load changes from second to second: compare
			// each turn with the direct spawn beside it, which take turns
			// at going first (the first of two spawns is the slower).
			var direct, routed, ratio []float64
			for i := 0; b.Loop(); i++ {
				var d float64
				if i%2 == 0 {
					d = again.time(r, input)
				}
				r.quiet()
				took, next := turn()
				if i%2 == 1 {
					d = again.time(r, input)
				}
				direct, routed, ratio = append(direct, d), append(routed, took), append(ratio, took/d)
				again = next
			}
			b.ReportMetric(median(direct), "direct-ms")
			b.ReportMetric(median(routed), "routed-ms")
			b.ReportMetric(median(ratio), "routed/direct")
		})
	}
}

// binary starts the built jakebot on the console with a Claude Code
// conversation, and returns what times a turn through it.
func (r *turnBench) binary(approvals string) func() (float64, spawned) {
	bin := startBinary(r.b, r.f.workdir, r.f.binEnv("STATE_FILE=off", "CONSOLE_INPUT=typed", "APPROVALS="+approvals, "WARM_TTL=0", "LOG_LEVEL=warn"))
	r.b.Cleanup(func() {
		bin.in.Close()
		bin.wait()
	})
	r.itself = bin.cmd.Process.Pid
	bin.say("/claude start")
	bin.expect(`conversation started`)
	return func() (float64, spawned) {
		return r.timed(func() { bin.say("routed") }, true, func() { bin.expect(`Fake default reply`) })
	}
}

// turnBench is a jakebot on the console with one CLI against its fake.
type turnBench struct {
	b *testing.B
	f *fixture
	m fakeModel
	c *chat
	w *warmWatch
	// bin is the CLI's path, as jakebot runs it.
	bin string
	// itself is the built jakebot's process, when it runs: it carries
	// the test's mark too.
	itself int
}

func newTurnBench(b *testing.B, cli otherCLI, approvals string, warmTTL time.Duration) *turnBench {
	f := newFixture(b)
	cfg := f.config()
	cfg.Approvals, cfg.StateFile, cfg.LogLevel = approvals, "off", "info"
	cfg.WarmTTL, cfg.WarmMax, cfg.HealthAddr = warmTTL, 4, "127.0.0.1:0"
	r := &turnBench{b: b, f: f, m: cli.setup(b, f, &cfg), bin: plugintest.CLIPath(b, cli.id)}
	d := openConsole(b, &cfg)
	d.(*consoleDriver).logs.quiet = true
	r.c = runChat(b, cfg, d)
	r.w = &warmWatch{c: r.c, f: f, metrics: "http://" + r.c.logs.waitLine(healthLine) + "/metrics"}
	return r
}

// routed times a turn through the in-process jakebot; with capture, it
// also returns the CLI's command as jakebot ran it.
func (r *turnBench) routed(text string, capture bool) (float64, spawned) {
	return r.timed(func() { r.c.say(text) }, capture, func() { r.c.expect(`Fake default reply`) })
}

// timed runs send, and returns the time until the model's first request
// (and, with capture, the command of the CLI that made it, held until
// then), once the turn has ended (ended waits for it).
func (r *turnBench) timed(send func(), capture bool, ended func()) (float64, spawned) {
	r.b.Helper()
	hold := make(chan struct{})
	if capture {
		r.m.Push(plugintest.Reply{Text: []string{plugintest.DefaultReply}, Hold: hold})
	}
	drain(r.m.Arrived())
	start := time.Now()
	send()
	took := waitRequest(r.b, r.m.Arrived(), start)
	var s spawned
	if capture {
		s = r.capture()
	}
	close(hold)
	ended()
	return took, s
}

// quiet waits until no CLI process of the test is left, so that a turn
// does not share the machine with the last one's exit.
func (r *turnBench) quiet() {
	r.c.until("no CLI process", func() bool {
		for _, p := range r.f.alive() {
			if p.PID != r.itself {
				return false
			}
		}
		return true
	})
}

// spawned is a CLI process as jakebot started it, to start again directly.
type spawned struct {
	bin  string
	args []string
	env  []string
	dir  string
}

// capture reads the running CLI's command line, environment and working
// directory from /proc: the test's one process that runs r.bin, as its
// interpreter's script or itself.
func (r *turnBench) capture() spawned {
	r.b.Helper()
	for _, p := range r.f.alive() {
		if p.PID == r.itself {
			continue
		}
		argv := procStrings(r.b, p.PID, "cmdline")
		var args []string
		switch {
		case argv[0] == r.bin:
			args = argv[1:]
		case len(argv) > 1 && argv[1] == r.bin:
			args = argv[2:]
		default:
			continue
		}
		dir, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", p.PID))
		if err != nil {
			r.b.Fatal(err)
		}
		return spawned{bin: r.bin, args: args, env: procStrings(r.b, p.PID, "environ"), dir: dir}
	}
	r.b.Fatalf("no process runs %s", r.bin)
	return spawned{}
}

func procStrings(b *testing.B, pid int, file string) []string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, file))
	if err != nil {
		b.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00")
}

// time spawns s as a shell would, with input on its standard input (none:
// /dev/null), and returns the time until the model's first request, once
// the CLI has exited.
func (s spawned) time(r *turnBench, input string) float64 {
	b, m := r.b, r.m
	b.Helper()
	r.quiet()
	cmd := exec.Command(s.bin, s.args...)
	cmd.Env, cmd.Dir = s.env, s.dir
	var in io.WriteCloser
	if input != "" {
		var err error
		if in, err = cmd.StdinPipe(); err != nil {
			b.Fatal(err)
		}
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	drain(m.Arrived())
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	if in != nil {
		io.WriteString(in, input)
	}
	took := waitRequest(b, m.Arrived(), start)
	// The protocol's input ends with the turn's result, as the plugin
	// ends it.
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if in != nil && bytes.Contains(sc.Bytes(), []byte(`"type":"result"`)) {
			in.Close()
		}
	}
	if err := cmd.Wait(); err != nil {
		b.Fatalf("%s: %v", s.bin, err)
	}
	return took
}

// claudeInput is a message as Claude Code's stream-json input line, as
// the plugin sends it.
func claudeInput(text string) string {
	line, _ := json.Marshal(map[string]any{"type": "user",
		"message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": text}}}})
	return string(line) + "\n"
}

// rss is the resident memory of the test's processes, in MB.
func (r *turnBench) rss() float64 {
	var kb int
	for _, p := range r.f.alive() {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.PID))
		if err != nil {
			continue // it ended
		}
		for line := range strings.Lines(string(data)) {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
				kb += n
			}
		}
	}
	return float64(kb) / 1024
}

func drain[T any](ch <-chan T) {
	for len(ch) > 0 {
		<-ch
	}
}

// waitRequest waits for the model's next request and returns the
// milliseconds since start.
func waitRequest(b *testing.B, arrived <-chan plugintest.Request, start time.Time) float64 {
	b.Helper()
	select {
	case <-arrived:
		return float64(time.Since(start).Microseconds()) / 1000
	case <-time.After(patience):
		b.Fatal("the model got no request")
		return 0
	}
}
