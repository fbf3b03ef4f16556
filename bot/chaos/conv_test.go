package chaos

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/platforms/telegram/telegramtest"
)

// conv is one conversation of the run: its platform, where its turns run
// (this machine or a runner), and the messages its user sends.
type conv struct {
	id     string // "c3"
	side   side
	runner string // "" for the gateway's own machine, else "box1"…
	// Telegram: the user, whose private chat it is.
	tgUser telegramtest.User
	// Slack: the user, the channel, and the thread the start made.
	slUser, channel, thread string

	msgs []*msg
}

// msg is one message of the conversation and what became of it.
type msg struct {
	script turnScript // as first sent
	tries  []try      // each time it was sent
	sent   time.Time  // when last sent
	// before is how many of the bot's messages the conversation had when
	// it was sent: what comes after, up to the next message's, answers it.
	before  int
	settled time.Time // when a reply or a notice was seen, zero if never
	resent  int       // times sent again after a refusal
}

// try is one sending of a message: the first, or one after its turn was
// lost, which has an id of its own (its deltas are not the first's shown
// twice) and a CLI that does not fail again.
type try struct {
	script turnScript
	at     time.Time
}

// attempt is the script of the message's n-th sending (0 the first).
func (m *msg) attempt(n int) turnScript {
	s := m.script
	if n > 0 {
		s.id, s.do = fmt.Sprintf("%s.r%d", s.id, n), "ok"
	}
	return s
}

// notice is how the bot tells a user that a turn was lost or refused.
var notice = regexp.MustCompile(`(?i)error|ended without a result|idle timeout|went offline|restarted during|is offline|was lost|not sent`)

// continued heads a reply a gateway goes on with after another stopped:
// no notice of a loss.
var continued = regexp.MustCompile(`…continued: the bot restarted during this turn, which went on on \S+`)

// isNotice says whether a message of the bot's tells of a lost turn.
func isNotice(text string) bool {
	return notice.MatchString(continued.ReplaceAllString(text, ""))
}

// settleLimit bounds the wait for one message's reply or notice; a reply
// that comes later still counts, when the run judges what was shown.
const settleLimit = 90 * time.Second

// drive runs the conversation: its start, then each message once the one
// before is answered or its loss told.
func (c *conv) drive(tb testing.TB, w *world, progress func()) {
	where := w.root("gateway")
	if c.runner != "" {
		where = c.runner + ":" + w.root(c.runner)
	}
	// The gateway may not have heard of the runner yet: start again until
	// it has.
	for attempt := 0; ; attempt++ {
		before := len(c.side.shown(c))
		c.side.say(tb, c, "/claude start "+where)
		var got string
		if !c.await(before, settleLimit, func(s []shown) bool {
			for _, m := range s[before:] {
				if strings.Contains(m.text, "started in") || isNotice(m.text) || strings.Contains(m.text, "No runner") {
					got = m.text
					return true
				}
			}
			return false
		}) {
			tb.Errorf("%s: no answer to /claude start", c.id)
			return
		}
		if strings.Contains(got, "started in") {
			break
		}
		if attempt == 50 {
			tb.Errorf("%s: /claude start %s: %s", c.id, where, got)
			return
		}
		select {
		case <-time.After(200 * time.Millisecond): // the runner announces itself
		case <-c.side.changed():
		}
	}
	for _, m := range c.msgs {
		m.before = len(c.side.shown(c))
		for {
			from := len(c.side.shown(c))
			m.sent = time.Now()
			script := m.attempt(m.resent)
			m.tries = append(m.tries, try{script, m.sent})
			c.side.say(tb, c, script.prompt())
			var refused bool
			if c.await(from, settleLimit, func(s []shown) bool {
				ok, r := settledBy(script, s, from)
				refused = r
				return ok
			}) {
				m.settled = time.Now()
			}
			// Refused while its runner was out of reach, or lost with a
			// gateway, the message is sent again (on a runner, once
			// /runners shows it online), as the notice asks; the lost
			// turn stays in the table. /runners shows a runner online
			// until it has been silent for 15 s, so the user also waits a
			// while, longer each time.
			if !refused || m.resent == maxResends {
				break
			}
			time.Sleep(time.Second << m.resent) // a user's patience, not a synchronisation
			if c.runner != "" && !c.awaitRunner(tb) {
				break
			}
			m.resent++
		}
		progress()
	}
}

// maxResends bounds how often a message refused for an offline runner is
// sent again.
const maxResends = 4

// refusal is the notice of a message whose turn never ran or was lost
// with a gateway: not sent to its runner, not started there, or run
// inside the gateway that died. The user sends it again.
var refusal = regexp.MustCompile(`is offline .*not sent|before the turn started|A turn was lost`)

// awaitRunner asks /runners until the conversation's runner is online.
func (c *conv) awaitRunner(tb testing.TB) bool {
	online := c.runner + " (online)"
	deadline := time.Now().Add(2 * settleLimit)
	for time.Now().Before(deadline) {
		from := len(c.side.shown(c))
		c.side.say(tb, c, "/runners")
		var got string
		if !c.await(from, settleLimit, func(s []shown) bool {
			for _, m := range s[from:] {
				if strings.Contains(m.text, "Runners") || strings.Contains(m.text, "No runner") {
					got = m.text
					return true
				}
			}
			return false
		}) {
			return false
		}
		if strings.Contains(got, online) {
			return true
		}
		select {
		case <-time.After(500 * time.Millisecond): // asking again, as a user would
		case <-c.side.changed():
		}
	}
	return false
}

// settledBy says whether what the conversation shows answers the message
// sent as script when it showed from messages: its reply's end, or a
// notice after it; and whether that notice asks for it to be sent again.
func settledBy(script turnScript, s []shown, from int) (settled, refused bool) {
	end := endToken(script.id)
	for i, sh := range s {
		if strings.Contains(sh.text, end) && strings.Contains(sh.text, "— ") {
			return true, false
		}
		if i >= from && isNotice(sh.text) {
			return true, refusal.MatchString(sh.text)
		}
	}
	return false, false
}

// await waits until cond holds for what the conversation shows, re-checked
// at each change of its platform's fake, for at most limit.
func (c *conv) await(before int, limit time.Duration, cond func([]shown) bool) bool {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		ch := c.side.changed()
		if s := c.side.shown(c); len(s) >= before && cond(s) {
			return true
		}
		select {
		case <-ch:
		case <-deadline.C:
			return false
		}
	}
}

// progress counts settled messages, for the faults' schedule.
type progress struct {
	mu      sync.Mutex
	settled int
	changed chan struct{}
}

func newProgress() *progress { return &progress{changed: make(chan struct{})} }

func (p *progress) add() {
	p.mu.Lock()
	p.settled++
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
}

// waitFor waits until n messages have settled, or done is closed.
func (p *progress) waitFor(n int, done <-chan struct{}) bool {
	for {
		p.mu.Lock()
		settled, ch := p.settled, p.changed
		p.mu.Unlock()
		if settled >= n {
			return true
		}
		select {
		case <-ch:
		case <-done:
			return false
		}
	}
}
