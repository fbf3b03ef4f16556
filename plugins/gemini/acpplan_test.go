package gemini_test

import (
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/gemini"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// An ACP agent's plan (session/update "plan") is the reply's checklist,
// replaced as it changes, and its usage_update the context's fill. The
// pinned Gemini CLI sends neither (plugins/LIVE-TURNS.md), so the session
// is written here, in the protocol's own form, as another ACP agent
// writes it.
func TestACPPlanAndContext(t *testing.T) {
	t.Parallel()
	const session = `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}
{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"plan","entries":[{"content":"Read the code","priority":"high","status":"in_progress"},{"content":"Write the fix","priority":"medium","status":"pending"},{"content":"Run the tests","priority":"low","status":"pending"}]}}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"plan","entries":[{"content":"Read the code","priority":"high","status":"completed"},{"content":"Write the fix","priority":"medium","status":"in_progress"},{"content":"Run the tests","priority":"low","status":"pending"}]}}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"usage_update","used":62000,"size":100000}}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Fixing it."}}}}
{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}
`
	var out plugintest.TurnOutput
	res, err := gemini.ReadStream(strings.NewReader(session), "/workdir", func(ev core.Event) { out.Events = append(out.Events, ev) })
	if err != nil || res == nil {
		t.Fatalf("ReadStream = %+v, %v", res, err)
	}
	plans := out.Blocks(core.BlockPlan)
	if len(plans) != 2 {
		t.Fatalf("plan blocks %+v, want one per update", plans)
	}
	const want = "📋 Plan: 1 of 3 done\n☑ Read the code\n▶ Write the fix\n☐ Run the tests"
	if last := plans[1]; last.Text != want || last.ID != plans[0].ID {
		t.Errorf("last plan %+v, want %q replacing the first", last, want)
	}
	if got := res.ContextPercent(); got != 62 {
		t.Errorf("context %d%% (%+v), want 62%%", got, res)
	}
}
