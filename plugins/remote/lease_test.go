package remote_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/plugins/remote"
	"github.com/jake-bot/jake-bot/plugins/remote/remotetest"
)

// leaseTTL is the lease's time to live in these tests: short, since the
// server's own expiry of the key, in real time, is what some wait for.
const leaseTTL = 2 * time.Second

func openLease(t *testing.T, url, name string, clock *coretest.ManualClock) *remote.Lease {
	t.Helper()
	cfg := remote.LeaseConfig{Name: name, TTL: leaseTTL, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))}
	if clock != nil {
		cfg.Clock = clock
	}
	l, err := remote.OpenLease(context.Background(), connect(t, url), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Release) // before the connection closes
	return l
}

// acquire runs l.Acquire in the background; the holders it sees standing
// by go to seen, and its result to the channel returned.
func acquire(t *testing.T, l *remote.Lease, seen chan<- remote.Holder) <-chan remote.Holder {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	got := make(chan remote.Holder, 1)
	go func() {
		h, err := l.Acquire(ctx, func(h remote.Holder) {
			if seen != nil {
				seen <- h
			}
		})
		if err == nil {
			got <- h
		}
	}()
	return got
}

// One gateway holds the lease; the other stands by, knowing which, and
// takes it at once when the first releases it.
func TestLeaseOneHolderAtATime(t *testing.T) {
	t.Parallel()
	url := runNATS(t, nil)
	a, b := openLease(t, url, "gw-a", nil), openLease(t, url, "gw-b", nil)
	ha := recv(t, acquire(t, a, nil), "gw-a holding the lease")
	seen := make(chan remote.Holder, 4)
	bHeld := acquire(t, b, seen)
	if h := recv(t, seen, "gw-b seeing the holder"); h.Name != "gw-a" || h.Epoch != ha.Epoch {
		t.Errorf("gw-b sees %+v as the holder, want gw-a at epoch %d", h, ha.Epoch)
	}
	if b.Held() {
		t.Fatal("gw-b holds the lease while gw-a does")
	}
	a.Release()
	hb := recv(t, bHeld, "gw-b taking the lease")
	if hb.Name != "gw-b" || hb.Epoch <= ha.Epoch {
		t.Errorf("gw-b took %+v, want a later epoch than %d", hb, ha.Epoch)
	}
	if got, _ := b.Holder(); got != hb {
		t.Errorf("gw-b's holder is %+v, want itself", got)
	}
}

// A holder whose renewal finds the key written by someone else gives the
// lease up at once, without waiting for its deadline.
func TestLeaseLostToAnotherWriter(t *testing.T) {
	t.Parallel()
	url := runNATS(t, nil)
	clock := coretest.NewManualClock()
	a := openLease(t, url, "gw-a", clock)
	recv(t, acquire(t, a, nil), "gw-a holding the lease")
	js, err := jetstream.New(connect(t, url))
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(context.Background(), "jakebot_lease")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(context.Background(), "active", []byte(`{"name":"intruder"}`)); err != nil {
		t.Fatal(err)
	}
	clock.Advance(leaseTTL / 3)
	select {
	case <-a.Lost():
	default:
		t.Fatal("gw-a kept the lease after its renewal found another's")
	}
	if err := a.Err(); err == nil || !strings.Contains(err.Error(), "another gateway") {
		t.Errorf("Err() = %v, want another gateway's", err)
	}
}

// A holder cut off from NATS stops at its own deadline, TTL less a margin
// after its last renewal; the key then expires on the server and the
// standby, woken by the expiry's marker, takes the lease.
func TestLeaseHolderCutOffStopsAndTheStandbyTakesOver(t *testing.T) {
	t.Parallel()
	url := runNATS(t, nil)
	link := remotetest.NewLink(t, url)
	clock := coretest.NewManualClock()
	a := openLease(t, link.URL(), "gw-a", clock)
	recv(t, acquire(t, a, nil), "gw-a holding the lease")
	b := openLease(t, url, "gw-b", nil)
	seen := make(chan remote.Holder, 4)
	bHeld := acquire(t, b, seen)
	recv(t, seen, "gw-b seeing gw-a hold the lease")

	link.Cut()
	clock.Advance(leaseTTL / 3) // the renewal fails
	select {
	case <-a.Lost():
		t.Fatal("gw-a gave the lease up at its first failed renewal")
	default:
	}
	clock.Advance(leaseTTL - leaseTTL/4 - leaseTTL/3)
	select {
	case <-a.Lost():
	default:
		t.Fatal("gw-a kept the lease past its deadline, cut off from NATS")
	}
	if hb := recv(t, bHeld, "gw-b taking the lease"); hb.Name != "gw-b" {
		t.Errorf("gw-b took %+v", hb)
	}
}
