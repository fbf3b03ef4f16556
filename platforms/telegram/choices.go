package telegram

import (
	"strconv"
	"strings"
	"sync"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/jake-bot/jake-bot/core"
)

// maxCallbackData is Telegram's limit on a button's callback data, in
// bytes.
const maxCallbackData = 64

// choices maps buttons to commands. A command that fits in a button's
// callback data is carried there whole, so its button keeps working after
// a restart; a longer one is kept here under a short token. It is safe for
// concurrent use.
type choices struct {
	mu    sync.Mutex
	next  int
	byKey map[string]string
	order []string
}

const (
	tokenPrefix = "c:"
	maxTokens   = 1000
)

func newChoices() *choices { return &choices{byKey: make(map[string]string)} }

// data returns the callback data for a button sending cmd.
func (c *choices) data(cmd string) string {
	if len(cmd) <= maxCallbackData && strings.HasPrefix(cmd, "/") {
		return cmd
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	tok := tokenPrefix + strconv.Itoa(c.next)
	c.byKey[tok] = cmd
	c.order = append(c.order, tok)
	if len(c.order) > maxTokens {
		delete(c.byKey, c.order[0])
		c.order = c.order[1:]
	}
	return tok
}

// command returns the command a button's callback data stands for.
func (c *choices) command(data string) (string, bool) {
	if strings.HasPrefix(data, "/") {
		return data, true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	cmd, ok := c.byKey[data]
	return cmd, ok
}

// botCommands is the menu registered with setMyCommands: one entry per
// plugin and the shared commands. Telegram only takes lower-case names of
// letters, digits and underscores.
func botCommands(plugins []core.Plugin) []tgbotapi.BotCommand {
	var cmds []tgbotapi.BotCommand
	for _, p := range plugins {
		if validCommand(p.ID()) {
			cmds = append(cmds, tgbotapi.BotCommand{
				Command:     p.ID(),
				Description: core.Shorten(p.Name()+": start [workdir] | conversations | resume <id>", 256),
			})
		}
	}
	return append(cmds,
		tgbotapi.BotCommand{Command: "resume", Description: "List or resume conversations of the current plugin"},
		tgbotapi.BotCommand{Command: "status", Description: "Show this conversation"},
		tgbotapi.BotCommand{Command: "stop", Description: "Cancel the running turn"},
		tgbotapi.BotCommand{Command: "end", Description: "End this conversation (its history stays with the CLI)"},
		tgbotapi.BotCommand{Command: "workdir", Description: "Show the working directory, or: /workdir set <path>"},
		tgbotapi.BotCommand{Command: "help", Description: "List the commands"},
	)
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

// recent remembers the last n update ids, to drop repeated deliveries.
type recent struct {
	mu   sync.Mutex
	ids  map[int]bool
	ring []int
	next int
}

func newRecent(n int) *recent { return &recent{ids: make(map[int]bool, n), ring: make([]int, 0, n)} }

// add records id and reports whether it is new.
func (r *recent) add(id int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ids[id] {
		return false
	}
	if len(r.ring) < cap(r.ring) {
		r.ring = append(r.ring, id)
	} else {
		delete(r.ids, r.ring[r.next])
		r.ring[r.next] = id
		r.next = (r.next + 1) % len(r.ring)
	}
	r.ids[id] = true
	return true
}
