package core

import (
	"context"
	"strings"
	"time"
)

// AgentTools is the bot's MCP server (issue 31), through which a turn's
// agent reaches its own conversation: bot/agenttools serves it, so that
// core does not depend on the MCP SDK.
type AgentTools interface {
	// Open gives a turn its capability: where the server is and a
	// credential that acts only through actions, until closed. only, when
	// not nil, narrows the server's tools for the turn: the agent is not
	// shown a tool that would be refused.
	Open(actions TurnActions, only []string) (access *ToolAccess, close func())
}

// ToolAccess is what a plugin tells its CLI about the bot's MCP server
// for one turn (Turn.Tools).
type ToolAccess struct {
	// URL is the server's streamable HTTP endpoint on 127.0.0.1.
	URL string
	// Token is the turn's bearer token: the server refuses any other, and
	// this one once the turn has ended.
	Token string
	// Tools are the tools served (AGENT_TOOLS), for a CLI that must be
	// told which of them run without approval.
	Tools []string
	// Actions are what the tools do in the turn's conversation, for a
	// plugin whose CLI reaches them through a server elsewhere: the
	// remote plugin answers a runner's calls with them.
	Actions TurnActions
	// Spawned, when not nil, is to be told the id of the process the
	// plugin started with this access: the outermost, a sandbox's if the
	// CLI runs in one. The server then serves the token only to a
	// connection of that process or of one it started, not to another
	// CLI that read the token (every process of the bot's user can read
	// /proc/<pid>/environ); until then it waits.
	Spawned func(pid int)
}

// Agent tools' names, as the MCP server offers them.
const (
	ToolSendFile = "send_file"
	ToolNotify   = "notify"
	ToolAskUser  = "ask_user"
	ToolSchedule = "schedule"
)

// ToolNamesHeader is the request header by which a CLI's MCP client asks
// the bot's server for some of its tools under other names: tool=name
// pairs, comma-separated ("ask_user=ask_the_user"). Gemini CLI over ACP
// hides every tool named ask_user, its own and any MCP server's.
const ToolNamesHeader = "X-Jakebot-Tool-Names"

// AllAgentTools are the tools AGENT_TOOLS offers by default.
var AllAgentTools = []string{ToolSendFile, ToolNotify, ToolAskUser, ToolSchedule}

// agentNotifyRate bounds how often the agents of one conversation's turns
// may notify (notify): a burst of 5, then one every 2 minutes.
var agentNotifyRate = Rate{N: 5, Per: 10 * time.Minute}

// Bounds of what the agent may say through its tools.
const (
	maxToolText     = 2000
	maxToolOptions  = 10
	maxToolCallsRun = 50
)

// TurnActions is what the agent may do in its turn's conversation, with
// the rules of the commands a user has for the same (/file, /at). An
// error is for the agent to read.
type TurnActions interface {
	SendFile(ctx context.Context, path, caption string) error
	Notify(ctx context.Context, text string) error
	// Ask waits for the answer of the conversation's users, at most
	// APPROVAL_TIMEOUT.
	Ask(ctx context.Context, question string, options []string) (string, error)
	Schedule(ctx context.Context, when, message string) (string, error)
}

func toolText(name, text string) error {
	switch {
	case strings.TrimSpace(text) == "":
		return Errorf("%s is empty", name)
	case len(text) > maxToolText:
		return Errorf("%s is %d bytes, over the %d the bot takes", name, len(text), maxToolText)
	}
	return nil
}
