package bot_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
