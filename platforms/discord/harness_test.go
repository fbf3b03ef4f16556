package discord

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/platforms/discord/discordtest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// harness is the whole bot on the fake Discord: the real router, the
// adapter on a real discordgo session, a scripted plugin.
type harness struct {
	t       *testing.T
	fake    *discordtest.Server
	clock   *coretest.ManualClock
	plugin  *plugintest.Scripted
	router  *core.Router
	convs   *core.State
	adapter *Adapter
	owner   discordtest.User
	root    string
	cfg     Config
}

func newHarness(t *testing.T, plugin core.Plugin, configure func(*Config, *discordtest.Server)) *harness {
	t.Helper()
	return newHarnessRouting(t, plugin, configure, nil)
}

// newHarnessRouting is newHarness with the router's configuration
// adjusted by route too.
func newHarnessRouting(t *testing.T, plugin core.Plugin, configure func(*Config, *discordtest.Server), route func(*core.RouterConfig)) *harness {
	t.Helper()
	return newHarnessDriving(t, plugin, configure, route, -1)
}

// newHarnessDriving is newHarnessRouting on a clock driven only to the
// waits at most driveLimit ahead (negative: all of them): the test
// Advances it to longer ones, such as a schedule's.
func newHarnessDriving(t *testing.T, plugin core.Plugin, configure func(*Config, *discordtest.Server), route func(*core.RouterConfig),
	driveLimit time.Duration) *harness {
	t.Helper()
	fake := discordtest.New(t)
	// The clock jumps to each wait as soon as it is set, and no further,
	// and the fake stamps every call with it: tests assert the spacing of
	// writes in clock time and never sleep. One reply writes to a
	// conversation's thread at a time, so each write is stamped with the
	// time its writer saw. (An InstantClock would add every actor's waits
	// up and move time under a writer between its reading and its write.)
	clock := coretest.NewManualClock()
	stopClock := clock.DriveWithin(driveLimit)
	fake.Now = clock.Now
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"proj", "other", ".hidden"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	roots, err := core.NewRoots([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, fake: fake, clock: clock, owner: fake.NewUser("owner"), root: root, convs: core.NewState()}
	if plugin == nil {
		h.plugin = &plugintest.Scripted{}
		plugin = h.plugin
	}
	reg, err := core.NewRegistry(plugin)
	if err != nil {
		t.Fatal(err)
	}
	h.cfg = Config{Token: Secret(fake.Token), GuildID: fake.GuildID, AllowedUsers: []string{h.owner.ID},
		Threads: true, EditInterval: time.Second, APIURL: fake.URL}
	if configure != nil {
		configure(&h.cfg, fake)
	}
	access := core.NewAccess()
	h.cfg.Grant(access)
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	rc := core.RouterConfig{Plugins: reg, Access: access, Roots: roots, Clock: clock, Logger: logger}
	if route != nil {
		route(&rc)
	}
	h.router = core.NewRouter(ctx, rc, h.convs)
	h.adapter, err = New(h.cfg, Options{Plugins: []core.Plugin{plugin}, Lookup: h.router, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	handler := h.router.Attach(h.adapter)
	done := make(chan struct{})
	var runErr error
	go func() { runErr = h.adapter.Run(ctx, handler); close(done) }()
	t.Cleanup(func() {
		stopClock()
		clock.Free() // what is still waiting is over: shut down
		cancel()
		h.router.Shutdown()
		<-done
		if runErr != nil {
			t.Errorf("Run: %v", runErr)
		}
		h.router.Wait()
	})
	fake.WaitFor("slash commands registered", func() bool {
		select {
		case <-done:
			t.Fatalf("Run returned early: %v", runErr)
		default:
		}
		return len(fake.Commands()) > 0
	})
	return h
}

// start runs "/claude start proj" in the text channel and returns the
// thread the conversation moved to.
func (h *harness) start(u discordtest.User) string {
	h.t.Helper()
	h.fake.Slash(u, h.fake.TextChannel, "claude start", "workdir", "proj")
	var thread string
	h.fake.WaitFor("a thread", func() bool {
		ths := h.fake.Threads(h.fake.TextChannel)
		if len(ths) > 0 {
			thread = ths[len(ths)-1].ID
		}
		return thread != ""
	})
	h.waitBot(thread, "conversation started")
	return thread
}

// stranger returns a user who is not on the allow-list.
func (h *harness) stranger() discordtest.User { return h.fake.NewUser("stranger") }

// waitBot waits for a bot message in channel containing text.
func (h *harness) waitBot(channel, text string) discordtest.Message {
	h.t.Helper()
	return h.fake.WaitMessage(channel, func(m discordtest.Message) bool {
		return m.AuthorID == h.fake.BotID && !m.Deleted && strings.Contains(m.Content, text)
	})
}

// botMessages returns the bot's messages in channel.
func (h *harness) botMessages(channel string) []discordtest.Message {
	var out []discordtest.Message
	for _, m := range h.fake.Messages(channel) {
		if m.AuthorID == h.fake.BotID && !m.Deleted {
			out = append(out, m)
		}
	}
	return out
}

// response waits for the completed response of an interaction.
func (h *harness) response(in discordtest.Interaction) discordtest.Message {
	h.t.Helper()
	var found discordtest.Message
	h.fake.WaitFor("the response to interaction "+in.ID, func() bool {
		var ok bool
		found, ok = h.fake.Response(in)
		return ok
	})
	return found
}

// patience bounds a test's waits on its own channels, so that a bug
// fails the test instead of hanging it.
const patience = 20 * time.Second

// receive waits for a value on ch.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(patience):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// send waits until the plugin takes v from ch.
func send[T any](t *testing.T, ch chan<- T, v T) {
	t.Helper()
	select {
	case ch <- v:
	case <-time.After(patience):
		t.Fatalf("timed out handing %v to the plugin: is the turn running?", v)
	}
}
