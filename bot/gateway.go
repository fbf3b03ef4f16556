package bot

// What a gateway reaches outside its own process: NATS (and the lease it
// waits there for), the runners, and the state it keeps across restarts.

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/jake-bot/jake-bot/bot/state"
	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/web"
	"github.com/jake-bot/jake-bot/plugins/remote"
)

// loadState reads the conversations kept across restarts and mirrors
// every change back: to NATS's key-value bucket with NATS_URL, so that a
// gateway restarted anywhere finds them, else to STATE_FILE.
func (m *Main) loadState(ctx context.Context) error {
	m.convs = core.NewState()
	if m.cfg.StateFile == "off" || (m.cfg.StateFile == "" && m.nc == nil) {
		return nil
	}
	var saved state.Snapshot
	var mirror *state.Mirror
	if m.nc != nil {
		store, err := remote.OpenState(ctx, m.nc)
		if err != nil {
			return err
		}
		if saved, err = loadFrom(ctx, store, m.logger); err != nil {
			return err
		}
		mirror = state.NewMirrorTo(store.Where(), func(s state.Snapshot, now time.Time) error {
			data, err := state.Encode(s, now)
			if err != nil {
				return err
			}
			err = store.Save(context.WithoutCancel(ctx), data)
			if errors.Is(err, remote.ErrStateTaken) {
				m.lease.Drop(err) // two gateways serve: this one stops
			}
			return err
		}, m.convs, stateInterval, nil, m.logger)
	} else {
		saved = state.Load(m.cfg.StateFile, m.logger)
		mirror = state.NewMirror(m.cfg.StateFile, m.convs, stateInterval, nil, m.logger)
	}
	m.mirror = mirror
	m.convs.Load(withinRoots(saved.Conversations, m.policy.roots, m.logger))
	m.convs.LoadOwners(saved.Owners)
	m.convs.LoadSpends(saved.Spend)
	m.convs.LoadSchedules(saved.Schedules)
	m.convs.LoadWindows(saved.Windows)
	m.closers = append(m.closers, func() {
		if err := mirror.Close(); err != nil {
			m.logger.Error("state not saved", "err", err)
		}
	})
	return nil
}

// loadFrom reads the state kept in NATS. Unreadable state is logged and
// the bot starts empty, as with a bad state file.
func loadFrom(ctx context.Context, store *remote.StateStore, logger *slog.Logger) (state.Snapshot, error) {
	data, err := store.Load(ctx)
	if errors.Is(err, remote.ErrStateUnreadable) {
		// Its next save replaces it: say so where an admin looks.
		logger.Error("state in NATS unreadable; starting with no conversations", "where", store.Where(), "err", err)
		return state.Snapshot{}, nil
	}
	if err != nil || data == nil {
		return state.Snapshot{}, err
	}
	snap, err := state.Decode(data)
	if err != nil {
		logger.Warn("state in NATS unusable; starting with no conversations", "where", store.Where(), "err", err)
		return state.Snapshot{}, nil
	}
	logger.Info("state loaded", "where", store.Where(), "conversations", len(snap.Conversations))
	return snap, nil
}

// natsRetry is how long a gateway that lost the lease waits between its
// tries to reach NATS again.
const natsRetry = time.Second

// connectNATS joins NATS_URL and waits there until this gateway is the
// active one.
func (m *Main) connectNATS(ctx context.Context) error {
	if !m.cfg.NATS.Enabled() {
		return nil
	}
	nc, err := remote.Connect(m.cfg.NATS, "jakebot gateway", m.logger)
	for err != nil && m.again {
		m.logger.Warn("NATS out of reach; trying again", "err", err)
		select {
		case <-ctx.Done():
			return errStopped
		case <-time.After(natsRetry):
		}
		nc, err = remote.Connect(m.cfg.NATS, "jakebot gateway", m.logger)
	}
	if err != nil {
		return err
	}
	m.nc = nc
	m.closers = append(m.closers, nc.Close)
	return m.awaitLease(ctx)
}

// connectRunners joins NATS_URL as the gateway to the runners there.
func (m *Main) connectRunners(ctx context.Context) error {
	if m.nc == nil {
		return nil
	}
	nc := m.nc
	var err error
	if m.runners, err = remote.NewGateway(ctx, nc, remote.GatewayConfig{
		Redactor: core.NewRedactor(m.cfg.Secrets), Logger: m.logger}); err != nil {
		return err
	}
	m.closers = append(m.closers, m.runners.Close)
	m.logger.Info("reaching runners through NATS", "server", nc.ConnectedUrlRedacted())
	if m.localTurns, err = remote.OpenLocalTurns(ctx, nc, m.holder.Name, m.logger); err != nil {
		return err
	}
	if m.cfg.Web.Enabled() {
		// The page's sign-ins too, so that a standby taking over accepts
		// the browsers signed in here.
		signIns, err := remote.OpenWebSignIns(ctx, nc, web.SessionTTL)
		if err != nil {
			return err
		}
		m.webSignIns = signIns
	}
	return nil
}
