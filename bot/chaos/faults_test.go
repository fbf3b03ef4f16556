package chaos

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/platforms/telegram/telegramtest"
)

// The kinds of fault the run injects, in the table's order.
const (
	fault5xx       = "platform 5xx"
	fault429       = "platform 429 + retry-after"
	faultTimeout   = "platform timeout"
	faultWSDrop    = "websocket dropped"
	faultCLICrash  = "CLI crash mid-stream"
	faultCLIHang   = "CLI hang mid-stream"
	faultRunner    = "runner SIGKILLed, restarted"
	faultNATS      = "NATS server restarted"
	faultGateway   = "active gateway SIGKILLed"
	writeFailures  = "5xx|ratelimited|Too Many|stalled"
	runnerDownMax  = 2 * time.Second
	natsDownMax    = 2 * time.Second
	stallMax       = 4 * time.Second
	retryAfterMax  = 2
	platformFaults = 3 // of the kinds above, those a platform call suffers
)

// kinds are the faults injected at points of the run (the CLI's come with
// the messages that script them).
var kinds = []string{fault5xx, fault429, faultTimeout, faultWSDrop, faultRunner, faultNATS, faultGateway}

// allKinds is the table's order.
var allKinds = []string{fault5xx, fault429, faultTimeout, faultWSDrop, faultCLICrash, faultCLIHang, faultRunner, faultNATS, faultGateway}

// injected is one fault as the run injected it.
type injected struct {
	kind   string
	at     time.Time
	detail string // which platform and call, which process
	// recovered is when the run saw what the fault broke work again; zero
	// until the run measures it.
	recovered time.Time
	// scope: the platform (platform faults), the runner (its kill).
	platform, runner string
}

// injector injects the run's faults, chosen from its seed.
type injector struct {
	t    testing.TB
	w    *world
	rng  *rand.Rand
	mu   sync.Mutex
	done []*injected
}

func (in *injector) record(f *injected) {
	in.mu.Lock()
	in.done = append(in.done, f)
	in.mu.Unlock()
}

// inject injects one fault of kind.
func (in *injector) inject(kind string) {
	w := in.w
	f := &injected{kind: kind}
	switch kind {
	case fault5xx, fault429, faultTimeout:
		in.platformFault(f)
		return
	case faultWSDrop:
		f.platform, f.at, f.detail = "slack", time.Now(), "Socket Mode connection closed"
		w.sl.Drop(goTB{in.t}) // returns once the bot reconnected
		f.recovered = time.Now()
	case faultRunner:
		name := "box1"
		f.runner, f.detail = name, name
		w.mu.Lock()
		p := w.runners[name]
		w.mu.Unlock()
		down := time.Duration(in.rng.Int64N(int64(runnerDownMax)))
		f.at = time.Now()
		p.kill(in.t)
		time.Sleep(down) // the outage itself, not a synchronisation
		w.startRunner(name)
		f.detail = fmt.Sprintf("%s, down %s", name, down.Round(time.Millisecond))
	case faultGateway:
		active := w.activeGateway(goTB{in.t})
		f.at = time.Now()
		active.kill(in.t)
		w.forget(active)
		w.startGateway() // the next standby
		f.detail = active.name + ", the active one"
	case faultNATS:
		down := time.Duration(in.rng.Int64N(int64(natsDownMax)))
		f.at = time.Now()
		w.nats.restart(down)
		f.detail = fmt.Sprintf("down %s", down.Round(time.Millisecond))
	default:
		in.t.Errorf("unknown fault %q", kind)
		return
	}
	in.record(f)
}

// platformFault makes the next send or edit on a platform chosen by the
// seed fail in the fault's way. When it was answered is read from the
// fake's log afterwards (judge).
func (in *injector) platformFault(f *injected) {
	w := in.w
	edit := in.rng.IntN(2) == 0
	if in.rng.IntN(2) == 0 {
		f.platform = "telegram"
		method := map[bool]string{false: "sendMessage", true: "editMessageText"}[edit]
		switch f.kind {
		case fault5xx:
			code := []int{500, 502, 503}[in.rng.IntN(3)]
			w.tg.FailNext(method, telegramtest.Failure{Code: code, Description: fmt.Sprintf("Internal Server Error (%d)", code)})
			f.detail = fmt.Sprintf("telegram %s %d", method, code)
		case fault429:
			ra := 1 + in.rng.IntN(retryAfterMax)
			w.tg.RateLimitNext(method, ra)
			f.detail = fmt.Sprintf("telegram %s retry_after %ds", method, ra)
		case faultTimeout:
			d := time.Second + time.Duration(in.rng.Int64N(int64(stallMax-time.Second)))
			w.tg.StallNext(method, d)
			f.detail = fmt.Sprintf("telegram %s held %s", method, d.Round(time.Millisecond))
		}
	} else {
		f.platform = "slack"
		method := map[bool]string{false: "chat.postMessage", true: "chat.update"}[edit]
		switch f.kind {
		case fault5xx:
			code := []int{http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable}[in.rng.IntN(3)]
			w.sl.FailNext(method, code)
			f.detail = fmt.Sprintf("slack %s %d", method, code)
		case fault429:
			ra := 1 + in.rng.IntN(retryAfterMax)
			w.sl.RateLimit(method, time.Duration(ra)*time.Second, 1)
			f.detail = fmt.Sprintf("slack %s Retry-After %ds", method, ra)
		case faultTimeout:
			d := time.Second + time.Duration(in.rng.Int64N(int64(stallMax-time.Second)))
			w.sl.StallNext(method, d)
			f.detail = fmt.Sprintf("slack %s held %s", method, d.Round(time.Millisecond))
		}
	}
	f.at = time.Now()
	in.record(f)
}
