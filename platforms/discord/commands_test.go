package discord

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/discord/discordtest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// waitEmbed waits for a bot message in channel with an embed containing
// text.
func (h *harness) waitEmbed(channel, text string) discordtest.Message {
	h.t.Helper()
	return h.fake.WaitMessage(channel, func(m discordtest.Message) bool {
		for _, e := range m.Embeds {
			if m.AuthorID == h.fake.BotID && strings.Contains(e.Description, text) {
				return true
			}
		}
		return false
	})
}

func TestStopEndsTheTurn(t *testing.T) {
	t.Parallel()
	ended := make(chan error, 1)
	p := &plugintest.Scripted{Script: func(ctx context.Context, _ core.Turn, emit func(core.Event)) (core.TurnResult, error) {
		emit(core.TextEvent("working on it"))
		<-ctx.Done()
		ended <- ctx.Err()
		return core.TurnResult{}, ctx.Err()
	}}
	h := newHarness(t, p, nil)
	thread := h.start(h.owner)
	h.fake.Say(h.owner, thread, "a long job")
	h.waitBot(thread, "working on it")
	in := h.fake.Slash(h.owner, thread, "stop")
	if resp := h.response(in); !strings.Contains(resp.Content, "Stopping the running turn") {
		t.Errorf("/stop response = %q", resp.Content)
	}
	if err := receive(t, ended, "the end of the turn"); err == nil {
		t.Error("the turn's context was not cancelled")
	}
	h.waitEmbed(thread, "Stopped.")
}

func TestAckComesBeforeSlowWork(t *testing.T) {
	t.Parallel()
	// Buffered: the plugin may list before the test waits for it.
	listing, release := make(chan struct{}, 1), make(chan struct{})
	p := &plugintest.Scripted{List: func(ctx context.Context, wd string) ([]core.ConversationInfo, error) {
		select {
		case listing <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return []core.ConversationInfo{
			{SessionID: "0a1b2c3d-0000-4000-8000-000000000001", Title: "fix the flaky test", Updated: time.Unix(1e9, 0)},
			{SessionID: "0a1b2c3d-0000-4000-8000-000000000002", Title: "add a README", Updated: time.Unix(1e9, 0)},
		}, nil
	}}
	// Sessions started outside chat are listed to admins only.
	h := newHarness(t, p, func(c *Config, _ *discordtest.Server) { c.AdminUsers = c.AllowedUsers })
	in := h.fake.Slash(h.owner, h.fake.TextChannel, "claude conversations")
	receive(t, listing, "the plugin's listing")
	// The plugin is still listing: the deferred response must be out.
	if cb, ok := h.fake.Callback(in); !ok || cb.Type != 5 {
		t.Fatalf("callback while the plugin works = %+v, %v; want a deferred response", cb, ok)
	}
	close(release)
	resp := h.response(in)
	if !strings.Contains(resp.Content, "fix the flaky test") {
		t.Errorf("listing = %q", resp.Content)
	}
	var rows []struct {
		Components []struct {
			Label    string `json:"label"`
			CustomID string `json:"custom_id"`
		} `json:"components"`
	}
	if err := json.Unmarshal(resp.Components, &rows); err != nil || len(rows) != 1 || len(rows[0].Components) != 2 {
		t.Fatalf("components = %s (%v), want one row of two buttons", resp.Components, err)
	}
	button := rows[0].Components[0]
	if button.CustomID != "/claude resume 0a1b2c3d-0000-4000-8000-000000000001" {
		t.Errorf("button = %+v", button)
	}
	press := h.fake.Press(h.owner, h.fake.TextChannel, resp.ID, button.CustomID)
	if r := h.response(press); !strings.Contains(r.Content, "Resumed Claude Code conversation 0a1b2c3d-0000-4000-8000-000000000001") {
		t.Errorf("after pressing the button: %q", r.Content)
	}
	conv, ok := h.convs.Get(core.ConversationKey{Platform: Name, User: h.owner.ID, Channel: h.fake.TextChannel})
	if !ok || conv.SessionID != "0a1b2c3d-0000-4000-8000-000000000001" {
		t.Errorf("conversation = %+v, %v", conv, ok)
	}
}

func TestStartAcksBeforeOpeningTheThread(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, nil)
	hold := h.fake.Hold("POST", "channels/*/threads")
	in := h.fake.Slash(h.owner, h.fake.TextChannel, "claude start", "workdir", "proj")
	receive(t, hold.Arrived(), "the thread to be opened")
	if cb, ok := h.fake.Callback(in); !ok || cb.Type != 5 {
		t.Fatalf("callback while the thread is being opened = %+v, %v; want a deferred response", cb, ok)
	}
	hold.Release()
	h.response(in)
}

func TestDuplicateDispatchRunsOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, nil)
	thread := h.start(h.owner)
	id := h.fake.Say(h.owner, thread, "once")
	h.waitBot(thread, "echo: once")
	h.fake.Resend(h.owner, thread, id)
	status := h.fake.Slash(h.owner, thread, "status")
	h.response(status)
	h.fake.Redispatch(status)
	marker := h.fake.Slash(h.owner, thread, "help")
	h.response(marker) // events are handled in order: the duplicates are behind us
	h.router.Wait()
	if n := len(h.plugin.Turns()); n != 1 {
		t.Errorf("the message ran %d turns, want 1", n)
	}
	if n := len(h.fake.CallsTo("POST", "interactions/"+status.ID+"/*/callback")); n != 1 {
		t.Errorf("/status acknowledged %d times, want 1", n)
	}
}

func TestGatewayResumeReplaysWithoutRepeats(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, nil)
	thread := h.start(h.owner)
	h.fake.Say(h.owner, thread, "before")
	h.waitBot(thread, "echo: before")
	h.fake.ReplayOnResume(20) // everything since READY, start included
	h.fake.Disconnect()
	h.fake.WaitFor("a resumed session", func() bool { g := h.fake.Gateway(); return g.Resumes == 1 && g.Connected })
	h.fake.Say(h.owner, thread, "after")
	h.waitBot(thread, "echo: after")
	h.router.Wait()
	if n := len(h.plugin.Turns()); n != 2 {
		t.Errorf("%d turns, want 2: a replayed message ran again", n)
	}
	if n := len(h.fake.Threads(h.fake.TextChannel)); n != 1 {
		t.Errorf("%d threads, want 1: a replayed /claude start ran again", n)
	}
	if g := h.fake.Gateway(); len(g.Identifies) != 1 || g.Heartbeats == 0 {
		t.Errorf("gateway = %+v, want one IDENTIFY, then RESUME, and heartbeats", g)
	}
}

func TestAutocomplete(t *testing.T) {
	t.Parallel()
	p := &plugintest.Scripted{List: func(ctx context.Context, wd string) ([]core.ConversationInfo, error) {
		return []core.ConversationInfo{
			{SessionID: "aaaa1111-0000-4000-8000-000000000001", Title: "fix the flaky test"},
			{SessionID: "bbbb2222-0000-4000-8000-000000000002", Title: "add a README"},
		}, nil
	}}
	admin := ""
	h := newHarness(t, p, func(c *Config, fake *discordtest.Server) {
		admin = fake.NewUser("admin").ID
		c.AdminUsers = []string{admin}
	})
	// Sessions are suggested to whoever started them from chat, and to
	// admins.
	h.convs.SetOwner("claude", "aaaa1111-0000-4000-8000-000000000001", Name+"/"+h.owner.ID)
	h.convs.SetOwner("claude", "bbbb2222-0000-4000-8000-000000000002", Name+"/someone-else")
	now := time.Now()
	h.convs.Put(core.ConversationKey{Platform: Name, User: h.owner.ID, Channel: h.fake.TextChannel},
		core.Conversation{Plugin: "claude", Workdir: h.root, Started: now, LastUsed: now})
	choices := func(in discordtest.Interaction) []string {
		t.Helper()
		h.fake.WaitFor("autocomplete answer", func() bool { _, ok := h.fake.Callback(in); return ok })
		cb, _ := h.fake.Callback(in)
		if cb.Type != 8 {
			t.Errorf("callback type %d, want 8", cb.Type)
		}
		var out []string
		for _, raw := range cb.Data.Choices {
			var c struct{ Value string }
			_ = json.Unmarshal(raw, &c)
			out = append(out, c.Value)
		}
		return out
	}
	tests := []struct {
		command, option, typed string
		want                   []string
	}{
		{"claude start", "workdir", "", []string{h.root, h.root + "/other", h.root + "/proj"}},
		{"claude start", "workdir", "pr", []string{h.root + "/proj"}},
		{"claude start", "workdir", h.root + "/o", []string{h.root + "/other"}},
		{"claude start", "workdir", ".h", []string{h.root + "/.hidden"}},
		{"claude start", "workdir", "/", nil}, // outside the roots
		{"workdir set", "path", "ot", []string{h.root + "/other"}},
		{"claude resume", "id", "", []string{"aaaa1111-0000-4000-8000-000000000001"}},
		{"claude resume", "id", "bbbb", nil}, // someone else's
		{"claude resume", "id", "flaky", []string{"aaaa1111-0000-4000-8000-000000000001"}},
		{"mode", "name", "a", []string{"ask", "auto"}},
		{"mode", "name", "", []string{"ask", "auto", "default"}},
	}
	for _, tt := range tests {
		in := h.fake.Autocomplete(h.owner, h.fake.TextChannel, tt.command, tt.option, tt.option, tt.typed)
		if got := choices(in); strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("autocomplete %s %s=%q = %q, want %q", tt.command, tt.option, tt.typed, got, tt.want)
		}
	}
	adminUser := discordtest.User{ID: admin, Name: "admin"}
	in := h.fake.Autocomplete(adminUser, h.fake.TextChannel, "claude resume", "id", "id", "")
	if got := choices(in); len(got) != 2 {
		t.Errorf("an admin is offered %q, want both sessions", got)
	}
}

// A tool call is asked about with buttons in the conversation's thread;
// only the turn's author (or an admin) can answer, and the answer reaches
// the plugin.
func TestApprovalButtons(t *testing.T) {
	t.Parallel()
	answers := make(chan core.Answer, 1)
	p := &plugintest.Scripted{Script: func(ctx context.Context, turn core.Turn, emit func(core.Event)) (core.TurnResult, error) {
		got := make(chan core.Answer, 1)
		emit(core.Event{Kind: core.EventQuestion, Question: &core.Question{Tool: "Bash", Summary: "`rm -rf build`",
			Answer: func(a core.Answer) { got <- a }}})
		select {
		case a := <-got:
			answers <- a
			emit(core.TextEvent("Cleaned."))
			return core.TurnResult{SessionID: "session-1"}, nil
		case <-ctx.Done():
			return core.TurnResult{}, ctx.Err()
		}
	}}
	var other discordtest.User
	h := newHarness(t, p, func(c *Config, fake *discordtest.Server) {
		other = fake.NewUser("other")
		c.AllowedUsers = append(c.AllowedUsers, other.ID)
	})
	thread := h.start(h.owner)
	h.fake.Say(h.owner, thread, "clean the build")
	question := h.waitBot(thread, "Allow Bash?")
	if got := strings.Join(buttons(t, question), ", "); got != "Allow=/allow q1, Always allow Bash=/allow q1 always, Deny=/deny q1" {
		t.Fatalf("buttons %s", got)
	}
	if !strings.Contains(question.Content, "rm -rf build") {
		t.Errorf("question %q lacks the command", question.Content)
	}
	if r := h.response(h.fake.Press(other, thread, question.ID, "/deny q1")); !strings.Contains(r.Content, "Only the author of this turn") {
		t.Errorf("after another user's press: %q", r.Content)
	}
	select {
	case a := <-answers:
		t.Fatalf("another user's press answered: %+v", a)
	default:
	}
	if r := h.response(h.fake.Press(h.owner, thread, question.ID, "/allow q1 always")); !strings.Contains(r.Content, "Allowed Bash, and always") {
		t.Errorf("after the owner's press: %q", r.Content)
	}
	if a := receive(t, answers, "the answer"); a.Decision != core.AllowAlways || a.By != h.owner.ID {
		t.Errorf("answer %+v, want the owner's always", a)
	}
	settled := h.waitBot(thread, "→ Allowed Bash, and always")
	if settled.ID != question.ID || (len(settled.Components) != 0 && string(settled.Components) != "[]" && string(settled.Components) != "null") {
		t.Errorf("the question was not edited to its answer without buttons: %+v", settled)
	}
	h.waitBot(thread, "Cleaned.")
}

// buttons returns m's buttons as "label=custom id".
func buttons(t *testing.T, m discordtest.Message) []string {
	t.Helper()
	var rows []struct {
		Components []struct {
			Label    string `json:"label"`
			CustomID string `json:"custom_id"`
		} `json:"components"`
	}
	if err := json.Unmarshal(m.Components, &rows); err != nil {
		t.Fatalf("components %s: %v", m.Components, err)
	}
	var out []string
	for _, row := range rows {
		for _, b := range row.Components {
			out = append(out, b.Label+"="+b.CustomID)
		}
	}
	return out
}

// shown is what m shows: its content and its embeds' descriptions.
func shown(m discordtest.Message) string {
	out := m.Content
	for _, e := range m.Embeds {
		out += "\n" + e.Description
	}
	return out
}

// A message sent while a turn runs waits with a Send now button. A
// stranger's press and another allowed user's are refused and change
// nothing; its author's or an admin's interrupts the running turn, and
// the message runs next, ahead of the one queued before it.
func TestSendNowButton(t *testing.T) {
	t.Parallel()
	for _, presser := range []string{"author", "admin"} {
		t.Run(presser, func(t *testing.T) {
			t.Parallel()
			interrupted := make(chan error, 1)
			p := &plugintest.Scripted{}
			p.Script = func(ctx context.Context, turn core.Turn, emit func(core.Event)) (core.TurnResult, error) {
				if turn.Prompt != "a long job" {
					return p.Echo(ctx, turn, emit)
				}
				emit(core.TextEvent("working on it"))
				<-ctx.Done()
				interrupted <- context.Cause(ctx)
				return core.TurnResult{}, ctx.Err()
			}
			var other, admin discordtest.User
			h := newHarness(t, p, func(c *Config, fake *discordtest.Server) {
				other, admin = fake.NewUser("other"), fake.NewUser("admin")
				c.AllowedUsers = append(c.AllowedUsers, other.ID, admin.ID)
				c.AdminUsers = []string{admin.ID}
			})
			thread := h.start(h.owner)
			h.fake.Say(h.owner, thread, "a long job")
			h.waitBot(thread, "working on it")
			h.fake.Say(h.owner, thread, "two")
			h.waitBot(thread, "Queued (1 waiting)")
			h.fake.Say(h.owner, thread, "three")
			queued := h.waitBot(thread, "Queued (2 waiting)")
			bs := buttons(t, queued)
			if len(bs) != 1 || !strings.HasPrefix(bs[0], "Send now=/now ") {
				t.Fatalf("the queued message's buttons are %q, want one Send now", bs)
			}
			now := strings.TrimPrefix(bs[0], "Send now=")

			if r := h.response(h.fake.Press(h.stranger(), thread, queued.ID, now)); !strings.Contains(shown(r), "allow-list") {
				t.Errorf("after a stranger's press: %q", shown(r))
			}
			if r := h.response(h.fake.Press(other, thread, queued.ID, now)); !strings.Contains(shown(r), "only its author") {
				t.Errorf("after another user's press: %q", shown(r))
			}
			select {
			case cause := <-interrupted:
				t.Fatalf("a refused press interrupted the turn: %v", cause)
			default:
			}
			if turns := p.Turns(); len(turns) != 1 {
				t.Fatalf("after refused presses %d turns ran, want the running one", len(turns))
			}

			by := h.owner
			if presser == "admin" {
				by = admin
			}
			if r := h.response(h.fake.Press(by, thread, queued.ID, now)); !strings.Contains(shown(r), "runs next") {
				t.Errorf("after the %s's press: %q", presser, shown(r))
			}
			if cause := receive(t, interrupted, "the interrupted turn"); !errors.Is(cause, core.ErrSentNow) {
				t.Errorf("the turn ended by %v, want ErrSentNow", cause)
			}
			h.waitEmbed(thread, "Interrupted for the message sent now")
			h.waitBot(thread, "echo: two")
			var prompts []string
			for _, turn := range p.Turns() {
				prompts = append(prompts, turn.Prompt)
			}
			if got := strings.Join(prompts, ", "); got != "a long job, three, two" {
				t.Errorf("turns ran in the order %s, want the one sent now next", got)
			}
		})
	}
}

// Under BUSY=queue, a message sent while a turn that can take one runs
// waits with Steer and Send now: its author's Steer puts it into the
// running turn, and Send now still interrupts it for the other (issue 29).
func TestQueuedMessageSteerAndSendNow(t *testing.T) {
	t.Parallel()
	p := &plugintest.Scripted{Steerable: true}
	p.Script = p.HandOver
	h := newHarnessRouting(t, p, nil, func(rc *core.RouterConfig) { rc.Busy = core.BusyQueue })
	thread := h.start(h.owner)
	h.fake.Say(h.owner, thread, "a long job")
	running := p.Next(t)
	running.Emit(t, core.TextEvent("working on it"))
	h.waitBot(thread, "working on it")
	press := map[string]string{} // "<text> <label>": custom id; "<text> message": its message
	for i, text := range []string{"two", "three"} {
		h.fake.Say(h.owner, thread, text)
		queued := h.waitBot(thread, "Queued ("+strconv.Itoa(i+1)+" waiting)")
		bs := buttons(t, queued)
		if len(bs) != 2 || !strings.HasPrefix(bs[0], "Steer=/steer ") || !strings.HasPrefix(bs[1], "Send now=/now ") {
			t.Fatalf("the queued message's buttons are %q, want Steer and Send now", bs)
		}
		for _, b := range bs {
			label, id, _ := strings.Cut(b, "=")
			press[text+" "+label] = id
			press[text+" message"] = queued.ID
		}
	}

	h.fake.Press(h.owner, thread, press["two message"], press["two Steer"])
	if s := running.Steered(t); s.Prompt != "two" {
		t.Errorf("the running turn took %q, want two", s.Prompt)
	}
	h.waitBot(thread, "↪ Added to the running turn")

	h.fake.Press(h.owner, thread, press["three message"], press["three Send now"])
	h.waitEmbed(thread, "Interrupted for the message sent now")
	next := p.Next(t)
	if next.Prompt != "three" {
		t.Errorf("after Send now %q ran, want three", next.Prompt)
	}
	next.End(t, core.TurnResult{})
}
