package bot_test

import (
	"fmt"

	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/bot"
	"github.com/jake-bot/jake-bot/core"

	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/gemini"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// toolsCLI is a CLI of the suite, with how its model names the bot's
// tools.
type toolsCLI struct {
	otherCLI
	// call is the model's nth call of the bot's tool with input.
	call func(n int, tool string, input map[string]any) *plugintest.ToolCall
	// told is how the first request to the model names send_file: the
	// CLI connected to the bot's server and has its tools.
	told string
	// tokenInEnv: the CLI reads the turn's token from its environment
	// (an ACP agent gets it on its stdin).
	tokenInEnv bool
}

var (
	qwenCLI = otherCLI{"qwen", "Qwen Code", func(t testing.TB, f *fixture, cfg *bot.Config, replies ...plugintest.Reply) fakeModel {
		return setupQwen(t, f, cfg, replies...)
	}}
	openCodeCLI = otherCLI{"opencode", "OpenCode", func(t testing.TB, f *fixture, cfg *bot.Config, replies ...plugintest.Reply) fakeModel {
		o := plugintest.NewOpenAI(t, replies...)
		setupACP(t, cfg, "opencode", "OpenCode", []string{"acp"}, append(plugintest.OpenCodeEnv(t, f.home, o, true), f.mark),
			"~/.local/share/opencode", "~/.config/opencode", "~/.cache/opencode")
		return o
	}}
)

// toolsCLIs are every pinned CLI: Claude Code and Codex (app-server)
// built in, Gemini CLI over ACP, Qwen Code and OpenCode as PLUGINS_FILE
// entries of mode acp. Claude Code and Qwen Code name an MCP server's
// tools mcp__<server>__<tool>, Gemini CLI mcp_<server>_<tool>, OpenCode
// <server>_<tool>; Codex puts them in the namespace mcp__<server>.
var toolsCLIs = []toolsCLI{
	{claudeCLI, func(n int, tool string, in map[string]any) *plugintest.ToolCall {
		return &plugintest.ToolCall{ID: fmt.Sprintf("toolu_%d", n), Name: "mcp__jakebot__" + tool, Input: in}
	}, "mcp__jakebot__send_file", true},
	{otherCLIs[0], func(n int, tool string, in map[string]any) *plugintest.ToolCall {
		return &plugintest.ToolCall{ID: fmt.Sprintf("call_%d", n), Namespace: "mcp__jakebot", Name: tool, Input: in}
	}, "- mcp__jakebot", true}, // a deferred namespace
	{otherCLIs[1], func(n int, tool string, in map[string]any) *plugintest.ToolCall {
		if tool == core.ToolAskUser {
			tool = gemini.AskUserTool
		}
		return &plugintest.ToolCall{Name: "mcp_jakebot_" + tool, Input: in}
	}, "mcp_jakebot_send_file", false},
	{qwenCLI, func(n int, tool string, in map[string]any) *plugintest.ToolCall {
		return &plugintest.ToolCall{Name: "mcp__jakebot__" + tool, Input: in}
	}, "mcp__jakebot__send_file", false},
	{openCodeCLI, func(n int, tool string, in map[string]any) *plugintest.ToolCall {
		return &plugintest.ToolCall{Name: "jakebot_" + tool, Input: in}
	}, "jakebot_send_file", false},
}

// The bot's own MCP server (issue 31) with each real CLI on the Telegram
// fake, its model calling every tool in one turn: send_file's file
// arrives as a document with its caption; a send_file outside the
// allowed roots is refused, the agent reads why, the chat gets nothing
// and the turn goes on; notify posts a new message (which notifies);
// schedule shows in /schedules; ask_user's question is answered with a
// button press whose option reaches the model as the tool's result. Each
// call is in the audit log, and none needs approval (APPROVALS=ask).
func TestEveryCLIUsesEveryBotTool(t *testing.T) {
	t.Parallel()
	for _, cli := range toolsCLIs {
		t.Run(cli.id, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			outside := filepath.Join(t.TempDir(), "elsewhere.txt")
			for path, data := range map[string]string{outside: "not yours", filepath.Join(f.workdir, "report.txt"): "all green\n"} {
				if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			cfg := f.config()
			cfg.AgentTools = "send_file,notify,ask_user,schedule"
			cfg.Approvals, cfg.Claude.PermissionMode = "ask", "default"
			cfg.AuditLog = filepath.Join(t.TempDir(), "audit.jsonl")
			model := cli.setup(t, f, &cfg,
				plugintest.Reply{Tool: cli.call(1, "send_file", map[string]any{"path": "report.txt", "caption": "the report"})},
				plugintest.Reply{Tool: cli.call(2, "send_file", map[string]any{"path": outside})},
				plugintest.Reply{Tool: cli.call(3, "notify", map[string]any{"text": "tests pass, ready for review"})},
				plugintest.Reply{Tool: cli.call(4, "schedule", map[string]any{"when": "2h", "message": "check the deploy"})},
				plugintest.Reply{Tool: cli.call(5, "ask_user", map[string]any{"question": "Which branch?", "options": []string{"main", "release"}})},
				plugintest.Reply{Text: []string{"Going with it."}})
			d := openTelegram(t, &cfg).(*telegramDriver)
			c := runChat(t, cfg, d)
			c.start(cli.id)
			c.say("get it reviewed")
			// The first step waits for the CLI's start, as long as the
			// machine's load makes it; the others each with their
			// patience.
			c.untilStarted("the agent's file", func() bool { return len(d.files()) > 0 })
			c.expect(`Which branch\?`)
			if cli.tokenInEnv {
				toolTokenOffCommandLines(t, f)
			}
			c.press(owner, "release")
			c.expect(`Going with it\.`)
			reqs := model.Requests()
			if !strings.Contains(string(reqs[0].Body), cli.told) {
				t.Errorf("the model was not told of the bot's send_file (%s)", cli.told)
			}
			checkToolOutputs(t, reqs[len(reqs)-1].ToolOutputs())
			checkFiles(t, d, received{name: "report.txt", caption: "the report", data: []byte("all green\n")})
			if !d.sentMessageWith("tests pass, ready for review") {
				t.Error("notify sent no new message")
			}
			c.say("/schedules")
			c.expect(`#1 once, next at .*: check the deploy`)
			audit, err := os.ReadFile(cfg.AuditLog)
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range core.AllAgentTools {
				if !strings.Contains(string(audit), `"command":"`+tool+`"`) {
					t.Errorf("the audit log has no %s call:\n%s", tool, audit)
				}
			}
		})
	}
}

// checkToolOutputs checks what the model read of the bot's tools, in the
// order TestEveryCLIUsesEveryBotTool calls them.
func checkToolOutputs(t *testing.T, outputs []string) {
	t.Helper()
	want := []struct{ has, hasNot string }{
		{"report.txt", "cannot"},
		{"outside the directories you may work in", "not yours"},
		{"notified", ""},
		{"Scheduled #1", ""},
		{"release", "main"},
	}
	if len(outputs) != len(want) {
		t.Fatalf("the model read %d tool outputs, want %d: %q", len(outputs), len(want), outputs)
	}
	for i, w := range want {
		if !strings.Contains(outputs[i], w.has) || (w.hasNot != "" && strings.Contains(outputs[i], w.hasNot)) {
			t.Errorf("tool output %d is %q, want %q in it (and not %q)", i+1, outputs[i], w.has, w.hasNot)
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
	checkFiles(t, d, received{name: "report.txt", data: []byte("warm\n")})
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

// setupQwen makes cfg run the real pinned Qwen Code as the PLUGINS_FILE
// entry qwen (mode acp) against a fake model with replies.
func setupQwen(t testing.TB, f *fixture, cfg *bot.Config, replies ...plugintest.Reply) *plugintest.OpenAI {
	t.Helper()
	o := plugintest.NewOpenAI(t, replies...)
	setupACP(t, cfg, "qwen", "Qwen Code", plugintest.QwenArgs(o), append(plugintest.QwenEnv(t, f.home), f.mark), "~/.qwen")
	return o
}

// setupACP makes cfg's PLUGINS_FILE hold one mode acp entry of the pinned
// CLI id, named name, with args, env and the CLI's state.
func setupACP(t testing.TB, cfg *bot.Config, id, name string, args, env []string, state ...string) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "plugins:\n  - id: %s\n    name: %s\n    bin: %q\n    mode: acp\n    args: [", id, name, plugintest.CLIPath(t, id))
	for i, a := range args {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", a)
	}
	b.WriteString("]\n    state: [")
	for i, p := range state {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", p)
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

// The agent's send_file with the real Claude Code on every platform: the
// file arrives with its caption as the platform takes files (a Discord
// attachment, a Slack upload, a Telegram document, a download on the web
// page), and the console, which cannot send files, prints where it is,
// its size and its caption; the tool's call succeeds on each.
func TestTheAgentsFileArrivesOnEveryPlatform(t *testing.T) {
	t.Parallel()
	for _, p := range platformCases {
		t.Run(p.name, func(t *testing.T) {
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
			d := p.open(t, &cfg)
			c := runChat(t, cfg, d)
			c.start("claude")
			c.say("send me the report")
			c.expect(`Sent\.`)
			checkFiles(t, d, received{name: "report.txt", caption: "the report", data: []byte("all green\n")})
			if got := f.model.Requests()[1].ToolOutputs(); len(got) != 1 || !strings.Contains(got[0], "sent report.txt") {
				t.Errorf("the tool's result is %q, want no error", got)
			}
		})
	}
}

// checkFiles checks that the files the bot sent in d's conversation are
// want, and no other.
func checkFiles(t testing.TB, d driver, want ...received) {
	t.Helper()
	if got := d.files(); fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Errorf("the chat got the files %q, want %q", got, want)
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

// The agent's shell commands do not inherit the turn's token of the bot's
// MCP server where its CLI allows: Codex leaves it out of its commands'
// environment (its shell_environment_policy), an ACP agent (Gemini CLI)
// is told it on its stdin and never has it in its environment. Before,
// every CLI had it there and every command it ran inherited it. Claude
// Code expands it from its environment, and its commands inherit it:
// only its own processes are served with it (agenttools' peer check).
func TestTheAgentsShellHasNoToolToken(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"codex", "gemini"} {
		t.Run(id, func(t *testing.T) {
			t.Parallel()
			a := askers[id]
			f := newFixture(t)
			cfg := f.config()
			cfg.AgentTools = "notify"
			cfg.Approvals = "auto"
			model := a.setup(t, f, &cfg,
				plugintest.Reply{Tool: a.shell(1, "echo token=${"+cliproc.ToolTokenEnv+":-none}")},
				plugintest.Reply{Text: []string{"Looked."}})
			cfg.Gemini.ApprovalMode = "yolo"
			d := openTelegram(t, &cfg).(*telegramDriver)
			c := runChat(t, cfg, d)
			c.start(id)
			c.say("look at the environment")
			c.expect(`Looked\.`)
			reqs := model.Requests()
			out := reqs[len(reqs)-1].ToolOutputs()
			if len(out) != 1 || !strings.Contains(out[0], "token=none") {
				t.Errorf("the shell command's output: %q, want token=none", out)
			}
		})
	}
}
