package chaos

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// outcome is what became of one message.
type outcome struct {
	c        *conv
	m        *msg
	complete bool // the whole reply, in order, in one message
	// continued: the whole reply, in order, in one message and the one a
	// gateway that took over went on in ("…continued"), the documented
	// case of a turn on a runner whose gateway stopped mid-turn.
	continued bool
	// firstComplete: the reply to its first sending was complete.
	firstComplete bool
	told          bool     // a notice followed it
	notices       []string // each a turn of it lost (it may have been sent again)
	twice         int      // deltas shown more than once
	// gatewayKilled: a gateway was killed while it ran, so its last second
	// may be shown again (the documented case).
	gatewayKilled bool
}

// report is the run's table.
type report struct {
	outcomes []outcome
	// leaseLosses counts the active gateways that lost the lease without
	// being killed (a NATS restart longer than the lease's margin).
	leaseLosses int
	faults      map[string]int
	recover     map[string][]time.Duration
	lostWhy     []string
}

// judge reads what each conversation shows once everything stopped, and
// the fakes' logs for when each fault was recovered from.
func judge(w *world, convs []*conv, done []*injected) *report {
	r := &report{faults: map[string]int{}, recover: map[string][]time.Duration{}}
	// A platform fault counts once a call met it, as a CLI's once the CLI
	// logged it (measure): those are armed ahead of the call they hit.
	for _, f := range done {
		if f.platform == "" || f.kind == faultWSDrop {
			r.faults[f.kind]++
		}
	}
	// A gateway stops mid-turn when it is killed, or when it loses its
	// lease (cut off from NATS longer than its renewals allow): then the
	// next one may show that turn's last second again.
	stops := leaseLosses(w)
	for _, f := range done {
		if f.kind == faultGateway {
			stops = append(stops, f.at)
		}
	}
	r.leaseLosses = len(stops) - r.faults[faultGateway]
	for _, c := range convs {
		s := c.side.shown(c)
		for i, m := range c.msgs {
			o := outcome{c: c, m: m}
			end := len(s)
			if i+1 < len(c.msgs) && c.msgs[i+1].before > 0 {
				end = c.msgs[i+1].before
			}
			for i, tr := range m.tries {
				want := replyTokens(tr.script)
				for k, sh := range s {
					if inOrder(sh.text, want) {
						o.complete = true
						o.firstComplete = o.firstComplete || i == 0
					}
					if strings.Contains(sh.text, continuedMark) {
						for _, before := range s[:k] {
							o.continued = o.continued || inOrder(before.text+"\n"+sh.text, want)
						}
					}
				}
				for _, tok := range want {
					n := 0
					for _, sh := range s {
						n += strings.Count(sh.text, tok)
					}
					if n > 1 {
						o.twice++
					}
				}
			}
			for j := m.before; j < end && j < len(s); j++ {
				if isNotice(s[j].text) {
					o.told, o.notices = true, append(o.notices, s[j].text)
				}
			}
			for _, at := range stops {
				if len(m.tries) > 0 && !at.Before(m.tries[0].at) && (m.settled.IsZero() || at.Before(m.settled)) {
					o.gatewayKilled = true
				}
			}
			if !o.complete && !o.continued && !o.told {
				var texts []string
				for j := m.before; j < end && j < len(s); j++ {
					texts = append(texts, fmt.Sprintf("%q", s[j].text))
				}
				r.lostWhy = append(r.lostWhy, fmt.Sprintf("%s (%s, %s, %s): shown after it: %s", m.script.id, c.side.name(),
					orLocal(c.runner), m.script.do, strings.Join(texts, ", ")))
			}
			r.outcomes = append(r.outcomes, o)
		}
	}
	r.measure(w, convs, done)
	return r
}

func orLocal(runner string) string {
	if runner == "" {
		return "local"
	}
	return runner
}

// leaseLosses returns when a gateway lost its lease, from the gateways'
// logs.
func leaseLosses(w *world) []time.Time {
	var at []time.Time
	logs, _ := filepath.Glob(filepath.Join(w.logs, "gw*.log"))
	for _, name := range logs {
		data, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(data), "\n") {
			if !strings.Contains(l, `msg="lease lost: this gateway stops serving"`) {
				continue
			}
			ts, _, _ := strings.Cut(strings.TrimPrefix(l, "time="), " ")
			if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
				at = append(at, t)
			}
		}
	}
	return at
}

// replyTokens are the deltas of the reply script asks for, END last.
func replyTokens(script turnScript) []string {
	var want []string
	for j := range script.k {
		want = append(want, token(script.id, j))
	}
	return append(want, endToken(script.id))
}

// inOrder says whether text holds every token of want, in order.
// continuedMark opens the message in which a gateway that took over goes
// on with a turn it follows on a runner (plugins/remote's askAgain), in
// each platform's markup.
const continuedMark = "…continued: the bot restarted"

func inOrder(text string, want []string) bool {
	for _, tok := range want {
		i := strings.Index(text, tok)
		if i < 0 {
			return false
		}
		text = text[i+len(tok):]
	}
	return true
}

// endRE finds a reply's end in a write, and its message's id.
var endRE = regexp.MustCompile(`\b(c\d+\.m\d+(?:\.r\d+)?):END`)

// measure finds each fault's time to recover: for a failed platform call,
// until the next write to the same chat went through; for a crashed or
// hung CLI, until its user was told; for a killed runner, a restarted
// NATS server or a killed gateway, until the reply to a message sent after
// it was shown whole, through that runner (any runner for NATS, any
// conversation for the gateway); for a dropped websocket, until the bot
// reconnected.
func (r *report) measure(w *world, convs []*conv, done []*injected) {
	sides := map[string]side{"telegram": telegramSide{w.tg}, "slack": slackSide{w.sl}}
	writes := map[string][]write{}
	for name, s := range sides {
		writes[name] = s.writes()
	}
	for _, ws := range writes {
		for i, f := range ws {
			kind := failedKind(f.error)
			if kind == "" {
				continue
			}
			r.faults[kind]++
			for _, next := range ws[i+1:] {
				if next.key == f.key && next.error == "" {
					r.recover[kind] = append(r.recover[kind], next.at.Sub(f.at))
					break
				}
			}
		}
	}
	// Which conversation and message each reply belongs to, by its ids.
	owner := map[string]*conv{}
	sent := map[string]time.Time{}
	for _, c := range convs {
		for _, m := range c.msgs {
			for _, tr := range m.tries {
				owner[tr.script.id], sent[tr.script.id] = c, tr.at
			}
		}
	}
	// endAfter is when the first reply to a message sent after at was
	// shown whole, of a conversation that match accepts.
	endAfter := func(at time.Time, match func(*conv) bool) (time.Time, bool) {
		var first time.Time
		for _, ws := range writes {
			for _, wr := range ws {
				if wr.error != "" || !wr.at.After(at) {
					continue
				}
				for _, m := range endRE.FindAllStringSubmatch(wr.text, -1) {
					if c := owner[m[1]]; c != nil && match(c) && sent[m[1]].After(at) && (first.IsZero() || wr.at.Before(first)) {
						first = wr.at
					}
				}
			}
		}
		return first, !first.IsZero()
	}
	for _, f := range done {
		switch f.kind {
		case faultWSDrop:
			r.recover[f.kind] = append(r.recover[f.kind], f.recovered.Sub(f.at))
		case faultRunner, faultNATS, faultGateway:
			at, ok := endAfter(f.at, func(c *conv) bool {
				return f.kind == faultGateway || c.runner != "" && (f.runner == "" || c.runner == f.runner)
			})
			if ok {
				r.recover[f.kind] = append(r.recover[f.kind], at.Sub(f.at))
			}
		}
	}
	// A crashed or hung CLI logged when; its user is told by a notice.
	byID := map[string]*conv{}
	for _, c := range convs {
		for _, m := range c.msgs {
			for _, tr := range m.tries {
				byID[tr.script.id] = c
			}
		}
	}
	if file, err := os.Open(filepath.Join(w.logs, "cli-faults")); err == nil {
		defer file.Close()
		lines := bufio.NewScanner(file)
		for lines.Scan() {
			f := strings.Fields(lines.Text())
			if len(f) != 3 {
				continue
			}
			ns, _ := strconv.ParseInt(f[0], 10, 64)
			at := time.Unix(0, ns)
			c := byID[f[1]]
			if c == nil {
				continue
			}
			kind := map[string]string{"crash": faultCLICrash, "hang": faultCLIHang}[f[2]]
			r.faults[kind]++
			for _, wr := range writes[c.side.name()] {
				if wr.error == "" && wr.at.After(at) && wr.key == c.key() && isNotice(wr.text) {
					r.recover[kind] = append(r.recover[kind], wr.at.Sub(at))
					break
				}
			}
		}
	}
}

// key is the conversation's chat (Telegram) or channel (Slack), as its
// platform's log names it.
func (c *conv) key() string {
	if c.channel != "" {
		return c.channel
	}
	return strconv.FormatInt(c.tgUser.ID, 10)
}

// failedKind is the fault a write's error comes from, "" if none.
func failedKind(err string) string {
	switch {
	case err == "":
		return ""
	case err == "stalled":
		return faultTimeout
	case err == "ratelimited" || strings.HasPrefix(err, "Too Many Requests: retry after"):
		return fault429
	case strings.Contains(err, "Internal Server Error") || strings.Contains(err, "Bad Gateway") || strings.Contains(err, "Service Unavailable"):
		return fault5xx
	}
	return ""
}

// table is the report as README.md shows it.
func (r *report) table() string {
	var sent, complete, resent, continued, lost, twice, twiceGateway, told, unanswered int
	whys := map[string]int{}
	for _, o := range r.outcomes {
		sent++
		switch {
		case o.complete:
			complete++
			if o.m.resent > 0 {
				resent++
			}
		case o.continued:
			continued++
		case o.told:
			unanswered++
		default:
			lost++
		}
		told += len(o.notices)
		for _, n := range o.notices {
			whys[toldWhy(n)]++
		}
		if o.twice > 0 {
			if o.gatewayKilled {
				twiceGateway++
			} else {
				twice++
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| messages sent | replies complete (after sending again) | complete in two messages, \"…continued\" (documented) | replies lost | shown twice | shown again after a gateway stopped mid-turn (documented) | turns lost, user told | messages left unanswered, user told |\n|---|---|---|---|---|---|---|---|\n")
	fmt.Fprintf(&b, "| %d | %d (%d) | %d | %d | %d | %d | %d | %d |\n\n", sent, complete, resent, continued, lost, twice, twiceGateway, told, unanswered)
	if r.leaseLosses > 0 {
		fmt.Fprintf(&b, "Active gateways that lost the lease without being killed (cut off from NATS too long): %d.\n", r.leaseLosses)
	}
	fmt.Fprintf(&b, "Turns lost, user told, by what they were told:")
	for _, why := range slices.Sorted(maps.Keys(whys)) {
		fmt.Fprintf(&b, " %s %d;", why, whys[why])
	}
	b.WriteString("\n\n")
	fmt.Fprintf(&b, "| fault | injected | recoveries measured | time to recover p50 | p99 |\n|---|---|---|---|---|\n")
	for _, k := range allKinds {
		d := r.recover[k]
		slices.Sort(d)
		p50, p99 := "–", "–"
		if len(d) > 0 {
			p50, p99 = fmtDur(d[(len(d)-1)/2]), fmtDur(d[(len(d)*99-1)/100])
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s |\n", k, r.faults[k], len(d), p50, p99)
	}
	return b.String()
}

// toldWhy names the notice a user got.
func toldWhy(notice string) string {
	switch {
	case strings.Contains(notice, "ended without a result"):
		return "the CLI ended without a result"
	case strings.Contains(notice, "Idle timeout"):
		return "idle timeout"
	case strings.Contains(notice, "restarted during the turn"):
		return "the runner restarted during the turn"
	case strings.Contains(notice, "A turn was lost: the bot stopped while it asked runner"):
		return "the gateway stopped before the runner started it"
	case strings.Contains(notice, "A turn was lost"):
		return "lost with the gateway it ran in"
	case strings.Contains(notice, "before the turn started"):
		return "the runner restarted before the turn started"
	case strings.Contains(notice, "not sent"):
		return "not sent, the runner out of reach"
	case strings.Contains(notice, "is offline"):
		return "refused, the runner offline"
	case strings.Contains(notice, "The bot is restarting"):
		return "stopped with a gateway that lost its lease"
	}
	return "other"
}

func fmtDur(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(10 * time.Millisecond).String()
}

// toldList lists the notices that told users of lost turns, one a line.
func (r *report) toldList() string {
	var b strings.Builder
	for _, o := range r.outcomes {
		for _, n := range o.notices {
			n = strings.Join(strings.Fields(n), " ")
			if len(n) > 160 {
				n = n[:160] + "…"
			}
			fmt.Fprintf(&b, "%s (%s, %s, script %s, complete %v): %s\n", o.m.script.id, o.c.side.name(), orLocal(o.c.runner), o.m.script.do, o.complete, n)
		}
	}
	return b.String()
}

// check asserts the targets: no message lost, none shown twice beyond the
// documented case, every lost turn told to its user.
func (r *report) check(t *testing.T) {
	for _, why := range r.lostWhy {
		t.Errorf("lost without a word: %s", why)
	}
	for _, o := range r.outcomes {
		if o.twice > 0 && !o.gatewayKilled {
			t.Errorf("%s: %d of its deltas shown twice", o.m.script.id, o.twice)
		}
		if o.m.script.do != "ok" && o.firstComplete {
			t.Errorf("%s: its CLI was to %s, yet the reply is complete", o.m.script.id, o.m.script.do)
		}
	}
}
