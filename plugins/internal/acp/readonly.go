package acp

import (
	"strings"

	"github.com/jake-bot/jake-bot/core"
)

// noReadOnlyMode ends a read-only turn whose agent announced no mode of
// the id Options.ReadOnlyMode in session s: the prompt is not sent.
func (a *Client) noReadOnlyMode(s Session) {
	ids := make([]string, len(s.Modes))
	for i, m := range s.Modes {
		ids[i] = m.ID
	}
	announced := "none"
	if len(ids) > 0 {
		announced = strings.Join(ids, ", ")
	}
	a.link.Emit(core.ErrorEvent(core.ErrNoReadOnly.Error() + " (" + a.opts.Name + " announced the modes: " + announced + ")."))
	a.failed = true
	a.link.Done()
}

// modeChanged is the agent saying it switched its session to mode id on
// its own (every request to leave it is refused, see request): a
// read-only turn that leaves its read-only mode is cancelled and its
// input closed.
func (a *Client) modeChanged(id string) {
	if !a.turn.ReadOnly || id == "" || id == a.opts.ReadOnlyMode {
		return
	}
	a.link.Emit(core.ErrorEvent(a.opts.Name + " left its read-only mode (for " + id + "), so this read-only turn was stopped."))
	a.failed = true
	if err := a.Interrupt(); err != nil {
		a.link.Logger().Warn(a.opts.Name+": cancel a turn that left its read-only mode", "err", err)
	}
	a.link.Done()
}
