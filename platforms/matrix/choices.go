package matrix

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"maunium.net/go/mautrix/event"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/lanes"
)

// choiceKeys are the reactions that stand for a question's choices:
// 1️⃣ … 🔟 (keycap sequences, as clients' emoji pickers send them).
var choiceKeys = []string{"1️⃣", "2️⃣", "3️⃣", "4️⃣", "5️⃣", "6️⃣", "7️⃣", "8️⃣", "9️⃣", "🔟"}

// pressID marks a core.Message made from a reaction on a choice: there
// is no message of the user's to react on.
const pressID = "reaction"

// offer is one of the bot's messages that offers choices.
type offer struct {
	channel, thread string
	commands        map[string]string // reaction key → command
	reactions       []string          // the bot's own reactions' event ids
}

// OfferChoices sends text with a legend of numbered reactions, and adds
// them itself so that one click answers. A reaction by someone else acts
// as if they typed the choice's command in the thread; typing it works
// too.
func (a *Adapter) OfferChoices(ctx context.Context, to core.Target, text string, choices []core.Choice) (core.MessageRef, error) {
	if len(choices) == 0 || len(choices) > len(choiceKeys) {
		return core.MessageRef{}, errors.New("matrix: choices do not fit in numbered reactions")
	}
	off := offer{channel: to.Channel, thread: to.Thread, commands: map[string]string{}}
	var legend []string
	for i, c := range choices {
		label := c.Label
		if strings.TrimSpace(label) == "" {
			label = c.Command
		}
		off.commands[choiceKeys[i]] = c.Command
		legend = append(legend, choiceKeys[i]+" "+label)
	}
	pages := a.Render([]core.ResponseBlock{{Kind: core.BlockText, Text: text + "\n\nReact with " + strings.Join(legend, " · ") + ", or type the command."}})
	if len(pages) != 1 {
		return core.MessageRef{}, errors.New("matrix: choices do not fit in a message")
	}
	if err := a.gate.wait(ctx); err != nil {
		return core.MessageRef{}, err
	}
	eventID, err := a.send(ctx, to.Channel, event.EventMessage, content(to, pages[0]))
	if err != nil {
		return core.MessageRef{}, fmt.Errorf("matrix: offer choices: %w", err)
	}
	// The offer is known before its reactions are added: someone can
	// click the first one while the bot adds the rest.
	a.offers.Set(eventID, off)
	for i := range choices {
		if err := a.gate.wait(ctx); err != nil {
			break
		}
		r, err := a.annotate(ctx, to.Channel, eventID, choiceKeys[i])
		if err != nil {
			// The legend says which emoji to add: one click fewer.
			a.logger.Warn("add a choice's reaction", "event", eventID, "err", err)
			continue
		}
		off.reactions = append(off.reactions, r)
	}
	if _, open := a.offers.Get(eventID); open {
		a.offers.Set(eventID, off) // with its reactions, for unoffer
	}
	return core.MessageRef{Target: to, ID: eventID}, nil
}

// unoffer redacts the bot's reactions on a message whose choices are
// over (the router edited it).
func (a *Adapter) unoffer(ctx context.Context, room string, off offer) {
	for _, r := range off.reactions {
		a.redact(ctx, room, r)
	}
}

// onReaction reads someone's reaction: on a message offering choices,
// the choice's command, as if they typed it in its thread.
func (a *Adapter) onReaction(ctx context.Context, ev *event.Event, h core.Handler, work *lanes.PerKey[string]) {
	if !parsed(ev) {
		return
	}
	rel := ev.Content.AsReaction().RelatesTo
	off, ok := a.offers.Get(rel.EventID.String())
	cmd := off.commands[rel.Key]
	if !ok || cmd == "" {
		return
	}
	name, _ := a.names.Get(ev.Sender.String())
	m := core.Message{
		Key:      core.ConversationKey{Platform: Name, Channel: off.channel, Thread: off.thread},
		ID:       pressID,
		UserName: name, Text: cmd, From: ev.Sender.String(),
	}
	work.Do(m.Key.Channel+"/"+m.Key.Thread, func() { h(ctx, m) })
}
