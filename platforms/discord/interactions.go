package discord

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/jake-bot/jake-bot/core"
)

// interactionTTL is how long Discord accepts an interaction's token.
const interactionTTL = 15 * time.Minute

// ackTimeout bounds the deferred response: Discord drops an interaction
// that is not answered within three seconds.
const ackTimeout = discordgo.InteractionDeadline

// replyPrefix marks a Target.ReplyTo that names an interaction.
const replyPrefix = "interaction:"

// originalID is the MessageRef.ID of an interaction's own response, which
// is edited through the interaction's webhook rather than the channel.
const originalID = "@original"

// interaction is a slash command or button press the adapter has
// acknowledged with a deferred response. The first page of the command's
// reply completes that response; later pages are channel messages.
type interaction struct {
	i         *discordgo.Interaction
	at        time.Time
	ephemeral bool
	acked     chan struct{}
	ackErr    error // written before acked is closed

	mu      sync.Mutex
	claimed bool // the deferred response is completed, or being completed
	dead    bool // the token failed: use the channel
}

func (p *interaction) ref() string { return replyPrefix + p.i.ID }

// claim reserves the deferred response for one write.
func (p *interaction) claim() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.claimed || p.dead || p.ackErr != nil {
		return false
	}
	p.claimed = true
	return true
}

// settle ends a claim: a rate-limited write gives the response back for
// the retry; any other failure retires the token.
func (p *interaction) settle(err error) {
	if err == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := core.AsRateLimit(err); ok {
		p.claimed = false
	} else {
		p.dead = true
	}
}

// track remembers i until its token expires.
func (a *Adapter) track(i *discordgo.Interaction, ephemeral bool) *interaction {
	now := time.Now()
	p := &interaction{i: i, at: now, ephemeral: ephemeral, acked: make(chan struct{})}
	a.mu.Lock()
	defer a.mu.Unlock()
	for id, old := range a.pending {
		if now.Sub(old.at) > interactionTTL {
			delete(a.pending, id)
		}
	}
	a.pending[i.ID] = p
	return p
}

// interactionFor returns the live interaction a ReplyTo names, or nil.
func (a *Adapter) interactionFor(replyTo string) *interaction {
	id, ok := strings.CutPrefix(replyTo, replyPrefix)
	if !ok {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	p := a.pending[id]
	if p == nil || time.Since(p.at) > interactionTTL {
		return nil
	}
	return p
}

// ack sends the deferred response ("thinking…").
func (a *Adapter) ack(p *interaction) {
	defer close(p.acked)
	_, ctx, _ := a.handler()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ackTimeout)
	defer cancel()
	resp := &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredChannelMessageWithSource}
	if p.ephemeral {
		resp.Data = &discordgo.InteractionResponseData{Flags: discordgo.MessageFlagsEphemeral}
	}
	if err := a.api.InteractionRespond(p.i, resp, discordgo.WithContext(ctx)); err != nil {
		p.ackErr = apiError("acknowledge interaction", err)
		a.logger.Warn("acknowledge interaction", "err", p.ackErr, "interaction", p.i.ID)
	}
}

// complete replaces the deferred response with text.
func (a *Adapter) complete(ctx context.Context, p *interaction, text string) {
	if !p.claim() {
		return
	}
	_, err := a.api.InteractionResponseEdit(p.i, &discordgo.WebhookEdit{Content: &text, AllowedMentions: noMentions()},
		discordgo.WithContext(ctx))
	err = apiError("complete interaction", err)
	p.settle(err)
	if err != nil {
		a.logger.Warn("complete interaction", "err", err)
	}
}

// finish runs after the router has handled the command. If nothing
// completed the deferred response, it is deleted, so Discord does not
// show the command as failed.
func (a *Adapter) finish(ctx context.Context, p *interaction) {
	if !p.claim() {
		return
	}
	if err := a.api.InteractionResponseDelete(p.i, discordgo.WithContext(ctx)); err != nil {
		a.logger.Warn("delete unanswered interaction", "err", err)
	}
}

// errNotPrivate makes the router refuse in public where Discord has no
// private reply: plain messages.
var errNotPrivate = errors.New("discord: no private reply for a plain message")

// Refuse answers a refused slash command with a message only the user
// sees. For plain messages it returns an error, and the router replies in
// the channel.
func (a *Adapter) Refuse(ctx context.Context, m core.Message, text string) error {
	p := a.interactionFor(m.ReplyTo)
	if p == nil {
		return errNotPrivate
	}
	if p.ephemeral {
		// The deferred response is already private: complete it.
		if !p.claim() {
			return errNotPrivate
		}
		_, err := a.api.InteractionResponseEdit(p.i, &discordgo.WebhookEdit{Content: &text, AllowedMentions: noMentions()},
			discordgo.WithContext(ctx))
		err = apiError("refuse", err)
		p.settle(err)
		return err
	}
	if !p.claim() {
		return errNotPrivate
	}
	_, err := a.api.FollowupMessageCreate(p.i, true, &discordgo.WebhookParams{Content: text,
		Flags: discordgo.MessageFlagsEphemeral, AllowedMentions: noMentions()}, discordgo.WithContext(ctx))
	if err != nil {
		err = apiError("refuse", err)
		p.settle(err)
		return err
	}
	// The public "thinking…" placeholder has nothing left to say.
	if err := a.api.InteractionResponseDelete(p.i, discordgo.WithContext(ctx)); err != nil {
		a.logger.Debug("delete deferred response", "err", err)
	}
	return nil
}
