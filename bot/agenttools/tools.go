package agenttools

import (
	"cmp"
	"context"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jake-bot/jake-bot/core"
)

type sendFileIn struct {
	Path    string `json:"path" jsonschema:"the file, relative to the workdir or absolute, inside the allowed roots"`
	Caption string `json:"caption,omitempty" jsonschema:"a line shown with the file"`
}

type notifyIn struct {
	Text string `json:"text" jsonschema:"what to tell the user; it notifies them (a mention)"`
}

type askIn struct {
	Question string   `json:"question" jsonschema:"the question for the conversation's users"`
	Options  []string `json:"options,omitempty" jsonschema:"answers to pick from as buttons; without them the answer is free text"`
}

type scheduleIn struct {
	When    string `json:"when" jsonschema:"when the turn runs: 30m, 2h, 09:00 or an RFC 3339 time"`
	Message string `json:"message" jsonschema:"the message the later turn starts with"`
}

// newTurnServer defines the tools for one turn, acting through actions,
// each under its name in names or its own; ctx ends with the turn, and
// with it any call still waiting.
func newTurnServer(ctx context.Context, tools []string, names map[string]string, actions core.TurnActions) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "jakebot", Version: "1"}, nil)
	on := func(name string) bool { return slices.Contains(tools, name) }
	name := func(tool string) string { return cmp.Or(names[tool], tool) }
	if on(core.ToolSendFile) {
		mcp.AddTool(s, &mcp.Tool{Name: name(core.ToolSendFile), Description: "Send a file from the workdir into the chat as a document (images are shown inline where the platform does)."},
			func(c context.Context, _ *mcp.CallToolRequest, in sendFileIn) (*mcp.CallToolResult, any, error) {
				c, stop := within(c, ctx)
				defer stop()
				return done("sent "+in.Path, actions.SendFile(c, in.Path, in.Caption))
			})
	}
	if on(core.ToolNotify) {
		mcp.AddTool(s, &mcp.Tool{Name: name(core.ToolNotify), Description: "Tell the user something now, in a message that notifies them, such as \"tests pass, ready for review\"."},
			func(c context.Context, _ *mcp.CallToolRequest, in notifyIn) (*mcp.CallToolResult, any, error) {
				c, stop := within(c, ctx)
				defer stop()
				return done("notified", actions.Notify(c, in.Text))
			})
	}
	if on(core.ToolAskUser) {
		mcp.AddTool(s, &mcp.Tool{Name: name(core.ToolAskUser), Description: "Ask the conversation's users a question and wait for the answer, which is this tool's result."},
			func(c context.Context, _ *mcp.CallToolRequest, in askIn) (*mcp.CallToolResult, any, error) {
				c, stop := within(c, ctx)
				defer stop()
				return done(actions.Ask(c, in.Question, in.Options))
			})
	}
	if on(core.ToolSchedule) {
		mcp.AddTool(s, &mcp.Tool{Name: name(core.ToolSchedule), Description: "Schedule a later turn in this conversation, as the user's /at does."},
			func(c context.Context, _ *mcp.CallToolRequest, in scheduleIn) (*mcp.CallToolResult, any, error) {
				c, stop := within(c, ctx)
				defer stop()
				return done(actions.Schedule(c, in.When, in.Message))
			})
	}
	return s
}

// within is c, cancelled also when turn ends.
func within(c, turn context.Context) (context.Context, func()) {
	c, cancel := context.WithCancelCause(c)
	stop := context.AfterFunc(turn, func() { cancel(context.Cause(turn)) })
	return c, func() { stop(); cancel(nil) }
}

// done is a tool's result: text, or err for the agent to read (the SDK
// makes it an error result).
func done(text string, err error) (*mcp.CallToolResult, any, error) {
	if err != nil {
		return nil, nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
}
