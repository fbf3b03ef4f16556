package discord

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/discord/discordtest"
	"github.com/jake-bot/jake-bot/plugins/claude"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// realClaude is the real Claude Code CLI against model, with args added
// to its own; the test fails if a process it started outlives it.
func realClaude(t *testing.T, model *plugintest.Anthropic, args ...string) core.Plugin {
	t.Helper()
	bin := plugintest.CLIPath(t, "claude")
	home := plugintest.Home(t)
	mark, alive := plugintest.ProcessMarker(t)
	t.Cleanup(func() {
		if pids := alive(); len(pids) != 0 {
			t.Errorf("processes %v outlived the test", pids)
		}
	})
	return claude.New(claude.Config{PermissionMode: "acceptEdits", ConfigDir: filepath.Join(home, ".claude"),
		Settings: cliproc.Settings{Bin: bin, Args: args, Env: append(plugintest.ClaudeEnv(t, model, home), mark)}}, slog.New(slog.NewTextHandler(t.Output(), nil)))
}

// TestClaudeThroughDiscord runs the real Claude Code CLI against the fake
// model, through the router and the adapter, on the fake Discord: start
// in a channel, a streamed reply in the thread, a second turn that
// resumes the first, and no process left behind.
func TestClaudeThroughDiscord(t *testing.T) {
	t.Parallel()
	model := plugintest.NewAnthropic(t,
		plugintest.Reply{Text: []string{"The secret ", "word is ", "pineapple."}},
		plugintest.Reply{Text: []string{"It was pineapple."}},
	)
	h := newHarness(t, realClaude(t, model), nil)

	thread := h.start(h.owner)
	h.fake.Say(h.owner, thread, "remember a secret word")
	first := h.fake.WaitMessage(thread, func(m discordtest.Message) bool {
		return m.AuthorID == h.fake.BotID && regexp.MustCompile(`— \d+\.\ds`).MatchString(m.Content)
	})
	if !strings.HasPrefix(first.Content, "The secret word is pineapple.") {
		t.Errorf("first reply = %q", first.Content)
	}
	h.fake.Say(h.owner, thread, "what was it?")
	h.waitBot(thread, "It was pineapple.")
	h.router.Wait()

	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model saw %d requests, want 2", len(reqs))
	}
	if text := reqs[1].Text(); !strings.Contains(text, "remember a secret word") || !strings.Contains(text, "pineapple") {
		t.Errorf("the second turn did not resume the first: %q", text)
	}
	checkBudget(t, writes(h.fake, thread), h.cfg.EditInterval)
}

// TestFilesThroughDiscord drives the real Claude CLI from the fake Discord
// with files: an image attachment reaches the model as an image block
// with the bytes the user sent, and a voice message is heard by
// TRANSCRIBE_CMD, shown back, and its words sent as the turn.
func TestFilesThroughDiscord(t *testing.T) {
	t.Parallel()
	model := plugintest.NewAnthropic(t,
		plugintest.Reply{Text: []string{"A red diagonal."}},
		plugintest.Reply{Text: []string{"Fixed it."}},
	)
	var heard []string
	h := newHarnessRouting(t, realClaude(t, model), nil, func(rc *core.RouterConfig) {
		rc.Transcribe = func(ctx context.Context, file string) (string, error) {
			data, err := os.ReadFile(file)
			heard = append(heard, file)
			return "please " + string(data), err
		}
	})
	thread := h.start(h.owner)

	shot, b64 := plugintest.PNG(t, t.TempDir(), "shot.png")
	png, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	h.fake.SayWithFiles(h.owner, thread, "what is wrong here?",
		discordtest.File{Name: "shot.png", ContentType: "image/png", Data: png})
	h.waitBot(thread, "A red diagonal.")
	if reqs := model.Requests(); len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), b64) ||
		!strings.Contains(reqs[0].LastUserText(), "what is wrong here?") {
		t.Errorf("the model did not get the image's bytes and the text")
	}

	h.fake.SayWithFiles(h.owner, thread, "", discordtest.File{Name: "voice-message.ogg", ContentType: "audio/ogg",
		Data: []byte("fix the build"), Voice: true})
	h.waitBot(thread, "🎤 Heard: please fix the build")
	h.waitBot(thread, "Fixed it.")
	h.router.Wait()
	if reqs := model.Requests(); len(reqs) != 2 || !strings.Contains(reqs[1].LastUserText(), "please fix the build") {
		t.Errorf("the model did not get the voice message's words")
	}
	if len(heard) != 1 || filepath.Base(heard[0]) != "voice-message.ogg" {
		t.Errorf("TRANSCRIBE_CMD heard %q, want the voice message", heard)
	}
	saved := filepath.Join(h.root, "proj", ".jakebot", "uploads", core.Day(h.clock.Now()), "voice-message.ogg")
	if data, err := os.ReadFile(saved); err != nil || string(data) != "fix the build" {
		t.Errorf("the voice message saved in the workdir = %q, %v", data, err)
	}
}

// A background command that outlives Claude Code's answer keeps the turn
// open on Discord: the reply says what runs, /status lists it, and once
// the command ends the agent's follow-up answer is the rest of the same
// reply (issue 29).
func TestBackgroundWorkThroughDiscord(t *testing.T) {
	t.Parallel()
	model := plugintest.NewAnthropic(t,
		plugintest.Reply{Tool: &plugintest.ToolCall{ID: "toolu_bg1", Name: "Bash", Input: map[string]any{
			"command":     "while [ ! -f go ]; do sleep 0.05; done; echo bgdone",
			"description": "Slow background job", "run_in_background": true}}},
		plugintest.Reply{Text: []string{"It runs in the background."}},
		plugintest.Reply{Text: []string{"The background job finished: bgdone."}})
	h := newHarness(t, realClaude(t, model, "--allowedTools", "Bash"), nil)
	thread := h.start(h.owner)
	h.fake.Say(h.owner, thread, "start the job")
	h.waitBot(thread, "⏳ Background: 1 task — Slow background job")
	if r := h.response(h.fake.Slash(h.owner, thread, "status")); !strings.Contains(shown(r), "background: 1 task — Slow background job") {
		t.Errorf("/status says %q, want the background work", shown(r))
	}
	if err := os.WriteFile(filepath.Join(h.root, "proj", "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	reply := h.fake.WaitMessage(thread, func(m discordtest.Message) bool {
		return m.AuthorID == h.fake.BotID && strings.Contains(m.Content, "The background job finished: bgdone.") &&
			regexp.MustCompile(`— \d+\.\ds`).MatchString(m.Content)
	})
	for _, want := range []string{"It runs in the background.", "✓ Background work ended: 1 task — Slow background job",
		`Background command "Slow background job" completed`} {
		if !strings.Contains(reply.Content, want) {
			t.Errorf("the reply %q lacks %q", reply.Content, want)
		}
	}
	h.router.Wait()
}
