package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/jake-bot/jake-bot/core"
)

// healthServer serves /healthz and /metrics on HEALTH_ADDR, or a
// standby gateway's pages (standby.go).
type healthServer struct {
	srv *http.Server
	ln  net.Listener
}

// healthz reports each platform's connection state: 200 when every
// platform is healthy, 503 otherwise.
func healthz(platforms []core.Platform) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		status := map[string]string{}
		code := http.StatusOK
		for _, p := range platforms {
			status[p.Name()] = "ok"
			if h, ok := p.(core.Healther); ok {
				if err := h.Healthy(); err != nil {
					status[p.Name()] = err.Error()
					code = http.StatusServiceUnavailable
				}
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		overall := "ok"
		if code != http.StatusOK {
			overall = "unhealthy"
		}
		json.NewEncoder(w).Encode(map[string]any{"status": overall, "platforms": status})
	}
}

// startHealth listens on addr (HEALTH_ADDR) and serves /healthz and
// /metrics in the background.
func startHealth(addr string, health, metrics http.Handler, logger *slog.Logger) (*healthServer, error) {
	mux := http.NewServeMux()
	mux.Handle("/healthz", health)
	mux.Handle("/metrics", metrics)
	h, err := serveHTTP(addr, mux, logger)
	if err != nil {
		return nil, fmt.Errorf("HEALTH_ADDR: %w", err)
	}
	logger.Info("health and metrics", "addr", h.ln.Addr().String())
	return h, nil
}

// serveHTTP listens on addr and serves h in the background.
func serveHTTP(addr string, h http.Handler, logger *slog.Logger) (*healthServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &healthServer{srv: &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}, ln: ln}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("http server", "addr", addr, "err", err)
		}
	}()
	return s, nil
}

func (h *healthServer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	h.srv.Shutdown(ctx)
}
