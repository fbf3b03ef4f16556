package bot_test

import (
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// Warm CLIs on (issue 15), with the real CLIs through jakebot on the
// console: the CLI waiting when a conversation starts, or after a turn,
// is the one that runs the next turn; /metrics counts it, and counts it
// ready once its handshake is done (Codex's thread, Gemini's initialize;
// Claude Code has none); WARM_TTL,
// /conversation end and shutdown stop it; no process is left behind.
func TestWarmCLIsEndToEnd(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cli asker
		// again: the CLI warms after a turn too, resumed on the session.
		again bool
	}{
		{askers["claude"], true},
		{askers["codex"], true},
		{askers["gemini"], true},
	} {
		t.Run(tc.cli.id, func(t *testing.T) {
			t.Parallel()
			hold := make(chan struct{})
			f := newFixture(t)
			cfg := f.config()
			timers := coretest.NewManualClock()
			cfg.WarmTTL, cfg.WarmMax, cfg.Timers = 10*time.Minute, 4, timers
			cfg.HealthAddr, cfg.StateFile = "127.0.0.1:0", "off"
			model := tc.cli.setup(t, f, &cfg, plugintest.Reply{Text: []string{"One."}, Hold: hold}, plugintest.Reply{Text: []string{"Two."}})
			c := runChat(t, cfg, openConsole(t, &cfg))
			w := &warmWatch{c: c, f: f, metrics: "http://" + c.logs.waitLine(healthLine) + "/metrics"}

			c.start(tc.cli.id)
			w.waitWarm(1)
			w.waitReady(1)
			waiting := w.pids()
			c.say("first")
			c.until("the model's request", func() bool { return len(model.Requests()) == 1 })
			// The turn is the warm CLI: every process running now is one
			// that waited, or its child (a CLI still starting its own);
			// a cold turn's CLI would be jakebot's child.
			w.descendFrom(waiting)
			close(hold)
			c.expect(`One\.`)
			if !tc.again {
				w.waitWarm(0)
				c.say("/conversation end")
				c.expect(`Conversation ended`)
				return
			}
			w.waitWarm(1)
			c.say("/status")
			c.expect(`next turn's CLI warm`)
			c.say("second")
			c.expect(`Two\.`)
			if text := model.Requests()[1].Text(); !strings.Contains(text, "first") || !strings.Contains(text, "One.") {
				t.Errorf("the second turn did not resume the first: %q", text)
			}
			w.waitWarm(1)
			timers.Advance(10 * time.Minute) // WARM_TTL
			w.waitWarm(0)
			w.noProcesses("WARM_TTL")

			c.say("/" + tc.cli.id + " start")
			c.expect(`conversation started`)
			w.waitWarm(1)
			c.say("/conversation end")
			c.expect(`Conversation ended`)
			w.waitWarm(0)
			w.noProcesses("/conversation end")
			// Shutdown, with a CLI warm: the fixture checks that no
			// process outlives the bot.
			c.say("/" + tc.cli.id + " start")
			c.expect(`conversation started`)
			w.waitWarm(1)
		})
	}
}

var healthLine = regexp.MustCompile(`msg="health and metrics" addr=(\S+)`)

// warmWatch reads a bot's warm CLIs from outside: /metrics, and the
// processes that carry the fixture's mark.
type warmWatch struct {
	c       *chat
	f       *fixture
	metrics string
}

// waitWarm waits until jakebot_cli_warm is n.
func (w *warmWatch) waitWarm(n int) {
	w.c.t.Helper()
	w.waitGauge("jakebot_cli_warm", n)
}

// waitReady waits until jakebot_cli_warm_ready is n: the warm CLIs have
// started, their handshake done.
func (w *warmWatch) waitReady(n int) {
	w.c.t.Helper()
	w.waitGauge("jakebot_cli_warm_ready", n)
}

// waitGauge waits until the gauge name of /metrics is n.
func (w *warmWatch) waitGauge(name string, n int) {
	w.c.t.Helper()
	want := name + " " + strconv.Itoa(n) + "\n"
	w.c.until(want, func() bool {
		resp, err := http.Get(w.metrics)
		if err != nil {
			w.c.t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return strings.Contains(string(body), want)
	})
}

// pids returns the test's processes now.
func (w *warmWatch) pids() map[int]bool {
	w.c.t.Helper()
	set := map[int]bool{}
	for _, p := range w.f.alive() {
		set[p.PID] = true
	}
	if len(set) == 0 {
		w.c.t.Fatal("no process is warm")
	}
	return set
}

// descendFrom checks that every process of the test is one of ancestors,
// or a descendant of one.
func (w *warmWatch) descendFrom(ancestors map[int]bool) {
	w.c.t.Helper()
	alive := w.f.alive()
	byPID := map[int]plugintest.Process{}
	for _, p := range alive {
		byPID[p.PID] = p
	}
	for _, p := range alive {
		cur, ok := p, true
		for ok && !ancestors[cur.PID] {
			cur, ok = byPID[parent(cur)]
		}
		if !ok {
			w.c.t.Errorf("process %v started for the turn, though a CLI was warm", p)
		}
	}
}

// parent is p's parent process, from its Stat: "(comm) state ppid pgrp".
func parent(p plugintest.Process) int {
	f := strings.Fields(p.Stat[strings.LastIndexByte(p.Stat, ')')+1:])
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// noProcesses waits until no process of the test is left, after what.
func (w *warmWatch) noProcesses(what string) {
	w.c.t.Helper()
	w.c.until("no process left after "+what, func() bool { return len(w.f.alive()) == 0 })
}
