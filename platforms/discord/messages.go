package discord

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/formatter"
)

// Send posts text in to's channel, or completes the deferred response of
// the slash command to.ReplyTo names when that is still open. A 429 comes
// back as a *core.RateLimitError.
func (a *Adapter) Send(ctx context.Context, to core.Target, text string) (core.MessageRef, error) {
	content, embeds := errorEmbeds(text)
	if p := a.interactionFor(to.ReplyTo); p != nil && p.claim() {
		_, err := a.api.InteractionResponseEdit(p.i, &discordgo.WebhookEdit{Content: &content, Embeds: &embeds,
			AllowedMentions: noMentions()}, discordgo.WithContext(ctx))
		err = apiError("complete interaction", err)
		p.settle(err)
		if err == nil {
			return core.MessageRef{Target: to, ID: originalID}, nil
		}
		if _, ok := core.AsRateLimit(err); ok {
			return core.MessageRef{}, err
		}
		a.logger.Warn("interaction response failed, posting in the channel", "err", err)
	}
	msg, err := a.api.ChannelMessageSendComplex(channelOf(to), &discordgo.MessageSend{Content: content, Embeds: embeds,
		AllowedMentions: noMentions()}, discordgo.WithContext(ctx))
	if err != nil {
		return core.MessageRef{}, apiError("send message", err)
	}
	return core.MessageRef{Target: to, ID: msg.ID}, nil
}

// Edit replaces the text of a message Send posted.
func (a *Adapter) Edit(ctx context.Context, ref core.MessageRef, text string) error {
	content, embeds := errorEmbeds(text)
	if ref.ID == originalID {
		p := a.interactionFor(ref.Target.ReplyTo)
		if p == nil {
			return errors.New("discord: the interaction has expired")
		}
		_, err := a.api.InteractionResponseEdit(p.i, &discordgo.WebhookEdit{Content: &content, Embeds: &embeds,
			Components: &noComponents, AllowedMentions: noMentions()}, discordgo.WithContext(ctx))
		return apiError("edit interaction response", err)
	}
	// An edit leaves no buttons: a question answered shows its answer.
	_, err := a.api.ChannelMessageEditComplex(&discordgo.MessageEdit{Channel: channelOf(ref.Target), ID: ref.ID,
		Content: &content, Embeds: &embeds, Components: &noComponents, AllowedMentions: noMentions()}, discordgo.WithContext(ctx))
	return apiError("edit message", err)
}

// Typing shows "jake-bot is typing…" in to's channel for ten seconds.
func (a *Adapter) Typing(ctx context.Context, to core.Target) error {
	return apiError("typing", a.api.ChannelTyping(channelOf(to), discordgo.WithContext(ctx)))
}

// reactionEmoji are the emoji each state of a turn shows (Discord takes
// any).
var reactionEmoji = map[core.Reaction]string{
	core.ReactionRunning: "👀", core.ReactionWaiting: "⏳", core.ReactionDone: "✅",
	core.ReactionFailed: "❌", core.ReactionStopped: "🛑", core.ReactionLimit: "🔁",
}

// React shows state on m (core.Reacter): its emoji is added, then the one
// shown before removed, so that the message always shows one. Tried
// again after a 429, each step that was done is a no-op.
func (a *Adapter) React(ctx context.Context, m core.Message, state core.Reaction) error {
	emoji, ok := reactionEmoji[state]
	if !ok || m.ReplyTo != "" || m.ID == "" {
		return nil // an interaction (a command, a button): no message of the user's
	}
	channel := channelOf(m.Target())
	if err := a.api.MessageReactionAdd(channel, m.ID, emoji, discordgo.WithContext(ctx)); err != nil {
		return apiError("add reaction", err)
	}
	key := channel + "/" + m.ID
	if prev, ok := a.reacted.Get(key); ok && prev != emoji {
		if err := a.api.MessageReactionRemove(channel, m.ID, prev, "@me", discordgo.WithContext(ctx)); err != nil {
			return apiError("remove reaction", err)
		}
	}
	a.reacted.Set(key, emoji)
	return nil
}

// Discord's limits on buttons.
const (
	maxButtons      = 25
	buttonsPerRow   = 5
	maxCustomID     = 100
	maxButtonLabel  = 80
	maxChoiceLength = 100
)

// OfferChoices shows text with one button per choice; pressing a button
// sends its command. It fails, and the router falls back to a numbered
// list, when the choices do not fit Discord's limits.
func (a *Adapter) OfferChoices(ctx context.Context, to core.Target, text string, choices []core.Choice) (core.MessageRef, error) {
	if len(choices) == 0 || len(choices) > maxButtons || utf8.RuneCountInString(text) > maxLen {
		return core.MessageRef{}, errors.New("discord: choices do not fit in buttons")
	}
	var rows []discordgo.MessageComponent
	var row discordgo.ActionsRow
	seen := map[string]bool{}
	for _, c := range choices {
		if len(c.Command) > maxCustomID || seen[c.Command] {
			return core.MessageRef{}, errors.New("discord: choice command too long for a button")
		}
		seen[c.Command] = true
		label := core.Shorten(c.Label, maxButtonLabel)
		if label == "" {
			label = core.Shorten(c.Command, maxButtonLabel)
		}
		row.Components = append(row.Components, discordgo.Button{Label: label, Style: discordgo.SecondaryButton, CustomID: c.Command})
		if len(row.Components) == buttonsPerRow {
			rows, row = append(rows, row), discordgo.ActionsRow{}
		}
	}
	if len(row.Components) > 0 {
		rows = append(rows, row)
	}
	if p := a.interactionFor(to.ReplyTo); p != nil && p.claim() {
		_, err := a.api.InteractionResponseEdit(p.i, &discordgo.WebhookEdit{Content: &text, Components: &rows,
			AllowedMentions: noMentions()}, discordgo.WithContext(ctx))
		err = apiError("offer choices", err)
		p.settle(err)
		if err != nil {
			return core.MessageRef{}, err
		}
		return core.MessageRef{Target: to, ID: originalID}, nil
	}
	msg, err := a.api.ChannelMessageSendComplex(channelOf(to), &discordgo.MessageSend{Content: text, Components: rows,
		AllowedMentions: noMentions()}, discordgo.WithContext(ctx))
	if err != nil {
		return core.MessageRef{}, apiError("offer choices", err)
	}
	return core.MessageRef{Target: to, ID: msg.ID}, nil
}

var noComponents = []discordgo.MessageComponent{}

// channelOf is the Discord channel to write to: a thread is a channel.
func channelOf(t core.Target) string {
	if t.Thread != "" {
		return t.Thread
	}
	return t.Channel
}

// noMentions keeps text from a CLI from pinging anyone (@everyone in a
// model's answer must stay text).
func noMentions() *discordgo.MessageAllowedMentions {
	return &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}}
}

// errorColor is Discord's red.
const errorColor = 0xED4245

// maxEmbeds is how many embeds one message may carry.
const maxEmbeds = 10

// errorPrefix is how formatter.Markdown starts an error block; asking the
// formatter keeps the two in step.
var errorPrefix = func() string {
	s := formatter.MarkdownText([]core.ResponseBlock{{Kind: core.BlockError, Text: "\x00"}})
	prefix, _, _ := strings.Cut(s, "\x00")
	return prefix
}()

// errorEmbeds moves each error paragraph of a rendered page (outside code
// blocks) into a red embed and returns the rest as the content. Discord
// rejects a message with neither, so an empty page becomes a zero-width
// space.
func errorEmbeds(text string) (string, []*discordgo.MessageEmbed) {
	embeds := []*discordgo.MessageEmbed{}
	if errorPrefix == "" || !strings.Contains(text, errorPrefix) {
		return nonEmpty(text), embeds
	}
	var keep, errLines []string
	inFence, inError := false, false
	flush := func() {
		if len(errLines) > 0 {
			embeds = append(embeds, &discordgo.MessageEmbed{Title: "Error", Color: errorColor,
				Description: strings.Join(errLines, "\n")})
			errLines = nil
		}
		inError = false
	}
	for _, line := range strings.Split(text, "\n") {
		switch {
		case inError && strings.TrimSpace(line) == "":
			flush() // the blank line went with the paragraph
		case inError:
			errLines = append(errLines, line)
		case !inFence && strings.HasPrefix(line, errorPrefix) && len(embeds) < maxEmbeds:
			inError = true
			errLines = append(errLines, strings.TrimPrefix(line, errorPrefix))
		default:
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				inFence = !inFence
			}
			keep = append(keep, line)
		}
	}
	flush()
	return nonEmpty(strings.Trim(strings.Join(keep, "\n"), "\n")), embeds
}

func nonEmpty(s string) string {
	if s == "" {
		return "\u200b"
	}
	return s
}

// Notify posts text with an @mention of user that only they are pinged
// by: Discord sends no notification for an edit, and the bot's other
// messages mention nobody.
func (a *Adapter) Notify(ctx context.Context, to core.Target, user string, why core.NotifyReason, text string) error {
	pages := a.Render([]core.ResponseBlock{{Kind: core.BlockText, Text: text}})
	if len(pages) == 0 {
		return nil
	}
	_, err := a.api.ChannelMessageSendComplex(channelOf(to), &discordgo.MessageSend{Content: "<@" + user + "> " + pages[0],
		AllowedMentions: &discordgo.MessageAllowedMentions{Users: []string{user}}}, discordgo.WithContext(ctx))
	return apiError("notify", err)
}
