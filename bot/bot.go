// Package bot wires jake-bot together: it builds the configured plugins and
// platforms, attaches each platform to one router, and owns start-up and
// shutdown.
package bot

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/console"
)

// Stdio is the console's input and output, and where logs go.
type Stdio struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
	// TTY says whether In and Out are a terminal.
	TTY bool
	// ErrTTY says whether Err is a terminal: only then is the web's
	// sign-in URL, which holds its token, printed there (otherwise Err is
	// most likely a log: systemd's journal, docker logs).
	ErrTTY bool
	// Typed says whether a person types In (a terminal), so that lines go
	// to the bot at once; otherwise In is a script whose lines run in
	// order, each once the one before it is done.
	Typed bool
}

// stateInterval is the debounce of state file writes.
const stateInterval = 500 * time.Millisecond

// Run runs the bot until its platforms' input ends and every turn has
// finished, or until ctx is cancelled (SIGINT, SIGTERM). Then it shuts
// down gently: no new turns, a notice to every running turn's chat,
// ShutdownGrace for running turns to finish, then they are cancelled. It
// returns nil after a clean shutdown.
//
// Like wtf's Main, it has three steps: build every part from cfg, run the
// platforms, and close what was opened, in reverse order. With NATS_URL,
// build first waits for the gateways' lease, and a gateway that loses it
// stops serving at once and stands by again (standby.go).
func Run(ctx context.Context, cfg Config, stdio Stdio) error {
	again := false
	for {
		m := &Main{cfg: cfg, stdio: stdio, again: again}
		err := m.build(ctx)
		if err == nil {
			err = m.run(ctx)
		}
		m.close()
		switch {
		case errors.Is(err, errStopped) || err != nil && ctx.Err() != nil:
			return nil // stopped while standing by or starting
		case errors.Is(err, errLeaseLost):
			// Another gateway serves now, or will: stand by for it.
			m.logger.Warn("this gateway stopped serving: it lost the lease; standing by again")
			again = true
		default:
			return err
		}
	}
}

func windDown(router *core.Router, cfg Config, logger *slog.Logger) {
	grace := cfg.ShutdownGrace
	if grace <= 0 {
		grace = defaultGrace
	}
	st := router.Stats()
	logger.Info("shutting down: no new turns", "running_turns", st.Running, "queued", st.Queued, "grace", grace)
	router.WindDown(grace)
}

const defaultGrace = 30 * time.Second

// withinRoots drops the saved conversations whose workdir now resolves
// outside the allowed roots (ALLOWED_ROOTS narrowed, a symlink swapped in):
// a restart must not keep a conversation outside the policy. A workdir
// that is missing for now stays: each turn checks it again.
func withinRoots(entries []core.Entry, roots core.Roots, logger *slog.Logger) []core.Entry {
	kept := entries[:0:0]
	for _, e := range entries {
		if e.Runner != "" {
			kept = append(kept, e) // its runner checks it, on every turn
			continue
		}
		if real, err := filepath.EvalSymlinks(e.Workdir); err == nil && !roots.Contains(real) {
			logger.Warn("conversation dropped: its workdir is outside the allowed roots", "conversation", e.Key.String(), "workdir", e.Workdir, "resolved", real)
			continue
		}
		kept = append(kept, e)
	}
	return kept
}

// allowVar names the variable that lists a platform's allowed users, for
// start-up messages.
func allowVar(platform string) string {
	if platform == console.Name {
		return "(the console's local user is always allowed)"
	}
	return strings.ToUpper(platform) + "_ALLOWED_USERS"
}

// notifyAfter maps NOTIFY_AFTER=0 (never) to the router's "never".
func notifyAfter(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}
