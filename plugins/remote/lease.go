package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jake-bot/jake-bot/core"
)

// Of several gateways on one NATS server, the one holding the key
// "active" of the lease bucket serves the chats; the others stand by. The
// key lives FailoverAfter past its last write (the bucket's age limit),
// and its holder writes it again well within that: a holder that dies, or
// is cut off from NATS, stops writing, the key expires, and the server's
// marker wakes a standby, which creates the key and takes over.
const (
	leaseBucket = "jakebot_lease"
	leaseKey    = "active"
	// FailoverAfter is the lease's time to live: how long at most a
	// standby waits once the active gateway stopped renewing it.
	FailoverAfter = 10 * time.Second
)

// minTTL is the shortest lease.
const minTTL = time.Second

// Holder is a gateway that holds, or held, the lease.
type Holder struct {
	Name string `json:"name"`
	// Instance tells apart two runs of one gateway.
	Instance string    `json:"instance"`
	Since    time.Time `json:"since"`
	// Epoch counts the holders: the key's revision when this one took
	// the lease, larger for each later holder.
	Epoch uint64 `json:"epoch,omitempty"`
}

// LeaseConfig is who a gateway is and how long its lease lives.
type LeaseConfig struct {
	// Name is the gateway's name, shown by the standbys and /status.
	Name string
	// TTL is the lease's time to live (FAILOVER_AFTER); zero is
	// FailoverAfter. The bucket keeps the TTL of the gateway that made it:
	// a lease lives as long as the bucket says, whatever TTL says.
	TTL time.Duration
	// Clock times the renewals and the holder's own deadline; nil is the
	// system clock. The key's expiry is the server's, on its own clock.
	Clock  core.Clock
	Logger *slog.Logger
}

// Lease is one gateway's side of the lease. Acquire waits until it holds
// it; then it renews the key every TTL/3 with a compare-and-set on the
// revision it last wrote, and gives the lease up at once (Lost) when a
// renewal finds the key taken, or when TTL less a margin passed, on its
// own clock, since the last renewal that succeeded was sent: the key
// lives at least TTL past that on the server, so the holder stops before
// any standby can start. It is safe for concurrent use.
type Lease struct {
	kv       jetstream.KeyValue
	cfg      LeaseConfig
	instance string
	ttl      time.Duration

	mu sync.Mutex
	// holder is the holder last seen: this gateway while it holds the
	// lease, known once it has been seen.
	holder Holder
	known  bool
	held   bool
	// rev is the key's revision this gateway last wrote; renewed when
	// that write was sent.
	rev     uint64
	renewed time.Time
	renewT  core.Timer
	dead    core.Timer
	lost    chan struct{}
	why     error
}

// OpenLease opens the lease bucket on nc's JetStream, making it with
// cfg.TTL when it is missing.
func OpenLease(ctx context.Context, nc *nats.Conn, cfg LeaseConfig) (*Lease, error) {
	if cfg.TTL <= 0 {
		cfg.TTL = FailoverAfter
	}
	if cfg.TTL < minTTL {
		return nil, fmt.Errorf("FAILOVER_AFTER=%s: at least %s (the server's expiry markers live a second at least)", cfg.TTL, minTTL)
	}
	if cfg.Clock == nil {
		cfg.Clock = core.SystemClock{}
	}
	cfg.Logger = core.OrDiscard(cfg.Logger)
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("lease: jetstream: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: leaseBucket, History: 1, TTL: cfg.TTL,
		// The marker of an expired key is what wakes a standby.
		LimitMarkerTTL: max(time.Second, cfg.TTL),
		Description:    "jake-bot: which gateway is active"})
	if errors.Is(err, jetstream.ErrBucketExists) {
		kv, err = js.KeyValue(ctx, leaseBucket)
	}
	if err != nil {
		return nil, fmt.Errorf("jetstream lease bucket %s (is JetStream enabled on the server?): %w", leaseBucket, err)
	}
	l := &Lease{kv: kv, cfg: cfg, instance: newID(), ttl: cfg.TTL}
	if st, err := kv.Status(ctx); err == nil && st.TTL() > 0 && st.TTL() != cfg.TTL {
		cfg.Logger.Warn("the lease bucket has another time to live than FAILOVER_AFTER; the bucket's holds (delete the bucket to change it)",
			"bucket", leaseBucket, "bucket_ttl", st.TTL(), "failover_after", cfg.TTL)
		l.ttl = st.TTL()
	}
	return l, nil
}

// TTL is how long the lease lives past its last renewal.
func (l *Lease) TTL() time.Duration { return l.ttl }

// renewEvery is how often the holder writes the key; margin is how long
// before the key could expire the holder stops, for the lag between its
// clock and the server's and for its own timers.
func (l *Lease) renewEvery() time.Duration { return l.ttl / 3 }
func (l *Lease) margin() time.Duration     { return l.ttl / 4 }

// Acquire waits until this gateway holds the lease, or ctx ends. Each
// holder seen meanwhile goes to standby (it may be nil).
func (l *Lease) Acquire(ctx context.Context, standby func(Holder)) (Holder, error) {
	for {
		sent := l.cfg.Clock.Now()
		h := Holder{Name: l.cfg.Name, Instance: l.instance, Since: sent.UTC()}
		data, err := json.Marshal(h)
		if err != nil {
			return Holder{}, err
		}
		cctx, cancel := context.WithTimeout(ctx, requestTimeout)
		rev, err := l.kv.Create(cctx, leaseKey, data)
		cancel()
		if err == nil {
			h.Epoch = rev
			l.take(h, rev, sent)
			return h, nil
		}
		if ctx.Err() != nil {
			return Holder{}, ctx.Err()
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			l.cfg.Logger.Warn("lease not taken; trying again", "err", err)
		}
		if err := l.awaitFree(ctx, standby); err != nil {
			return Holder{}, err
		}
	}
}

// awaitFree watches the key until it is deleted or expires. A watch can
// miss that (a NATS reconnect), so it returns after TTL anyway, for
// Acquire to try again.
func (l *Lease) awaitFree(ctx context.Context, standby func(Holder)) error {
	again := make(chan struct{}, 1)
	t := l.cfg.Clock.AfterFunc(l.ttl, func() { poke(again) })
	defer t.Stop()
	w, err := l.kv.Watch(ctx, leaseKey)
	if err != nil {
		select {
		case <-again:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	defer w.Stop()
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				return nil
			}
			if e == nil {
				continue // the key's current value came, or there is none
			}
			if e.Operation() != jetstream.KeyValuePut {
				return nil
			}
			var h Holder
			if json.Unmarshal(e.Value(), &h) != nil {
				continue
			}
			if h.Epoch == 0 {
				h.Epoch = e.Revision()
			}
			l.mu.Lock()
			changed := !l.known || l.holder != h
			l.holder, l.known = h, true
			l.mu.Unlock()
			if changed && standby != nil {
				standby(h)
			}
		case <-again:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// take makes this gateway the holder, its key written at revision rev by
// a request sent at sent.
func (l *Lease) take(h Holder, rev uint64, sent time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.holder, l.known, l.held = h, true, true
	l.rev, l.renewed = rev, sent
	l.lost, l.why = make(chan struct{}), nil
	l.cfg.Logger.Info("lease taken: this gateway is active", "gateway", h.Name, "epoch", h.Epoch, "ttl", l.ttl)
	l.armDeadline()
	l.renewT = l.cfg.Clock.AfterFunc(l.renewEvery(), l.renew)
}

// armDeadline gives the lease up once TTL less the margin passed since
// the last renewal was sent, unless one succeeds meanwhile. l.mu is held.
func (l *Lease) armDeadline() {
	if l.dead != nil {
		l.dead.Stop()
	}
	renewed := l.renewed
	wait := renewed.Add(l.ttl - l.margin()).Sub(l.cfg.Clock.Now())
	l.dead = l.cfg.Clock.AfterFunc(max(0, wait), func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.held && l.renewed.Equal(renewed) {
			l.lose(fmt.Errorf("lease not renewed for %s: cut off from NATS?", l.ttl-l.margin()))
		}
	})
}

// renew writes the key again, if it is still this gateway's revision.
func (l *Lease) renew() {
	l.mu.Lock()
	if !l.held {
		l.mu.Unlock()
		return
	}
	h, rev := l.holder, l.rev
	l.mu.Unlock()
	data, err := json.Marshal(h)
	if err != nil {
		return
	}
	sent := l.cfg.Clock.Now()
	ctx, cancel := context.WithTimeout(context.Background(), l.renewEvery())
	next, err := l.kv.Update(ctx, leaseKey, data, rev)
	cancel()
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.held {
		return
	}
	switch {
	case err == nil:
		l.rev, l.renewed = next, sent
		l.armDeadline()
	case errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) ||
		errors.Is(err, jetstream.ErrKeyNotFound):
		l.lose(fmt.Errorf("the lease is another gateway's now: %w", err))
		return
	default:
		l.cfg.Logger.Warn("lease not renewed; trying again", "err", err)
	}
	l.renewT = l.cfg.Clock.AfterFunc(l.renewEvery(), l.renew)
}

// lose gives the lease up, for why. l.mu is held.
func (l *Lease) lose(why error) {
	l.held, l.why = false, why
	l.stopTimers()
	close(l.lost)
	l.cfg.Logger.Error("lease lost: this gateway stops serving", "gateway", l.cfg.Name, "err", why)
}

// stopTimers stops renewing. l.mu is held.
func (l *Lease) stopTimers() {
	for _, t := range []core.Timer{l.renewT, l.dead} {
		if t != nil {
			t.Stop()
		}
	}
}

// Drop gives the lease up for why, as if a renewal had failed: another
// gateway was found serving (it wrote the state, ErrStateTaken).
func (l *Lease) Drop(why error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held {
		l.lose(why)
	}
}

// Lost is closed when this gateway, having held the lease, lost it; Err
// then says why. Before Acquire it is nil (it never closes).
func (l *Lease) Lost() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lost
}

// Err says why the lease was lost, nil while it is held or was released.
func (l *Lease) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.why
}

// Holder is the holder last seen (this gateway while it holds the
// lease), and whether one has been seen.
func (l *Lease) Holder() (Holder, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.holder, l.known
}

// Held reports whether this gateway holds the lease.
func (l *Lease) Held() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held
}

// Release gives the lease up at once, deleting the key if it is still
// this gateway's: a standby takes over without waiting for it to expire,
// and this gateway, started again, takes it again at once.
func (l *Lease) Release() {
	l.mu.Lock()
	if !l.held {
		l.mu.Unlock()
		return
	}
	l.held = false
	l.stopTimers()
	rev := l.rev
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	if err := l.kv.Delete(ctx, leaseKey, jetstream.LastRevision(rev)); err != nil {
		l.cfg.Logger.Warn("lease not released; a standby takes over once it expires", "err", err)
		return
	}
	l.cfg.Logger.Info("lease released", "gateway", l.cfg.Name)
}

// LeaseInfo is what the lease bucket says, for `jakebot doctor`.
type LeaseInfo struct {
	// Exists says whether a gateway made the bucket; TTL is its time to
	// live, which every gateway on the server keeps.
	Exists bool
	TTL    time.Duration
	// Holder is the active gateway, nil when none holds the lease.
	Holder *Holder
}

// ReadLease reads the lease bucket on nc's JetStream without changing it.
func ReadLease(ctx context.Context, nc *nats.Conn) (LeaseInfo, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return LeaseInfo{}, err
	}
	kv, err := js.KeyValue(ctx, leaseBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return LeaseInfo{}, nil
	}
	if err != nil {
		return LeaseInfo{}, fmt.Errorf("lease bucket %s: %w", leaseBucket, err)
	}
	st, err := kv.Status(ctx)
	if err != nil {
		return LeaseInfo{}, fmt.Errorf("lease bucket %s: %w", leaseBucket, err)
	}
	info := LeaseInfo{Exists: true, TTL: st.TTL()}
	e, err := kv.Get(ctx, leaseKey)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted):
		return info, nil
	case err != nil:
		return info, fmt.Errorf("lease bucket %s: %w", leaseBucket, err)
	}
	var h Holder
	if err := json.Unmarshal(e.Value(), &h); err != nil {
		return info, fmt.Errorf("lease bucket %s: %w", leaseBucket, err)
	}
	if h.Epoch == 0 {
		h.Epoch = e.Revision()
	}
	info.Holder = &h
	return info, nil
}
