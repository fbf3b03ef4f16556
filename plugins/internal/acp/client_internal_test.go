package acp

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
)

// run feeds lines (the agent's side) to a client of turn t through the
// engine's replay, and returns what the client sent and the events.
func run(t *testing.T, turn core.Turn, opts Options, lines ...string) (sent []string, events []core.Event, res *core.TurnResult) {
	t.Helper()
	res, err := cliproc.Replay(strings.NewReader(strings.Join(lines, "\n")+"\n"), "agent", func(link *cliproc.Link) cliproc.Protocol {
		a := New(turn, opts, link)
		a.rpc.Send = func(v any) error {
			b, _ := json.Marshal(v)
			sent = append(sent, string(b))
			return nil
		}
		a.Start()
		return a
	}, func(ev core.Event) { events = append(events, ev) })
	if err != nil {
		t.Fatal(err)
	}
	return sent, events, res
}

func update(u string) string {
	return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":` + u + `}}`
}

// A turn sets the mode and model the conversation asked for where the
// agent announces them, says so of a model it does not, shows the plan
// and the context's fill, and, when nobody answers questions, refuses
// what the agent asks permission for.
func TestClientTurn(t *testing.T) {
	t.Parallel()
	sent, events, res := run(t, core.Turn{Workdir: "/w", Prompt: "hi"}, Options{Name: "Agent", Mode: "plan", SetModel: "big"},
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1","modes":{"availableModes":[{"id":"plan","name":"Plan"},{"id":"yolo","name":"YOLO"}]},`+
			`"models":{"availableModels":[{"modelId":"m1","name":"small"}]}}}`,
		`{"jsonrpc":"2.0","id":5,"result":{}}`,
		update(`{"sessionUpdate":"plan","entries":[{"content":"Read","status":"completed"},{"content":"Write","status":"in_progress"}]}`),
		update(`{"sessionUpdate":"usage_update","used":50000,"size":200000}`),
		update(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Done."}}`),
		`{"jsonrpc":"2.0","id":7,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"t1","title":"rm -rf x","kind":"execute"},`+
			`"options":[{"optionId":"yes","kind":"allow_once"},{"optionId":"no","kind":"reject_once"}]}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`,
	)
	want := []string{
		`"method":"initialize"`, `"method":"session/new"`, `"method":"session/set_mode","params":{"modeId":"plan","sessionId":"s1"}`,
		`"method":"session/prompt"`, `{"id":7,"jsonrpc":"2.0","result":{"outcome":{"optionId":"no","outcome":"selected"}}}`,
	}
	if len(sent) != len(want) {
		t.Fatalf("sent\n%s\nwant %d messages", strings.Join(sent, "\n"), len(want))
	}
	for i, w := range want {
		if !strings.Contains(sent[i], w) {
			t.Errorf("sent[%d] = %s, want %s", i, sent[i], w)
		}
	}
	var blocks []string
	for _, ev := range events {
		if ev.Kind == core.EventBlock {
			blocks = append(blocks, ev.Block.Kind.String()+": "+ev.Block.Text)
		}
	}
	for _, w := range []string{
		"warning: Agent offers no model big (it offers small); this turn uses its own.",
		"plan: 📋 Plan: 1 of 2 done\n☑ Read\n▶ Write",
		"warning: Not run, for want of permission: Shell `rm -rf x`",
	} {
		if !slices.Contains(blocks, w) {
			t.Errorf("blocks\n%s\nlack %q", strings.Join(blocks, "\n"), w)
		}
	}
	if res == nil || res.SessionID != "s1" || res.ContextTokens != 50000 || res.ContextWindow != 200000 {
		t.Errorf("result %+v, want session s1 and the context's fill", res)
	}
}

// An agent that cannot load sessions starts a new one, saying so.
func TestClientCannotLoad(t *testing.T) {
	t.Parallel()
	sent, events, _ := run(t, core.Turn{Workdir: "/w", Prompt: "hi", SessionID: "old"}, Options{Name: "Agent"},
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{}}}`)
	if len(sent) != 2 || !strings.Contains(sent[1], `"method":"session/new"`) {
		t.Errorf("sent %s, want session/new", sent)
	}
	if len(events) == 0 || events[0].Kind != core.EventBlock || !strings.Contains(events[0].Block.Text, "could not resume the session (it does not offer session/load)") {
		t.Errorf("events %+v, want the warning", events)
	}
}
