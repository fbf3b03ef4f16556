package acp

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
)

// The bot's MCP server goes in session/new and session/load, over HTTP
// with the turn's bearer token, to an agent that announces MCP over HTTP
// and to no other; a permission request for one of the turn's tools is
// allowed without a question (Gemini CLI's title, Qwen Code's _meta), any
// other call of the same look is not.
func TestClientMCPServers(t *testing.T) {
	t.Parallel()
	tools := &core.ToolAccess{URL: "http://127.0.0.1:1/mcp", Token: "tok", Tools: []string{"send_file"}}
	server := `"mcpServers":[{"headers":[{"name":"Authorization","value":"Bearer tok"}],"name":"jakebot","type":"http","url":"http://127.0.0.1:1/mcp"}]`
	permission := func(id, call string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":` + call +
			`,"options":[{"optionId":"yes","kind":"allow_once"},{"optionId":"no","kind":"reject_once"}]}}`
	}
	// Gemini CLI's request for an MCP tool's call offers its own options.
	mcpPermission := func(id, call string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":` + call +
			`,"options":[{"optionId":"proceed_always_server","kind":"allow_always"},{"optionId":"yes","kind":"allow_once"},{"optionId":"no","kind":"reject_once"}]}}`
	}
	for _, tc := range []struct {
		name, caps, resume string
		want               []string
	}{
		{"new", `{"mcpCapabilities":{"http":true}}`, "", []string{`"method":"session/new","params":{"cwd":"/w",` + server}},
		{"load", `{"loadSession":true,"mcpCapabilities":{"http":true,"sse":true}}`, "s1",
			[]string{`"method":"session/load","params":{"cwd":"/w",` + server + `,"sessionId":"s1"}`}},
		{"stdio only", `{}`, "", []string{`"method":"session/new","params":{"cwd":"/w","mcpServers":[]}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			turn := core.Turn{Workdir: "/w", Prompt: "hi", SessionID: tc.resume, Tools: tools}
			sent, _, _ := run(t, turn, Options{},
				`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":`+tc.caps+`}}`)
			if len(sent) != 2 || !strings.Contains(sent[1], tc.want[0]) {
				t.Errorf("sent\n%s\nwant %s", strings.Join(sent, "\n"), tc.want[0])
			}
		})
	}
	sent, _, _ := run(t, core.Turn{Workdir: "/w", Prompt: "hi", Tools: tools}, Options{},
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"mcpCapabilities":{"http":true}}}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}`,
		mcpPermission("7", `{"toolCallId":"g","title":"send_file (jakebot MCP Server)","kind":"other"}`),
		permission("8", `{"toolCallId":"q","title":"{}","kind":"other","_meta":{"toolName":"mcp__jakebot__send_file"}}`),
		mcpPermission("9", `{"toolCallId":"o","title":"notify (jakebot MCP Server)","kind":"other","_meta":{"toolName":"mcp__jakebot__notify"}}`),
		// A title is no proof: a shell command the model wrote, or a
		// call without the agent's own sign of an MCP tool, is asked.
		mcpPermission("10", `{"toolCallId":"x","title":"send_file (jakebot MCP Server)","kind":"execute"}`),
		permission("11", `{"toolCallId":"y","title":"send_file (jakebot MCP Server)","kind":"other"}`),
		`{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`)
	for id, want := range map[string]string{"7": "yes", "8": "yes", "9": "no", "10": "no", "11": "no"} {
		if !strings.Contains(strings.Join(sent, "\n"), `{"id":`+id+`,"jsonrpc":"2.0","result":{"outcome":{"optionId":"`+want+`"`) {
			t.Errorf("permission %s: sent\n%s\nwant %s", id, strings.Join(sent, "\n"), want)
		}
	}
}

// The commands an agent announces reach Options.Commands whenever they
// come, before the prompt too, and are not the turn's output.
func TestClientCommands(t *testing.T) {
	t.Parallel()
	var got [][]Command
	_, events, _ := run(t, core.Turn{Workdir: "/w", Prompt: "hi"}, Options{Commands: func(c []Command) { got = append(got, c) }},
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{}}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}`,
		update(`{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"init","description":"Write QWEN.md"},`+
			`{"name":"review","description":"Review","input":{"hint":"pr-number"}},{"description":"nameless"}]}`),
		update(`{"sessionUpdate":"available_commands_update","availableCommands":[]}`),
		`{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`)
	want := [][]Command{{{Name: "init", Description: "Write QWEN.md"}, {Name: "review", Description: "Review", Hint: "pr-number"}}, {}}
	if fmt.Sprint(got) != fmt.Sprint(want) || len(got[1]) != 0 {
		t.Errorf("commands %+v, want %+v", got, want)
	}
	for _, ev := range events {
		if ev.Kind != core.EventSession {
			t.Errorf("event %+v: the announcement is no output", ev)
		}
	}
}

// Options.ToolNames reach the bot's server as core.ToolNamesHeader, and
// a permission request for a tool under its other name is the bot's own.
func TestClientMCPToolNames(t *testing.T) {
	t.Parallel()
	tools := &core.ToolAccess{URL: "http://127.0.0.1:1/mcp", Token: "tok", Tools: []string{"send_file", "ask_user"}}
	sent, _, _ := run(t, core.Turn{Workdir: "/w", Prompt: "hi", Tools: tools}, Options{ToolNames: map[string]string{"ask_user": "ask_the_user"}},
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"mcpCapabilities":{"http":true}}}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}`,
		`{"jsonrpc":"2.0","id":7,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":`+
			`{"toolCallId":"g","title":"ask_the_user (jakebot MCP Server)","kind":"other"},`+
			`"options":[{"optionId":"proceed_always_server","kind":"allow_always"},{"optionId":"yes","kind":"allow_once"},{"optionId":"no","kind":"reject_once"}]}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`)
	all := strings.Join(sent, "\n")
	if want := `"headers":[{"name":"Authorization","value":"Bearer tok"},{"name":"X-Jakebot-Tool-Names","value":"ask_user=ask_the_user"}]`; !strings.Contains(all, want) {
		t.Errorf("sent\n%s\nwant %s", all, want)
	}
	if !strings.Contains(all, `{"id":7,"jsonrpc":"2.0","result":{"outcome":{"optionId":"yes"`) {
		t.Errorf("the renamed tool's permission was not allowed: sent\n%s", all)
	}

	// A tool the turn is not given is not named: the server would refuse
	// the naming, and with it every tool.
	tools = &core.ToolAccess{URL: "http://127.0.0.1:1/mcp", Token: "tok", Tools: []string{"send_file"}}
	sent, _, _ = run(t, core.Turn{Workdir: "/w", Prompt: "hi", Tools: tools}, Options{ToolNames: map[string]string{"ask_user": "ask_the_user"}},
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"mcpCapabilities":{"http":true}}}}`)
	if all := strings.Join(sent, "\n"); !strings.Contains(all, `"headers":[{"name":"Authorization","value":"Bearer tok"}]`) {
		t.Errorf("sent\n%s\nwant no naming of ask_user, which the turn is not given", all)
	}
}
