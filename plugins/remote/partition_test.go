package remote_test

import (
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/remote"
)

// link is a TCP path between a NATS client and the server that can be
// cut, as a network partition cuts it, and healed: while cut, every
// connection through it is closed and new ones are closed at once.
type link struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cut   bool
	conns []net.Conn
}

// newLink is a link to the server at url (nats://host:port).
func newLink(t *testing.T, url string) *link {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &link{ln: ln, target: strings.TrimPrefix(url, "nats://")}
	t.Cleanup(func() {
		ln.Close()
		l.Cut()
	})
	go l.serve()
	return l
}

func (l *link) URL() string { return "nats://" + l.ln.Addr().String() }

func (l *link) serve() {
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return
		}
		l.mu.Lock()
		if l.cut {
			l.mu.Unlock()
			c.Close()
			continue
		}
		s, err := net.Dial("tcp", l.target)
		if err != nil {
			l.mu.Unlock()
			c.Close()
			continue
		}
		l.conns = append(l.conns, c, s)
		l.mu.Unlock()
		go pipe(c, s)
		go pipe(s, c)
	}
}

func pipe(to, from net.Conn) {
	io.Copy(to, from)
	to.Close()
	from.Close()
}

// Cut closes every connection through l, and keeps new ones from
// passing, until Heal.
func (l *link) Cut() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cut = true
	for _, c := range l.conns {
		c.Close()
	}
	l.conns = nil
}

func (l *link) Heal() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cut = false
}

// An answer and a /stop given while the runner is out of reach (its
// connection cut, not long enough to count as offline) reach it once it
// is back: they are sent again until the runner acknowledges them.
func TestAnswerAndStopCrossAPartition(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.offlineAfter = time.Hour
	l := newLink(t, w.url)
	box2 := w.startRunner(runnerOpts{name: "box2", nats: remote.Config{URL: l.URL()}})
	w.startGateway()
	w.waitOnline("box2")
	app := box2.app()
	w.say("/claude start box2:" + app)
	w.expect("conversation started in box2:" + app)
	// What the gateway sends box2 reaches the server: seen here.
	seen := connect(t, w.url)
	sent, err := seen.SubscribeSync("jakebot.v4.runner.box2.*")
	if err != nil {
		t.Fatal(err)
	}
	if err := seen.Flush(); err != nil {
		t.Fatal(err)
	}
	// sentWhileCut waits until the gateway has sent box2 a message on
	// subject what.
	sentWhileCut := func(what string) {
		t.Helper()
		for {
			m, err := sent.NextMsg(30 * time.Second)
			if err != nil {
				t.Fatalf("the gateway sent no %s: %v", what, err)
			}
			if strings.HasSuffix(m.Subject, "."+what) {
				return
			}
		}
	}

	w.say("ask")
	w.expect("rm -rf build")
	l.Cut()
	w.say("/allow")
	sentWhileCut("answer")
	l.Heal()
	w.expect("the answer was allow")
	recv(t, box2.plugin.Started(), "the turn that asked")

	w.say("wait")
	w.expect("waiting on " + app)
	recv(t, box2.plugin.Started(), "the turn that waits")
	l.Cut()
	w.say("/stop")
	sentWhileCut("cancel")
	l.Heal()
	if err := recv(t, box2.stopped, "the turn's stop on box2"); !errors.Is(err, core.ErrStopped) {
		t.Errorf("the turn on box2 ended with %v, want it stopped", err)
	}
}
