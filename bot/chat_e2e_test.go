package bot_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/bot"
	"github.com/jake-bot/jake-bot/core/coretest"
)

// The end-to-end suite runs jakebot in this process (bot.Run, as the
// binary does) on one platform at a time, the console or a platform's
// fake server speaking its real wire protocol to the real client library,
// with the real pinned CLIs against the fake model servers. A chat drives
// one conversation there as its people do: what they type, the buttons
// they press, what the bot shows them.

// who is a person in a chat: the conversation's owner, or another
// allowed user who is neither the turn's author nor an admin.
type who int

const (
	owner who = iota
	stranger
)

// shown is one bot message as the platform shows it now, after edits.
type shown struct {
	id      string
	text    string
	buttons []button
}

// button is a button on a message: its label and what pressing it sends.
type button struct{ label, data string }

// received is a file the bot sent into the conversation, as its people
// get it: its name, its bytes and the caption shown with it.
type received struct {
	name, caption string
	data          []byte
}

// driver is one platform's side of a chat.
type driver interface {
	// stdio is what bot.Run gets: the console's input and output, and
	// where logs go.
	stdio() bot.Stdio
	// ready waits until the running bot is connected.
	ready()
	// start opens a conversation with plugin, as its owner.
	start(plugin string)
	// send writes text in the conversation as w.
	send(w who, text string)
	// messages returns the bot's messages in the conversation, in order.
	messages() []shown
	// press presses b on m as w.
	press(w who, m shown, b button)
	// files returns the files the bot sent in the conversation, in
	// order, as the platform's fake recorded them (the console: the
	// files it printed the place of, read there).
	files() []received
}

// patience bounds every wait, so that a bug fails a test instead of
// hanging it; it is no timing assertion.
const patience = 60 * time.Second

// chat is a conversation on a running bot.
type chat struct {
	t testing.TB
	d driver
	// clock is the router's clock when a test drives it (nil: real
	// time); waits of at most a minute on it are edit intervals and
	// rate limits, which the chat lets pass while it waits.
	clock *coretest.ManualClock
	// before is every message as it stood at the last say or press:
	// expect looks at what is new or changed since.
	before map[string]string
	// logs are the bot's logs.
	logs *logScan
}

// runChat runs jakebot with cfg on d until the test ends, when it stops it
// as SIGTERM does and checks that it exited cleanly.
func runChat(t testing.TB, cfg bot.Config, d driver) *chat {
	t.Helper()
	c := &chat{t: t, d: d}
	if mc, ok := cfg.Clock.(*coretest.ManualClock); ok {
		c.clock = mc
	}
	stdio := d.stdio()
	c.logs = stdio.Err.(*logScan)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- bot.Run(ctx, cfg, stdio) }()
	t.Cleanup(func() {
		cancel()
		c.until("jakebot to exit", func() bool {
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("jakebot exited with %v", err)
				}
				return true
			default:
				return false
			}
		})
	})
	d.ready()
	return c
}

// start opens the conversation with plugin and waits until it started.
func (c *chat) start(plugin string) {
	c.t.Helper()
	c.mark()
	c.d.start(plugin)
	c.expect(`conversation started`)
}

// say writes text as the owner.
func (c *chat) say(text string) { c.sayAs(owner, text) }

func (c *chat) sayAs(w who, text string) {
	c.t.Helper()
	c.mark()
	c.d.send(w, text)
}

// press presses, as w, the button whose label starts with label on the
// bot's last message that has one, and returns that message.
func (c *chat) press(w who, label string) shown {
	c.t.Helper()
	var m shown
	var b button
	c.until("a button "+label, func() bool {
		msgs := c.d.messages()
		for i := len(msgs) - 1; i >= 0; i-- {
			for _, bt := range msgs[i].buttons {
				if strings.HasPrefix(bt.label, label) {
					m, b = msgs[i], bt
					return true
				}
			}
		}
		return false
	})
	c.mark()
	c.d.press(w, m, b)
	return m
}

func (c *chat) mark() {
	c.before = map[string]string{}
	for _, m := range c.d.messages() {
		c.before[m.id] = m.text
	}
}

// expect waits for a bot message, new or changed since the last say or
// press, that matches every pattern, and returns its text.
func (c *chat) expect(patterns ...string) string {
	c.t.Helper()
	res := make([]*regexp.Regexp, len(patterns))
	for i, p := range patterns {
		res[i] = regexp.MustCompile(p)
	}
	var found string
	c.until("a message matching "+strings.Join(patterns, " and "), func() bool {
		for _, m := range c.d.messages() {
			if old, seen := c.before[m.id]; seen && old == m.text {
				continue
			}
			if matchesAll(m.text, res) {
				found = m.text
				return true
			}
		}
		return false
	})
	return found
}

func matchesAll(s string, res []*regexp.Regexp) bool {
	for _, re := range res {
		if !re.MatchString(s) {
			return false
		}
	}
	return true
}

// until waits for cond, letting the router's short waits pass on a
// driven clock.
func (c *chat) until(what string, cond func() bool) {
	c.t.Helper()
	c.untilBy(time.Now().Add(patience), what, cond)
}

// untilStarted is until for the first thing a CLI does in a turn, which
// waits for its start: that takes the CPU the machine spares it beside
// every other test's CLI (OpenCode's start, some ten seconds of CPU, took
// over a minute in a full run), no fixed time. It waits until the test
// binary's deadline, less a margin to fail with the bot's messages
// rather than go test's panic, or patience when there is none.
func (c *chat) untilStarted(what string, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(patience)
	if t, ok := c.t.(interface{ Deadline() (time.Time, bool) }); ok {
		if d, ok := t.Deadline(); ok && d.Add(-deadlineMargin).After(deadline) {
			deadline = d.Add(-deadlineMargin)
		}
	}
	c.untilBy(deadline, what, cond)
}

// deadlineMargin is what untilStarted leaves of the test binary's time:
// enough to stop the bot and its CLIs and report.
const deadlineMargin = 30 * time.Second

func (c *chat) untilBy(deadline time.Time, what string, cond func() bool) {
	c.t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out waiting for %s; the bot showed:\n%s", what, c.dump())
		}
		c.drive()
		<-tick.C
	}
}

func (c *chat) drive() {
	if c.clock == nil {
		return
	}
	for {
		select {
		case d := <-c.clock.Waiting():
			if d <= time.Minute {
				c.clock.Advance(d)
			}
		default:
			return
		}
	}
}

func (c *chat) dump() string {
	var b strings.Builder
	for _, m := range c.d.messages() {
		b.WriteString("--- " + m.id + "\n" + m.text + "\n")
		for _, bt := range m.buttons {
			b.WriteString("[" + bt.label + " → " + bt.data + "] ")
		}
	}
	return b.String()
}

// logScan is where a bot run's logs (and the web's sign-in line) go: to
// the test's output, and kept for waitLine.
type logScan struct {
	t  testing.TB
	mu sync.Mutex
	b  strings.Builder
	// quiet keeps the logs from the test's output (benchmarks).
	quiet bool
}

func (l *logScan) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.b.Write(p)
	quiet := l.quiet
	l.mu.Unlock()
	if quiet {
		return len(p), nil
	}
	return l.t.Output().Write(p)
}

// waitLine waits for a line matching re and returns re's first group.
func (l *logScan) waitLine(re *regexp.Regexp) string {
	l.t.Helper()
	deadline := time.Now().Add(patience)
	for {
		l.mu.Lock()
		m := re.FindStringSubmatch(l.b.String())
		l.mu.Unlock()
		if m != nil {
			return m[1]
		}
		if time.Now().After(deadline) {
			l.t.Fatalf("no log line matches %s", re)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// consoleDriver is the console, typed: each line reaches the bot at once,
// and each reply is printed once, final.
type consoleDriver struct {
	t    testing.TB
	in   *io.PipeWriter
	r    *io.PipeReader
	logs *logScan
	mu   sync.Mutex
	out  []string
}

func openConsole(t testing.TB, cfg *bot.Config) driver {
	r, w := io.Pipe()
	t.Cleanup(func() { w.Close() })
	return &consoleDriver{t: t, in: w, r: r, logs: &logScan{t: t}}
}

func (d *consoleDriver) stdio() bot.Stdio {
	return bot.Stdio{In: d.r, Out: d, Err: d.logs, Typed: true}
}

func (d *consoleDriver) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.out = append(d.out, string(p))
	return len(p), nil
}

func (d *consoleDriver) ready()              {}
func (d *consoleDriver) start(plugin string) { d.send(owner, "/"+plugin+" start") }

func (d *consoleDriver) send(w who, text string) {
	if w != owner {
		d.t.Fatal("the console has one user")
	}
	if _, err := io.WriteString(d.in, text+"\n"); err != nil {
		d.t.Fatal(err)
	}
}

func (d *consoleDriver) messages() []shown {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]shown, len(d.out))
	for i, text := range d.out {
		out[i] = shown{id: strings.Repeat("#", i+1), text: text}
		// A question is answered by typing: its "buttons" are the letters.
		if strings.Contains(text, "[y]es / [a]lways / [n]o") {
			out[i].buttons = []button{{"Allow", "y"}, {"Always allow", "a"}, {"Deny", "n"}}
		}
	}
	return out
}

func (d *consoleDriver) press(w who, m shown, b button) { d.send(w, b.data) }

// consoleFile is how the console shows a file it cannot send (/file, the
// agent's send_file): where it is, its size and its caption.
var consoleFile = regexp.MustCompile(`This platform cannot send files\. The file is (.+?) \([^()]*\)\.(?: Caption: (.*))?\s*$`)

func (d *consoleDriver) files() []received {
	var out []received
	for _, m := range d.messages() {
		f := consoleFile.FindStringSubmatch(m.text)
		if f == nil {
			continue
		}
		data, err := os.ReadFile(f[1])
		if err != nil {
			d.t.Errorf("the console shows %s: %v", f[1], err)
		}
		out = append(out, received{name: filepath.Base(f[1]), caption: f[2], data: data})
	}
	return out
}
