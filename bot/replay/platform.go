package replay

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/console"
	"github.com/jake-bot/jake-bot/platforms/discord"
	"github.com/jake-bot/jake-bot/platforms/matrix"
	"github.com/jake-bot/jake-bot/platforms/slack"
	"github.com/jake-bot/jake-bot/platforms/telegram"
	"github.com/jake-bot/jake-bot/platforms/web"
)

// Platform is a chat platform as replay sees it: its name and its
// format, built by its adapter package from the default configuration
// without connecting, so that replay renders and paces exactly as the
// platform does.
type Platform struct {
	Name string
	core.Format
}

// platforms are the platforms a stream can be replayed on. The console is
// the one on a pipe: each reply once, final, as plain markdown.
var platforms = map[string]Platform{
	console.Name:  {console.Name, console.NewFormat(false)},
	discord.Name:  {discord.Name, discord.NewFormat(discord.Config{})},
	matrix.Name:   {matrix.Name, matrix.NewFormat(matrix.Config{})},
	slack.Name:    {slack.Name, slack.NewFormat(slack.Config{})},
	telegram.Name: {telegram.Name, telegram.NewFormat(telegram.Config{})},
	web.Name:      {web.Name, web.NewFormat(web.Config{})},
}

// Platforms returns the names of the platforms replay knows.
func Platforms() []string { return slices.Sorted(maps.Keys(platforms)) }

// PlatformNamed returns the platform called name.
func PlatformNamed(name string) (Platform, error) {
	p, ok := platforms[name]
	if !ok {
		return Platform{}, fmt.Errorf("no platform %q to replay on (known: %s)", name, strings.Join(Platforms(), ", "))
	}
	return p, nil
}

// write is one Send or Edit the printer received.
type write struct {
	op   string // "send" or "edit"
	page int    // the message's number, from 1 in the order they were sent
	text string
}

// printer is a core.Platform that records what the coordinator writes. It
// is safe for concurrent use.
type printer struct {
	p Platform

	mu    sync.Mutex
	pages []string // each message's current text, in the order sent
	ids   map[string]int
	// writes counts the writes made; each is also sent on c.
	writes int
	c      chan write
}

var _ core.Platform = (*printer)(nil)

func newPrinter(p Platform) *printer {
	return &printer{p: p, ids: map[string]int{}, c: make(chan write, 1024)}
}

func (w *printer) Name() string                                  { return w.p.Name }
func (w *printer) Limits() core.Limits                           { return w.p.Limits() }
func (w *printer) Render(blocks []core.ResponseBlock) []string   { return w.p.Render(blocks) }
func (w *printer) Run(ctx context.Context, h core.Handler) error { return nil }
func (w *printer) Send(ctx context.Context, to core.Target, text string) (core.MessageRef, error) {
	w.mu.Lock()
	w.pages = append(w.pages, text)
	n := len(w.pages)
	id := strconv.Itoa(n)
	w.ids[id] = n - 1
	w.writes++
	w.mu.Unlock()
	w.c <- write{"send", n, text}
	return core.MessageRef{Target: to, ID: id}, nil
}

func (w *printer) Edit(ctx context.Context, ref core.MessageRef, text string) error {
	w.mu.Lock()
	i, ok := w.ids[ref.ID]
	if ok {
		w.pages[i] = text
		w.writes++
	}
	w.mu.Unlock()
	if !ok {
		return fmt.Errorf("edit of unknown message %s", ref.ID)
	}
	w.c <- write{"edit", i + 1, text}
	return nil
}

// shows reports whether the messages show pages (the state the
// coordinator is delivering has arrived), and how many writes were made.
func (w *printer) shows(pages []string) (bool, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, text := range pages {
		if i >= len(w.pages) || w.pages[i] != text {
			return false, w.writes
		}
	}
	return true, w.writes
}

// messages returns every message's current text.
func (w *printer) messages() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.pages)
}
