// The reply: what the router says in a chat outside a turn's own reply.

package core

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// noConversation is the answer where a message needs a conversation and
// there is none: how to start one.
func (r *Router) noConversation() string {
	ids := r.cfg.Plugins.IDs()
	if len(ids) == 0 {
		return "No conversation here, and no plugins are configured."
	}
	return fmt.Sprintf("No conversation here yet. Start one with /%s start [workdir] (plugins: %s), or /help.", ids[0], joinIDs(ids))
}

// typing shows the platform's typing indicator until the returned func is
// called.
func (r *Router) typing(ctx context.Context, p Platform, to Target) (stop func()) {
	t, ok := p.(Typer)
	if !ok {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(typingInterval)
		defer tick.Stop()
		for {
			if err := t.Typing(ctx, to); err != nil {
				r.logger.Debug("typing", "err", err)
			}
			select {
			case <-tick.C:
			case <-done:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return sync.OnceFunc(func() { close(done) })
}

// typingInterval is below the shortest indicator lifetime (Telegram's 5 s).
const typingInterval = 4 * time.Second

// reply renders text as one text block and sends it, waiting for delivery.
func (r *Router) reply(a *attached, to Target, text string) {
	rep := a.coord.NewReply(r.deliverCtx, to)
	rep.Add(ResponseBlock{Kind: BlockText, Text: text})
	rep.Close(r.deliverCtx)
}

// offer posts text with one button; a platform without buttons gets text
// and how to do the same by typing.
func (r *Router) offer(a *attached, to Target, text string, choices []Choice, typed string) {
	if o, ok := a.p.(ChoiceOfferer); ok {
		if _, err := o.OfferChoices(r.deliverCtx, to, text, choices); err == nil {
			return
		}
	}
	r.reply(a, to, text+" "+typed)
}

// replyError sends an error block; an error that is not a UserError is
// logged under id and shown only by its id.
func (r *Router) replyError(a *attached, to Target, id string, err error) {
	if !IsUserError(err) {
		r.logger.Error("internal error", "id", id, "err", err)
	}
	rep := a.coord.NewReply(r.deliverCtx, to)
	rep.Add(ResponseBlock{Kind: BlockError, Text: errorText(err, id)})
	rep.Close(r.deliverCtx)
}

// say sends ans to the chat at to; id is the message's, under which an
// internal error is logged.
func (r *Router) say(a *attached, to Target, id string, ans answer) {
	switch {
	case ans.err != nil:
		r.replyError(a, to, id, ans.err)
	case len(ans.choices) > 0:
		r.offer(a, to, ans.text, ans.choices, ans.typed)
	case ans.text != "":
		r.reply(a, to, ans.text)
	}
}

// notify tells m's author text through the platform's Notifier, so that
// their phone buzzes; a platform without one (the console) is watched.
func (r *Router) notify(a *attached, m Message, why NotifyReason, text string) {
	n, ok := a.p.(Notifier)
	if !ok {
		return
	}
	if err := n.Notify(r.deliverCtx, m.Target(), m.Author(), why, r.cfg.Redactor.Redact(text)); err != nil {
		r.logger.Warn("notify", "conversation", m.Key.String(), "err", err)
	}
}
