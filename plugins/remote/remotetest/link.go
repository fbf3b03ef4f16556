// Package remotetest helps test what runs over NATS: a network path
// between a client and the server that a test can cut, as a partition
// does.
package remotetest

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"
)

// Link is a TCP path between a NATS client and the server that can be
// cut, as a network partition cuts it, and healed: while cut, every
// connection through it is closed and new ones are closed at once.
type Link struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cut   bool
	conns []net.Conn
}

// NewLink is a link to the server at url (nats://host:port), closed
// when the test ends.
func NewLink(t testing.TB, url string) *Link {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &Link{ln: ln, target: strings.TrimPrefix(url, "nats://")}
	t.Cleanup(func() {
		ln.Close()
		l.Cut()
	})
	go l.serve()
	return l
}

// URL is where a client connects through l.
func (l *Link) URL() string { return "nats://" + l.ln.Addr().String() }

func (l *Link) serve() {
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
func (l *Link) Cut() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cut = true
	for _, c := range l.conns {
		c.Close()
	}
	l.conns = nil
}

// Heal lets connections through l again.
func (l *Link) Heal() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cut = false
}
