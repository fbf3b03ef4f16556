package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestConversationTurns drives conversationTurns step by step: each step
// is "verb args" and what it must answer.
func TestConversationTurns(t *testing.T) {
	tests := []struct {
		name  string
		limit int
		steps [][2]string
	}{
		{"one running turn per conversation", 5, [][2]string{
			{"place a m1", "started"},
			{"place a m2", "queued 1"},
			{"place b m3", "started"},
			{"place a m4", "queued 2"},
			{"counts", "running 2 waiting 2"},
		}},
		{"what waits runs in order, then the conversation is free", 5, [][2]string{
			{"place a m1", "started"},
			{"place a m2", "queued 1"},
			{"place a m3", "queued 2"},
			{"next a", "run m2"},
			{"place a m4", "queued 2"},
			{"next a", "run m3"},
			{"next a", "run m4"},
			{"next a", "end idle"},
			{"counts", "running 0 waiting 0"},
			{"place a m5", "started"},
		}},
		{"no more than the limit wait", 2, [][2]string{
			{"place a m1", "started"},
			{"place a m2", "queued 1"},
			{"place a m3", "queued 2"},
			{"place a m4", "full 2"},
			{"next a", "run m2"},
			{"place a m5", "queued 2"},
		}},
		{"steering queues nothing", 5, [][2]string{
			{"steer a m1", "started"},
			{"steer a m2", "steer"},
			{"counts", "running 1 waiting 0"},
			{"next a", "end idle"},
		}},
		{"stop drops what waits and the turn ends after its own", 5, [][2]string{
			{"stop a", "not running"},
			{"place a m1", "started"},
			{"place a m2", "queued 1"},
			{"place a m3", "queued 2"},
			{"stop a", "stopped m2 m3"},
			{"counts", "running 1 waiting 0"},
			{"next a", "end idle"},
		}},
		{"winding down starts and queues nothing more", 5, [][2]string{
			{"place a m1", "started"},
			{"place a m2", "queued 1"},
			{"place b m3", "started"},
			{"wind", "dropped m2"},
			{"place a m4", "refused"},
			{"place c m5", "refused"},
			{"idle c", "false"},
			{"next a", "end"},
			{"next b", "end"},
			{"counts", "running 0 waiting 0"},
		}},
		{"a stopping bot drops what waits", 5, [][2]string{
			{"place a m1", "started"},
			{"place a m2", "queued 1"},
			{"stopping a", "end dropped m2"},
		}},
		{"answers are held until the turn ends", 5, [][2]string{
			{"hold a", "not held"},
			{"place a m1", "started"},
			{"place a m2", "queued 1"},
			{"hold a", "held"},
			{"hold a", "held"},
			{"next a", "run m2 held 2"},
			{"next a", "end idle"},
			{"hold a", "not held"},
		}},
		{"send now: its author or an admin, to the front", 5, [][2]string{
			{"place a m1 u", "started"},
			{"place a m2 u", "queued 1"},
			{"place a m3 v", "queued 2"},
			{"now m3 v", "ok m3"},
			{"now m2 v", errNotAuthor.Error()},
			{"now m9 v", errNotWaiting.Error()},
			{"next a", "run m3"},
			{"now m2 v admin", "ok m2"},
			{"now m1 u", errNotWaiting.Error()},
		}},
		{"steer a waiting message: only into a turn that takes it", 5, [][2]string{
			{"place a m1 u", "started"},
			{"place a m2 u", "queued 1"},
			{"take m2 u", errNotTaking.Error()},
			{"open a", ""},
			{"take m2 v", errNotAuthor.Error()},
			{"take m2 u", "ok m2"},
			{"take m2 u", errNotWaiting.Error()},
			{"next a", "end idle"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &turnsDriver{c: newConversationTurns(tt.limit), qs: make(map[string]*runningTurn)}
			for i, s := range tt.steps {
				if got := d.do(strings.Fields(s[0])); got != s[1] {
					t.Fatalf("step %d %q: got %q, want %q", i, s[0], got, s[1])
				}
			}
		})
	}
}

// turnsDriver runs TestConversationTurns's steps; qs are the
// runningTurns place started, by conversation.
type turnsDriver struct {
	c  *conversationTurns
	qs map[string]*runningTurn
}

func turnsKey(k string) ConversationKey { return ConversationKey{Platform: "p", Channel: k} }

func turnsMsg(k, id, author string) queued {
	return queued{m: Message{Key: turnsKey(k), From: author}, id: id, done: func() {}}
}

func (d *turnsDriver) do(f []string) string {
	author := "u"
	switch f[0] {
	case "place", "steer":
		if len(f) > 3 {
			author = f[3]
		}
		return d.place(f[1], turnsMsg(f[1], f[2], author), f[0] == "steer")
	case "next", "stopping":
		return turnEndString(d.c.next(d.qs[f[1]], f[0] == "stopping"))
	case "stop":
		dropped, running := d.c.stop(turnsKey(f[1]))
		if !running {
			return "not running"
		}
		return strings.TrimSpace("stopped " + ids(dropped))
	case "wind":
		var dropped []queued
		for _, w := range d.c.windDown() {
			dropped = append(dropped, w.dropped...)
		}
		return "dropped " + ids(dropped)
	case "counts":
		r, w := d.c.counts()
		return fmt.Sprintf("running %d waiting %d", r, w)
	case "idle":
		return fmt.Sprint(d.c.idle(turnsKey(f[1])))
	case "hold":
		if d.c.hold(turnsKey(f[1]), nil, func() {}) {
			return "held"
		}
		return "not held"
	case "open":
		in := &Inbox{}
		in.Open(func(Steering) error { return nil })
		d.c.streaming(d.qs[f[1]], in, Conversation{}, "")
		return ""
	case "now", "take":
		admin := len(f) > 3 && f[3] == "admin"
		var m queued
		var err error
		if f[0] == "now" {
			m, err = d.c.sendNow("p", f[1], f[2], admin)
		} else {
			_, m, err = d.c.takeWaiting("p", f[1], f[2], admin, func(_, _ *queued) error { return nil })
		}
		if err != nil {
			return err.Error()
		}
		return "ok " + m.id
	}
	panic("unknown step " + f[0])
}

func (d *turnsDriver) place(k string, m queued, steer bool) string {
	p := d.c.place(nil, m, steer)
	switch p.how {
	case placeStarted:
		d.qs[k] = p.q
		return "started"
	case placeQueued:
		return fmt.Sprintf("queued %d", p.waiting)
	case placeFull:
		return fmt.Sprintf("full %d", p.waiting)
	case placeSteer:
		return "steer"
	}
	return "refused"
}

func turnEndString(e turnEnd) string {
	s := "end"
	if e.more {
		s = "run " + e.next.id
	}
	if e.idle {
		s += " idle"
	}
	if len(e.dropped) > 0 {
		s += " dropped " + ids(e.dropped)
	}
	if len(e.held) > 0 {
		s += fmt.Sprintf(" held %d", len(e.held))
	}
	return s
}

func ids(ms []queued) string {
	var s []string
	for _, m := range ms {
		s = append(s, m.id)
	}
	slices.Sort(s)
	return strings.Join(s, " ")
}

// TestConversationTurnsConcurrently places, stops, holds and winds down
// from many goroutines at once, each conversation's turns run as
// runQueued runs them: every message must be run, dropped or refused
// exactly once, every held answer called, and no conversation ever have
// two runners (run it with -race).
func TestConversationTurnsConcurrently(t *testing.T) {
	const keys, producers, each = 3, 4, 60
	for _, wind := range []bool{false, true} {
		t.Run(fmt.Sprintf("wind=%v", wind), func(t *testing.T) {
			c := newConversationTurns(4)
			var (
				mu     sync.Mutex
				seen   = make(map[string]string)
				active [keys]atomic.Int32
				held   atomic.Int32
				called atomic.Int32
			)
			account := func(how string, ms ...queued) {
				mu.Lock()
				defer mu.Unlock()
				for _, m := range ms {
					if prev, ok := seen[m.id]; ok {
						t.Errorf("message %s %s, and %s before", m.id, how, prev)
					}
					seen[m.id] = how
				}
			}
			run := func(k int, q *runningTurn, m queued) {
				defer c.exited()
				for first := true; ; first = false {
					if n := active[k].Add(1); n != 1 {
						t.Errorf("conversation %d: %d runners at once (first turn %v)", k, n, first)
					}
					account("ran", m)
					active[k].Add(-1)
					end := c.next(q, false)
					account("dropped at its turn's end", end.dropped...)
					finish(end.held)
					if !end.more {
						return
					}
					m = end.next
				}
			}
			var wg sync.WaitGroup
			for p := range producers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range each {
						k := (p + i) % keys
						key := fmt.Sprint(k)
						m := turnsMsg(key, fmt.Sprintf("m%d-%d", p, i), "u")
						switch pl := c.place(nil, m, false); pl.how {
						case placeStarted:
							go run(k, pl.q, m)
						case placeFull, placeRefused:
							account("refused", m)
						}
						switch {
						case i%7 == 3:
							dropped, _ := c.stop(turnsKey(key))
							account("stopped", dropped...)
						case i%5 == 1:
							held.Add(1)
							if !c.hold(turnsKey(key), nil, func() { called.Add(1) }) {
								called.Add(1)
							}
						case wind && p == 0 && i == each/2:
							for _, w := range c.windDown() {
								account("dropped winding down", w.dropped...)
							}
						}
					}
				}()
			}
			wg.Wait()
			c.wait()
			if len(seen) != producers*each {
				t.Errorf("%d messages accounted for, want %d", len(seen), producers*each)
			}
			if held.Load() != called.Load() {
				t.Errorf("%d answers held, %d called", held.Load(), called.Load())
			}
			if r, w := c.counts(); r != 0 || w != 0 {
				t.Errorf("after every runner exited: running %d, waiting %d", r, w)
			}
		})
	}
}

// TestConversationTurnsCancel: /now and /stop interrupt the running turn
// with their own cause.
func TestConversationTurnsCancel(t *testing.T) {
	c := newConversationTurns(5)
	m1, m2 := turnsMsg("a", "m1", "u"), turnsMsg("a", "m2", "u")
	q := c.place(nil, m1, false).q
	c.place(nil, m2, false)
	for _, tc := range []struct {
		do   func()
		want error
	}{
		{func() { _, _ = c.sendNow("p", "m2", "u", false) }, ErrSentNow},
		{func() { c.stop(turnsKey("a")) }, ErrStopped},
	} {
		ctx, cancel := context.WithCancelCause(context.Background())
		c.began(q, queued{}, cancel, "x", "")
		tc.do()
		if got := context.Cause(ctx); !errors.Is(got, tc.want) {
			t.Errorf("cause %v, want %v", got, tc.want)
		}
	}
}
