package bot_test

import (
	"fmt"
	"regexp"

	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/bot"

	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// The bot's own MCP server (issue 31) with the real Claude Code on the
// Telegram fake: the model calls mcp__jakebot__send_file, the file
// arrives as a document with its caption, and a path outside the allowed
// roots is refused with the tool's error reaching the model.
func TestClaudeSendsAFileThroughTheBotsTools(t *testing.T) {
	t.Parallel()
	outside := filepath.Join(t.TempDir(), "elsewhere.txt")
	if err := os.WriteFile(outside, []byte("not yours"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t,
		plugintest.Reply{Tool: &plugintest.ToolCall{ID: "toolu_send", Name: "mcp__jakebot__send_file",
			Input: map[string]any{"path": "report.txt", "caption": "the report"}}},
		plugintest.Reply{Tool: &plugintest.ToolCall{ID: "toolu_out", Name: "mcp__jakebot__send_file",
			Input: map[string]any{"path": outside}}},
		plugintest.Reply{Text: []string{"Sent what I could."}})
	if err := os.WriteFile(filepath.Join(f.workdir, "report.txt"), []byte("all green\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := f.config()
	cfg.AgentTools = "send_file,notify,ask_user,schedule"
	d := openTelegram(t, &cfg).(*telegramDriver)
	c := runChat(t, cfg, d)
	c.start("claude")
	c.say("send me the report")
	c.expect(`Sent what I could\.`)
	docs := d.srv.Documents(telegramTeam.ID)
	if len(docs) != 1 || docs[0].Name != "report.txt" || string(docs[0].Data) != "all green\n" || docs[0].Caption != "the report" {
		t.Fatalf("documents %+v, want report.txt with its caption", docs)
	}
	reqs := f.model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("the model saw %d requests, want 3", len(reqs))
	}
	// Claude Code defers MCP tools (ToolSearch): it names them to the
	// model rather than offering them.
	if !strings.Contains(string(reqs[0].Body), "mcp__jakebot__send_file") {
		t.Errorf("the model was not told of the bot's send_file")
	}
	if got := reqs[2].LastUserText(); !strings.Contains(got, "outside") || strings.Contains(got, "not yours") {
		t.Errorf("the refused call's result is %q, want the tool's error", got)
	}
}

// The other three tools with the real Claude Code on the Telegram fake:
// notify posts a new message (which notifies), schedule shows in
// /schedules, and ask_user's question is answered with a button press
// whose option reaches the model as the tool's result. Each call is in
// the audit log.
func TestClaudeNotifiesSchedulesAndAsksThroughTheBotsTools(t *testing.T) {
	t.Parallel()
	f := newFixture(t,
		plugintest.Reply{Tool: &plugintest.ToolCall{ID: "toolu_notify", Name: "mcp__jakebot__notify",
			Input: map[string]any{"text": "tests pass, ready for review"}}},
		plugintest.Reply{Tool: &plugintest.ToolCall{ID: "toolu_sched", Name: "mcp__jakebot__schedule",
			Input: map[string]any{"when": "2h", "message": "check the deploy"}}},
		plugintest.Reply{Tool: &plugintest.ToolCall{ID: "toolu_ask", Name: "mcp__jakebot__ask_user",
			Input: map[string]any{"question": "Which branch?", "options": []string{"main", "release"}}}},
		plugintest.Reply{Text: []string{"Going with it."}})
	cfg := f.config()
	cfg.AgentTools = "notify,ask_user,schedule"
	cfg.AuditLog = filepath.Join(t.TempDir(), "audit.jsonl")
	d := openTelegram(t, &cfg).(*telegramDriver)
	c := runChat(t, cfg, d)
	c.start("claude")
	c.say("get it reviewed")
	c.expect(`Which branch\?`)
	toolTokenOffCommandLines(t, f)
	c.press(owner, "release")
	c.expect(`Going with it\.`)
	if !d.sentMessageWith("tests pass, ready for review") {
		t.Error("notify sent no new message")
	}
	reqs := f.model.Requests()
	if len(reqs) != 4 {
		t.Fatalf("the model saw %d requests, want 4", len(reqs))
	}
	if got := reqs[2].LastUserText(); !strings.Contains(got, "Scheduled #1") {
		t.Errorf("schedule's result is %q", got)
	}
	if got := reqs[3].LastUserText(); !strings.Contains(got, "release") {
		t.Errorf("ask_user's result is %q, want the option pressed", got)
	}
	c.say("/schedules")
	c.expect(`#1 once, next at .*: check the deploy`)
	audit, err := os.ReadFile(cfg.AuditLog)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"notify", "schedule", "ask_user"} {
		if !strings.Contains(string(audit), `"command":"`+tool+`"`) {
			t.Errorf("the audit log has no %s call:\n%s", tool, audit)
		}
	}
}

// A warm Claude Code (started before its message, WARM_TTL) was told of
// the bot's tools when it started: its turn's send_file acts once the
// turn runs, on the turn's conversation.
func TestWarmClaudeSendsAFileThroughTheBotsTools(t *testing.T) {
	t.Parallel()
	f := newFixture(t,
		plugintest.Reply{Tool: &plugintest.ToolCall{ID: "toolu_send", Name: "mcp__jakebot__send_file",
			Input: map[string]any{"path": "report.txt"}}},
		plugintest.Reply{Text: []string{"Sent."}})
	if err := os.WriteFile(filepath.Join(f.workdir, "report.txt"), []byte("warm\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := f.config()
	cfg.AgentTools = "send_file"
	cfg.WarmTTL, cfg.WarmMax, cfg.Timers = 10*time.Minute, 4, coretest.NewManualClock()
	cfg.HealthAddr, cfg.StateFile = "127.0.0.1:0", "off"
	d := openTelegram(t, &cfg).(*telegramDriver)
	c := runChat(t, cfg, d)
	w := &warmWatch{c: c, f: f, metrics: "http://" + c.logs.waitLine(healthLine) + "/metrics"}
	c.start("claude")
	w.waitWarm(1)
	c.say("send me the report")
	c.expect(`Sent\.`)
	if docs := d.srv.Documents(telegramTeam.ID); len(docs) != 1 || string(docs[0].Data) != "warm\n" {
		t.Fatalf("documents %+v, want report.txt", docs)
	}
}

// Codex's app-server is told of the bot's MCP server too (its tools in
// the namespace mcp__jakebot, approved in advance): the model's call of
// send_file sends the file on the Telegram fake.
func TestCodexSendsAFileThroughTheBotsTools(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cfg := f.config()
	cfg.AgentTools = "send_file,ask_user"
	if err := os.WriteFile(filepath.Join(f.workdir, "report.txt"), []byte("codex\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	model := otherCLIs[0].setup(t, f, &cfg,
		plugintest.Reply{Tool: &plugintest.ToolCall{ID: "call_ask", Namespace: "mcp__jakebot", Name: "ask_user",
			Input: map[string]any{"question": "Send it?", "options": []string{"yes", "no"}}}},
		plugintest.Reply{Tool: &plugintest.ToolCall{ID: "call_send", Namespace: "mcp__jakebot", Name: "send_file",
			Input: map[string]any{"path": "report.txt"}}},
		plugintest.Reply{Text: []string{"Sent."}})
	d := openTelegram(t, &cfg).(*telegramDriver)
	c := runChat(t, cfg, d)
	c.start("codex")
	c.say("send me the report")
	c.expect(`Send it\?`)
	toolTokenOffCommandLines(t, f)
	c.press(owner, "yes")
	c.expect(`Sent\.`)
	reqs := model.Requests()
	if docs := d.srv.Documents(telegramTeam.ID); len(docs) != 1 || string(docs[0].Data) != "codex\n" {
		t.Fatalf("documents %+v, want report.txt; the model saw %q", docs, tail(reqs[len(reqs)-1].Text()))
	}
}

// toolTokenOffCommandLines checks that the test's running CLI has its
// turn's token of the bot's MCP server in its environment (readable only
// by the bot's user), never on its command line (readable by every user).
func toolTokenOffCommandLines(t testing.TB, f *fixture) {
	t.Helper()
	found := false
	for _, p := range f.alive() {
		environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p.PID))
		cmdline, err2 := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.PID))
		if err != nil || err2 != nil {
			continue // gone meanwhile
		}
		for kv := range strings.SplitSeq(string(environ), "\x00") {
			token, ok := strings.CutPrefix(kv, cliproc.ToolTokenEnv+"=")
			if !ok || token == "" {
				continue
			}
			found = true
			if strings.Contains(string(cmdline), token) {
				t.Errorf("the token is on the command line of %s", p)
			}
		}
	}
	if !found {
		t.Errorf("no running CLI has %s in its environment: %v", cliproc.ToolTokenEnv, f.alive())
	}
}

func tail(s string) string { return s[max(0, len(s)-600):] }

// Gemini CLI through ACP gets the bot's MCP server in session/new's
// mcpServers (HTTP with the turn's bearer token, as it announces
// mcpCapabilities.http): the model's call of mcp_jakebot_send_file sends
// the file on the Telegram fake, with no question asked (the tools are
// the bot's own).
func TestGeminiSendsAFileThroughTheBotsTools(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cfg := f.config()
	cfg.AgentTools = "send_file"
	if err := os.WriteFile(filepath.Join(f.workdir, "report.txt"), []byte("gemini\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	model := otherCLIs[1].setup(t, f, &cfg,
		plugintest.Reply{Tool: &plugintest.ToolCall{Name: "mcp_jakebot_send_file", Input: map[string]any{"path": "report.txt", "caption": "from gemini"}}},
		plugintest.Reply{Text: []string{"Sent."}})
	d := openTelegram(t, &cfg).(*telegramDriver)
	c := runChat(t, cfg, d)
	c.start("gemini")
	c.say("send me the report")
	c.expect(`Sent\.`)
	reqs := model.Requests()
	if docs := d.srv.Documents(telegramTeam.ID); len(docs) != 1 || string(docs[0].Data) != "gemini\n" || docs[0].Caption != "from gemini" {
		t.Fatalf("documents %+v, want report.txt; the model saw %q", docs, tail(reqs[len(reqs)-1].Text()))
	}
}

// Qwen Code, a PLUGINS_FILE entry with mode acp, gets the bot's MCP
// server the same way: its mcp__jakebot__send_file sends the file.
func TestQwenSendsAFileThroughTheBotsTools(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cfg := f.config()
	cfg.AgentTools = "send_file"
	if err := os.WriteFile(filepath.Join(f.workdir, "report.txt"), []byte("qwen\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	model := setupQwen(t, f, &cfg,
		plugintest.Reply{Tool: &plugintest.ToolCall{Name: "mcp__jakebot__send_file", Input: map[string]any{"path": "report.txt"}}},
		plugintest.Reply{Text: []string{"Sent."}})
	d := openTelegram(t, &cfg).(*telegramDriver)
	c := runChat(t, cfg, d)
	c.start("qwen")
	c.say("send me the report")
	c.expect(`Sent\.`)
	reqs := model.Requests()
	if docs := d.srv.Documents(telegramTeam.ID); len(docs) != 1 || string(docs[0].Data) != "qwen\n" {
		t.Fatalf("documents %+v, want report.txt; the model saw %q", docs, tail(reqs[len(reqs)-1].Text()))
	}
}

// setupQwen makes cfg run the real pinned Qwen Code as the PLUGINS_FILE
// entry qwen (mode acp) against a fake model with replies.
func setupQwen(t testing.TB, f *fixture, cfg *bot.Config, replies ...plugintest.Reply) *plugintest.OpenAI {
	t.Helper()
	o := plugintest.NewOpenAI(t, replies...)
	setupACP(t, cfg, "qwen", "Qwen Code", plugintest.QwenArgs(o), append(plugintest.QwenEnv(t, f.home), f.mark))
	return o
}

// setupACP makes cfg's PLUGINS_FILE hold one mode acp entry of the pinned
// CLI id, named name, with args and env.
func setupACP(t testing.TB, cfg *bot.Config, id, name string, args, env []string) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "plugins:\n  - id: %s\n    name: %s\n    bin: %q\n    mode: acp\n    args: [", id, name, plugintest.CLIPath(t, id))
	for i, a := range args {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", a)
	}
	b.WriteString("]\n    env:\n")
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(&b, "      %s: %q\n", k, v)
	}
	cfg.PluginsFile = filepath.Join(t.TempDir(), "plugins.yaml")
	if err := os.WriteFile(cfg.PluginsFile, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// OpenCode, a PLUGINS_FILE entry with mode acp, gets the bot's MCP server
// too (it announces mcpCapabilities.http): its jakebot_send_file sends
// the file.
func TestOpenCodeSendsAFileThroughTheBotsTools(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cfg := f.config()
	cfg.AgentTools = "send_file"
	if err := os.WriteFile(filepath.Join(f.workdir, "report.txt"), []byte("opencode\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := plugintest.NewOpenAI(t,
		plugintest.Reply{Tool: &plugintest.ToolCall{Name: "jakebot_send_file", Input: map[string]any{"path": "report.txt"}}},
		plugintest.Reply{Text: []string{"Sent."}})
	setupACP(t, &cfg, "opencode", "OpenCode", []string{"acp"}, append(plugintest.OpenCodeEnv(t, f.home, o, true), f.mark))
	d := openTelegram(t, &cfg).(*telegramDriver)
	c := runChat(t, cfg, d)
	c.start("opencode")
	c.say("send me the report")
	c.expect(`Sent\.`)
	reqs := o.Requests()
	if docs := d.srv.Documents(telegramTeam.ID); len(docs) != 1 || string(docs[0].Data) != "opencode\n" {
		t.Fatalf("documents %+v, want report.txt; the model saw %q", docs, tail(reqs[len(reqs)-1].Text()))
	}
}

// The console cannot send files: the agent's send_file prints where the
// file is, its size and its caption, and the tool's call succeeds.
func TestClaudeSendsAFileOnTheConsole(t *testing.T) {
	t.Parallel()
	f := newFixture(t,
		plugintest.Reply{Tool: &plugintest.ToolCall{ID: "toolu_send", Name: "mcp__jakebot__send_file",
			Input: map[string]any{"path": "report.txt", "caption": "the report"}}},
		plugintest.Reply{Text: []string{"Sent."}})
	if err := os.WriteFile(filepath.Join(f.workdir, "report.txt"), []byte("all green\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := f.config()
	cfg.AgentTools = "send_file"
	c := f.start(cfg)
	c.say("/claude start", "send me the report")
	c.expect(`Claude Code conversation started`)
	c.expect(regexp.QuoteMeta("📎 The agent sends a file. This platform cannot send files. The file is " +
		filepath.Join(f.workdir, "report.txt") + " (10 bytes). Caption: the report"))
	c.expect(`Sent\.`)
	if got := f.model.Requests()[1].LastUserText(); strings.Contains(got, "cannot") {
		t.Errorf("the tool's result is %q, want no error", got)
	}
}

// sentMessageWith reports whether the bot sent a new message holding
// text, as notify does.
func (d *telegramDriver) sentMessageWith(text string) bool {
	for _, call := range d.srv.Calls("sendMessage") {
		if strings.Contains(call.Params.Get("text"), text) {
			return true
		}
	}
	return false
}
