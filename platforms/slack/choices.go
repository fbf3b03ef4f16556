package slack

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/jake-bot/jake-bot/core"
)

// choicePrefix marks the action ids of the bot's buttons.
const choicePrefix = "jakebot-choice-"

// Block Kit's limits.
const (
	maxSectionText  = 3000
	maxButtonText   = 75
	maxButtonValue  = 2000
	buttonsPerBlock = 25
)

var _ core.ChoiceOfferer = (*Adapter)(nil)

// OfferChoices posts text with a button per choice (Block Kit, over
// Socket Mode: the app needs interactivity on). A press acts as if the
// presser typed the choice's command where the buttons are.
func (a *Adapter) OfferChoices(ctx context.Context, to core.Target, text string, choices []core.Choice) (core.MessageRef, error) {
	pages := a.Render([]core.ResponseBlock{{Kind: core.BlockText, Text: text}})
	if len(pages) != 1 || utf8.RuneCountInString(pages[0]) > maxSectionText || len(choices) == 0 {
		return core.MessageRef{}, errors.New("slack: choices do not fit in blocks")
	}
	blocks := []slack.Block{slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, pages[0], false, false), nil, nil)}
	var buttons []slack.BlockElement
	for i, c := range choices {
		if len(c.Command) > maxButtonValue {
			return core.MessageRef{}, errors.New("slack: a choice's command is too long for a button")
		}
		label := c.Label
		if strings.TrimSpace(label) == "" {
			label = c.Command
		}
		buttons = append(buttons, slack.NewButtonBlockElement(choicePrefix+strconv.Itoa(i), c.Command,
			slack.NewTextBlockObject(slack.PlainTextType, core.Shorten(label, maxButtonText), false, false)))
	}
	for len(buttons) > 0 {
		n := min(len(buttons), buttonsPerBlock)
		blocks = append(blocks, slack.NewActionBlock("", buttons[:n]...))
		buttons = buttons[n:]
	}
	opts := []slack.MsgOption{slack.MsgOptionText(pages[0], false), slack.MsgOptionBlocks(blocks...), slack.MsgOptionDisableLinkUnfurl()}
	if to.Thread != "" {
		opts = append(opts, slack.MsgOptionTS(to.Thread))
	}
	_, ts, err := a.api.PostMessageContext(ctx, to.Channel, opts...)
	if err != nil {
		return core.MessageRef{}, translate("chat.postMessage", err)
	}
	a.buttons.Add(to.Channel+"/"+ts, struct{}{})
	return core.MessageRef{Target: to, ID: ts}, nil
}

// press reads a button press as the message its command is: from the
// presser, in the conversation the buttons are in.
func (a *Adapter) press(cb slack.InteractionCallback) (inbound, bool) {
	if cb.Type != slack.InteractionTypeBlockActions || len(cb.ActionCallback.BlockActions) == 0 {
		return inbound{}, false
	}
	act := cb.ActionCallback.BlockActions[0]
	if !strings.HasPrefix(act.ActionID, choicePrefix) || act.Value == "" {
		return inbound{}, false // not one of ours
	}
	channel := cb.Channel.ID
	if channel == "" {
		channel = cb.Container.ChannelID
	}
	user := cb.User.ID
	// No UserName: Slack's message events carry none, and a chat that
	// named the same person by their id in one line and their legacy
	// handle in the next would confuse. Replies name users by id here.
	m := core.Message{ID: cb.TriggerID, Text: act.Value, From: user}
	if isDM(channel) {
		m.Key = core.ConversationKey{Platform: Name, User: user, Channel: channel}
		return inbound{queue: channel + "/", msgs: []core.Message{m}}, true
	}
	thread := cb.Container.ThreadTs
	if thread == "" {
		thread = cb.Message.ThreadTimestamp
	}
	m.Key = core.ConversationKey{Platform: Name, Channel: channel, Thread: thread}
	return inbound{queue: channel + "/" + thread, msgs: []core.Message{m}}, true
}
