package agenttools

import (
	"log/slog"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jake-bot/jake-bot/core"
)

// BenchmarkToolCall measures one notify call's round trip through the
// server over loopback HTTP, the turn's token checked (issue 31's target
// is at most 20 ms bot-side); the action itself is a fake.
func BenchmarkToolCall(b *testing.B) {
	s, err := Start(core.AllAgentTools, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	access, closeTurn := openHere(s, &fakeActions{}, nil)
	defer closeTurn()
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(b.Context(), &mcp.StreamableClientTransport{Endpoint: access.URL, MaxRetries: -1,
		HTTPClient: newBearerClient(access.Token)}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: core.ToolNotify, Arguments: map[string]any{"text": "hi"}}
	for b.Loop() {
		if res, err := cs.CallTool(b.Context(), params); err != nil || res.IsError {
			b.Fatalf("%v %+v", err, res)
		}
	}
}
