package telegram

import (
	"context"
	"fmt"
	"html"
	"strconv"
	"strings"
	"sync/atomic"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/recent"
)

// maxCallbackData is Telegram's limit on a button's callback data, in
// bytes.
const maxCallbackData = 64

// choices maps buttons to commands. A command that fits in a button's
// callback data is carried there whole, so its button keeps working after
// a restart; a longer one is kept here under a short token. It is safe for
// concurrent use.
type choices struct {
	next  atomic.Int64
	byKey *recent.Map[string, string]
}

const (
	tokenPrefix = "c:"
	maxTokens   = 1000
)

func newChoices() *choices { return &choices{byKey: recent.New[string, string](maxTokens)} }

// data returns the callback data for a button sending cmd.
func (c *choices) data(cmd string) string {
	if len(cmd) <= maxCallbackData && strings.HasPrefix(cmd, "/") {
		return cmd
	}
	tok := tokenPrefix + strconv.FormatInt(c.next.Add(1), 10)
	c.byKey.Set(tok, cmd)
	return tok
}

// command returns the command a button's callback data stands for.
func (c *choices) command(data string) (string, bool) {
	if strings.HasPrefix(data, "/") {
		return data, true
	}
	return c.byKey.Get(data)
}

// botCommands is the menu registered with setMyCommands, from core's
// command table. A menu entry sends its bare word, so it lists the words
// that work bare, and the plugins' IDs (which answer with their usage).
// Telegram only takes lower-case names of letters, digits and underscores.
func botCommands(table *core.Commands) []tgbotapi.BotCommand {
	var words []string
	usages := map[string][]string{}
	help := map[string]string{}
	listed := map[string]bool{}
	for _, s := range table.Specs() {
		w := s.Words[0]
		if _, ok := usages[w]; !ok {
			words = append(words, w)
		}
		if !s.Alias {
			usages[w] = append(usages[w], s.Usage())
		}
		if len(s.Words) == 1 {
			help[w] = s.Help
		}
		listed[w] = listed[w] || len(s.Words) == 1 || s.Plugin != ""
	}
	var cmds []tgbotapi.BotCommand
	for _, w := range words {
		if !listed[w] || !validCommand(w) {
			continue
		}
		desc := strings.Join(usages[w], " | ")
		if h := help[w]; h != "" && len(usages[w]) > 1 {
			desc = h + " — " + desc
		} else if h != "" {
			desc = h
		}
		cmds = append(cmds, tgbotapi.BotCommand{Command: w, Description: core.Shorten(strings.ToUpper(desc[:1])+desc[1:], 256)})
	}
	return cmds
}

func validCommand(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// OfferChoices posts text with one inline button per choice. Pressing a
// button sends the choice's command as if the user had typed it.
func (a *Adapter) OfferChoices(ctx context.Context, to core.Target, text string, choices []core.Choice) (core.MessageRef, error) {
	p, err := parsePlace(to)
	if err != nil {
		return core.MessageRef{}, err
	}
	var rows [][]tgbotapi.InlineKeyboardButton
	for _, c := range choices {
		label := c.Label
		if strings.TrimSpace(label) == "" {
			label = c.Command
		}
		rows = append(rows, tgbotapi.NewInlineKeyboardRow(tgbotapi.NewInlineKeyboardButtonData(label, a.choices.data(c.Command))))
	}
	kb := tgbotapi.NewInlineKeyboardMarkup(rows...)
	release, err := a.gate.wait(ctx, p.chat)
	if err != nil {
		return core.MessageRef{}, err
	}
	defer release()
	var id int
	err = a.write(p.chat, html.EscapeString(text), func(text, mode string) (err error) {
		id, err = a.sendMessage(p, text, mode, &kb)
		return err
	})
	if err != nil {
		return core.MessageRef{}, fmt.Errorf("telegram: offer choices: %w", err)
	}
	return core.MessageRef{Target: to, ID: strconv.Itoa(id)}, nil
}

// answerCallback stops the button's spinner, showing text if any.
func (a *Adapter) answerCallback(id, text string, alert bool) error {
	cb := tgbotapi.NewCallback(id, text)
	cb.ShowAlert = alert
	return a.call(func() error {
		_, err := a.api.Request(cb)
		return err
	})
}
