package core

import (
	"errors"
	"fmt"
	"time"
)

// WarmPIDs returns the process ids of the warm CLIs waiting on this
// machine: bot/metrics reports their memory.
func (r *Router) WarmPIDs() []int { return r.warm.pids() }

// warmSummary says, for /status, how many warm CLIs the bot keeps and why.
func (r *Router) warmSummary() string {
	if !r.warm.enabled() {
		return "off"
	}
	s := fmt.Sprintf("at most %d in the bot, %d waiting", r.warm.max, r.warm.count())
	if r.cfg.WarmMaxFrom != "" {
		s += " (" + r.cfg.WarmMaxFrom + ")"
	}
	return s
}

// warmUp starts the next turn's CLI for key's conversation, in the
// background, if its plugin can.
func (r *Router) warmUp(m Message, may permits) {
	if !r.warm.enabled() {
		return
	}
	conv, ok := r.convs.Get(m.Key)
	if !ok {
		return
	}
	p, ok := r.cfg.Plugins.Get(conv.Plugin)
	w, canWarm := p.(Warmer)
	if !ok || !canWarm {
		return
	}
	// A conversation on a runner has no workdir here: its turns warm
	// nothing on this machine.
	workdir, err := r.conversationWorkdir(m, conv)
	if err != nil {
		return
	}
	// The bound the turn would have now: one that differs when it runs
	// (another turn of the author's spent or holds some) makes a cold start.
	maxUSD, _ := r.holds.budgetFor(m, r.holds.heldBy(OwnerOf(m)))
	t, _ := r.turnFor(m, may, conv, p, workdir, maxUSD)
	tools := r.leaseTools()
	t.Tools = tools.Access()
	id := r.warm.begin(m.Key)
	r.warm.wg.Add(1)
	go func() {
		defer r.warm.wg.Done()
		wt, err := w.Warm(r.turnCtx, t)
		if err != nil {
			tools.end()
			if !errors.Is(err, ErrNoWarm) {
				r.logger.Debug("no warm CLI", "conversation", m.Key.String(), "err", err)
			}
			return
		}
		if !r.turns.idle(m.Key) {
			// A turn started meanwhile, or shutdown: this one is late.
			wt.Close()
			tools.end()
			return
		}
		r.warm.put(m.Key, id, &warmCLI{w: wt, plugin: p.ID(), turn: t, tools: tools, used: time.Now()})
	}()
}

// warmFor returns the warm CLI waiting for exactly turn t of plugin, with
// the bot's tools opened for it, or nil; one that does not fit (the
// session, workdir or mode changed, or it went stale) is closed.
func (r *Router) warmFor(plugin string, t Turn) (WarmTurn, *toolLease) {
	c := r.warm.take(t.Key)
	if c == nil {
		return nil, nil
	}
	if c.plugin != plugin || c.turn.Workdir != t.Workdir || c.turn.SessionID != t.SessionID || c.turn.Ask != t.Ask ||
		c.turn.Model != t.Model || c.turn.Mode != t.Mode || c.turn.ReadOnly != t.ReadOnly || c.turn.MaxCostUSD != t.MaxCostUSD || !c.w.Fresh() {
		r.warm.close(c)
		return nil, nil
	}
	return c.w, c.tools
}
