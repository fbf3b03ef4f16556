package cliproc_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

func exitCode() int {
	n, _ := strconv.Atoi(os.Getenv("EXIT"))
	return n
}

// protocolCLI is a CLI that speaks a line protocol on its stdin: it says
// "ready" at once, answers {"prompt":…} with {"text":…} and a result,
// unless HOLD is set, when only {"interrupt":true} ends the turn, with a
// result "interrupted". It exits at the end of its input, unless LINGER
// is set: then it stays until killed, or with LINGER=term until SIGTERM,
// which it takes as a request to exit, exiting 0 (as Node does). With START set, it says "ready"
// only once that file exists: a CLI still starting.
func protocolCLI() {
	for start := os.Getenv("START"); start != ""; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(start); err == nil {
			break
		}
	}
	fmt.Println(`{"ready":"s-1"}`)
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		var m struct {
			Prompt    string `json:"prompt"`
			Interrupt bool   `json:"interrupt"`
		}
		json.Unmarshal(sc.Bytes(), &m)
		switch {
		case m.Prompt != "" && os.Getenv("HOLD") == "":
			fmt.Printf(`{"text":%q}`+"\n"+`{"result":"done"}`+"\n", "you said "+m.Prompt)
		case m.Prompt != "":
			fmt.Println(`{"text":"working"}`)
		case m.Interrupt:
			fmt.Println(`{"result":"interrupted"}`)
		}
	}
	if os.Getenv("LINGER") == "term" {
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		<-term
		os.Exit(0)
	}
	if os.Getenv("LINGER") != "" {
		select {}
	}
}

// lineProtocol reads the fake CLIs' lines: "ready" is the session, after
// which the message is sent as a prompt; "text" is answer text; "result"
// ends the turn.
type lineProtocol struct {
	link       *cliproc.Link
	session    string
	result     *core.TurnResult
	mu         sync.Mutex
	interrupts int
}

func (p *lineProtocol) Line(b []byte) {
	var m struct{ Ready, Text, Result string }
	if json.Unmarshal(b, &m) != nil {
		p.link.Emit(core.TextEvent("garbage: " + string(b)))
		return
	}
	switch {
	case m.Ready != "":
		p.session = m.Ready
		p.link.Emit(core.Event{Kind: core.EventSession, SessionID: m.Ready})
		p.link.Ready(func(t core.Turn) { p.link.Send(map[string]string{"prompt": t.Prompt}) })
	case m.Text != "":
		p.link.Emit(core.TextEvent(m.Text))
	case m.Result != "":
		p.result = &core.TurnResult{IsError: m.Result == "failed"}
		p.link.Done()
	}
}

func (p *lineProtocol) Outcome() cliproc.Outcome {
	return cliproc.Outcome{Result: p.result, SessionID: p.session}
}

// interrupting is a lineProtocol that interrupts through the protocol.
type interrupting struct{ lineProtocol }

func (p *interrupting) Interrupt() error {
	p.mu.Lock()
	p.interrupts++
	p.mu.Unlock()
	return p.link.Send(map[string]bool{"interrupt": true})
}

// fakeCLI is the test binary as a CLI playing helper, its processes
// marked for the leak check at the end of the test.
func fakeCLI(t *testing.T, helper string, env ...string) *cliproc.CLI {
	t.Helper()
	mark, alive := plugintest.ProcessMarker(t)
	t.Cleanup(func() {
		if pids := alive(); len(pids) != 0 {
			t.Errorf("processes %v outlived the test", pids)
		}
	})
	return &cliproc.CLI{Name: "Fake CLI", Bin: os.Args[0], Install: "Install it.",
		Env: append([]string{"JAKEBOT_HELPER=" + helper, mark}, env...)}
}

// collect gathers a turn's events.
type collect struct {
	mu     sync.Mutex
	events []string
}

func (c *collect) emit(ev core.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events = append(c.events, strings.TrimSpace(plugintest.FormatEvent(ev)))
}

func (c *collect) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.events, "; ")
}

func lines(link *cliproc.Link) cliproc.Protocol { return &lineProtocol{link: link} }

// A one-shot turn: how it ended decides the error, and the session id is
// the result's, else the output's session, else the turn's own.
func TestRunEnding(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, stream, exit string
		token, err, events string
	}{
		{name: "result", stream: `{"ready":"s-2"}` + "\n" + `{"result":"done"}`, exit: "0",
			token: "s-2", events: `session token="s-2" model=""`},
		{name: "failure shown", stream: `{"result":"failed"}`, exit: "1", token: "old"},
		{name: "no result", stream: `{"text":"half"}`, exit: "0", token: "old", events: `text "half"`,
			err: "Fake CLI ended without a result (exit code 0):\na warning"},
		{name: "killed", stream: `{"result":"done"}`, exit: "137", token: "old",
			err: "Fake CLI failed (exit code 137: killed, perhaps for lack of memory):\na warning"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cli := fakeCLI(t, "stream", "STREAM="+tc.stream, "EXIT="+tc.exit)
			var c collect
			res, err := cli.Run(context.Background(), core.Turn{Workdir: t.TempDir(), SessionID: "old"}, nil, lines, c.emit)
			if res.SessionID != tc.token || c.String() != tc.events {
				t.Errorf("Run = %+v with events %q, want token %q and events %q", res, c.String(), tc.token, tc.events)
			}
			var ue *core.UserError
			if tc.err == "" && err != nil || tc.err != "" && (!errors.As(err, &ue) || ue.Msg != tc.err) {
				t.Errorf("Run error = %v, want %q", err, tc.err)
			}
		})
	}
}

func TestRunNotFound(t *testing.T) {
	t.Parallel()
	cli := &cliproc.CLI{Name: "Fake CLI", Bin: "/nonexistent/fake", Install: "Install it with care."}
	_, err := cli.Run(context.Background(), core.Turn{Workdir: t.TempDir()}, nil, lines, func(core.Event) {})
	var ue *core.UserError
	if !errors.As(err, &ue) || ue.Msg != "Fake CLI CLI not found (/nonexistent/fake). Install it with care." {
		t.Errorf("Run error = %v, want the user error saying how to install it", err)
	}
}

// A CLI opened before its message exists: what it emits meanwhile comes
// first, and the message reaches it when the turn runs.
func TestOpenThenRun(t *testing.T) {
	t.Parallel()
	cli := fakeCLI(t, "protocol")
	conn, err := cli.Open(context.Background(), core.Turn{Workdir: t.TempDir()}, nil, lines)
	if err != nil {
		t.Fatal(err)
	}
	if !conn.Fresh() {
		t.Error("a CLI whose protocol cannot tell is stale")
	}
	var c collect
	res, err := conn.Run(context.Background(), core.Turn{Prompt: "hi"}, c.emit)
	want := `session token="s-1" model=""; text "you said hi"`
	if err != nil || res.SessionID != "s-1" || c.String() != want {
		t.Errorf("Run = %+v, %v with events %q, want %q", res, err, c.String(), want)
	}
}

// A CLI opened for a turn that may write does not run a read-only one: it
// is stopped, its message unsent, and the turn refused.
func TestOpenForAWritingTurnRefusesAReadOnlyOne(t *testing.T) {
	t.Parallel()
	cli := fakeCLI(t, "protocol")
	conn, err := cli.Open(context.Background(), core.Turn{Workdir: t.TempDir()}, nil, lines)
	if err != nil {
		t.Fatal(err)
	}
	var c collect
	_, err = conn.Run(context.Background(), core.Turn{Prompt: "hi", ReadOnly: true}, c.emit)
	if !errors.Is(err, cliproc.ErrNotReadOnly) || strings.Contains(c.String(), "you said hi") {
		t.Errorf("Run = %v with events %q, want ErrNotReadOnly and no message", err, c.String())
	}
}

// An opened CLI is Ready only once its protocol says it can take the
// message (its handshake done), not when it was spawned: what a warm
// turn waits for before it counts as started.
func TestOpenIsReadyAfterTheHandshake(t *testing.T) {
	t.Parallel()
	start := filepath.Join(t.TempDir(), "start")
	cli := fakeCLI(t, "protocol", "START="+start)
	conn, err := cli.Open(context.Background(), core.Turn{Workdir: t.TempDir()}, nil, lines)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	select {
	case <-conn.Ready():
		t.Fatal("Ready before the CLI said it was")
	default:
	}
	if err := os.WriteFile(start, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-conn.Ready():
	case <-time.After(20 * time.Second): // a failure guard
		t.Fatal("not Ready after the CLI said it was")
	}
}

// A CLI that stays on after its turn's end (its input closed) is stopped
// ExitGrace later, and its turn ends as it went: no error for the stop,
// whether the signal kills it or it exits 0 on it (Gemini CLI kept alive
// by a command it runs in the background).
func TestALingeringCLIIsStoppedAfterItsTurn(t *testing.T) {
	t.Parallel()
	for _, linger := range []string{"1", "term"} {
		t.Run("LINGER="+linger, func(t *testing.T) {
			t.Parallel()
			cli := fakeCLI(t, "protocol", "LINGER="+linger)
			cli.ExitGrace = time.Millisecond
			var c collect
			res, err := cli.Converse(context.Background(), core.Turn{Workdir: t.TempDir(), Prompt: "hi"}, nil, lines, c.emit)
			if err != nil || res.SessionID != "s-1" || res.IsError || !strings.Contains(c.String(), "you said hi") {
				t.Errorf("Converse = %+v, %v with events %q; want the turn as it went", res, err, c.String())
			}
		})
	}
}

// An opened CLI that is never run is stopped by Close.
func TestOpenThenClose(t *testing.T) {
	t.Parallel()
	cli := fakeCLI(t, "protocol", "HOLD=1")
	conn, err := cli.Open(context.Background(), core.Turn{Workdir: t.TempDir()}, nil, lines)
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	conn.Close() // twice is fine
}

// Cancelling a turn interrupts it through its protocol, and the CLI ends
// the turn itself; a protocol that cannot interrupt is killed.
func TestConverseCancel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		interrupt bool
	}{{"interrupted", true}, {"killed", false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cli := fakeCLI(t, "protocol", "HOLD=1")
			ctx, cancel := context.WithCancel(context.Background())
			var proto *interrupting
			newProto := lines
			if tc.interrupt {
				newProto = func(link *cliproc.Link) cliproc.Protocol {
					proto = &interrupting{lineProtocol{link: link}}
					return proto
				}
			}
			var c collect
			res, err := cli.Converse(ctx, core.Turn{Workdir: t.TempDir(), Prompt: "wait"}, nil, newProto, func(ev core.Event) {
				c.emit(ev)
				if ev.Kind == core.EventText {
					cancel() // the CLI is working on the prompt
				}
			})
			if !errors.Is(err, context.Canceled) || res.SessionID != "s-1" {
				t.Errorf("Converse = %+v, %v; want the cancellation and the session", res, err)
			}
			if tc.interrupt {
				proto.mu.Lock()
				n := proto.interrupts
				proto.mu.Unlock()
				if n != 1 || res.IsError {
					t.Errorf("interrupts %d, result %+v: want one interrupt, ended by the CLI", n, res)
				}
			}
		})
	}
}

// A recorded session replays through the protocol with nobody to answer.
func TestReplay(t *testing.T) {
	t.Parallel()
	in := `{"ready":"s-9"}` + "\n" + "not json\n" + `{"text":"hello"}` + "\n" + `{"result":"done"}` + "\n"
	var c collect
	res, err := cliproc.Replay(strings.NewReader(in), "Fake CLI", lines, c.emit)
	want := `session token="s-9" model=""; text "garbage: not json"; text "hello"`
	if err != nil || res == nil || res.SessionID != "s-9" || c.String() != want {
		t.Errorf("Replay = %+v, %v with events %q, want %q", res, err, c.String(), want)
	}
}
