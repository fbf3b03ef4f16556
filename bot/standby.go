package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/jake-bot/jake-bot/bot/metrics"
	"github.com/jake-bot/jake-bot/plugins/remote"
)

// With NATS_URL, several gateways may run on one NATS server: the one
// that holds the lease (remote.Lease) attaches the chat platforms and
// serves the web page; the others stand by, answering on WEB_ADDR and
// HEALTH_ADDR that they do, and take over when the lease expires. Main is
// one term of office: build waits for the lease before it loads anything,
// so that a standby reads the state as the last active gateway left it;
// run ends with errLeaseLost when the lease is lost, and Run stands by
// again with a new Main.

// errLeaseLost is run's error when this gateway lost the lease: it
// stopped serving, and stands by again.
var errLeaseLost = errors.New("lease lost")

// errStopped is build's error when ctx ended while it stood by.
var errStopped = errors.New("stopped while standing by")

// awaitLease waits until this gateway holds the lease, serving the
// standby pages meanwhile.
func (m *Main) awaitLease(ctx context.Context) error {
	name, err := m.cfg.NATS.Gateway()
	if err != nil {
		return err
	}
	m.lease, err = remote.OpenLease(ctx, m.nc, remote.LeaseConfig{Name: name, TTL: m.cfg.NATS.FailoverAfter, Logger: m.logger})
	if err != nil {
		return err
	}
	var pages *standbyPages
	m.holder, err = m.lease.Acquire(ctx, func(h remote.Holder) {
		m.logger.Info("standing by: another gateway is active", "gateway", name, "active", h.Name, "active_since", h.Since)
		if pages == nil {
			var perr error
			if pages, perr = startStandbyPages(m.cfg, name, m.lease, m); perr != nil {
				m.logger.Error("standby pages not served", "err", perr)
			}
		}
	})
	if pages != nil {
		pages.close()
	}
	if err != nil {
		if ctx.Err() != nil {
			return errStopped
		}
		return err
	}
	// Released after the state and the followed turns are saved (closers
	// run last first), so that the next gateway finds them.
	m.closers = append(m.closers, m.lease.Release)
	return nil
}

// gatewayLine says, for /status, which gateway serves and since when.
func (m *Main) gatewayLine() string {
	if m.lease == nil {
		return ""
	}
	return fmt.Sprintf("%s, active since %s (standbys take over within %s)",
		m.holder.Name, m.holder.Since.UTC().Format("2006-01-02 15:04:05 UTC"), m.lease.TTL())
}

// active is metrics.Active for this gateway's lease.
func active(lease *remote.Lease) metrics.Active {
	return func() (bool, string, time.Time) {
		h, known := lease.Holder()
		if !known {
			return false, "", time.Time{}
		}
		return lease.Held(), h.Name, h.Since
	}
}

// standbyPages answer on WEB_ADDR and HEALTH_ADDR while this gateway
// stands by.
type standbyPages struct {
	servers []*healthServer
	once    sync.Once
}

// standbyText is what the standby's web page answers, with 503.
func standbyText(lease *remote.Lease) string {
	h, known := lease.Holder()
	if !known {
		return "standby; no active gateway is known yet"
	}
	return fmt.Sprintf("standby; active gateway is %s since %s", h.Name, h.Since.UTC().Format("2006-01-02 15:04:05 UTC"))
}

func startStandbyPages(cfg Config, name string, lease *remote.Lease, m *Main) (*standbyPages, error) {
	p := &standbyPages{}
	if cfg.Web.Enabled() {
		s, err := serveHTTP(cfg.Web.ListenAddr(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("Retry-After", fmt.Sprint(int(lease.TTL().Seconds())))
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, standbyText(lease))
		}), m.logger)
		if err != nil {
			return p, fmt.Errorf("WEB_ADDR: %w", err)
		}
		m.logger.Info("standby page", "addr", s.ln.Addr().String())
		p.servers = append(p.servers, s)
	}
	if cfg.HealthAddr != "" {
		// A standby is healthy: an orchestrator must not restart it.
		health := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h, _ := lease.Holder()
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"status": "standby", "gateway": name, "active": h.Name, "active_since": h.Since})
		})
		s, err := startHealth(cfg.HealthAddr, health, metrics.Standby(name, active(lease)), m.logger)
		if err != nil {
			p.close()
			return nil, err
		}
		p.servers = append(p.servers, s)
	}
	return p, nil
}

// close stops serving the standby pages, freeing their addresses for the
// active gateway's.
func (p *standbyPages) close() {
	p.once.Do(func() {
		for _, s := range p.servers {
			s.close()
		}
	})
}
