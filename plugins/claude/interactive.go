package claude

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/internal/diffs"
	"github.com/jake-bot/jake-bot/plugins/internal/display"
	"github.com/jake-bot/jake-bot/plugins/internal/images"
)

// PermissionRequest is Claude Code asking, through its control protocol
// (--permission-prompt-tool stdio), whether a tool may run.
type PermissionRequest struct {
	RequestID string
	// Tool is the tool's name as the CLI knows it ("Bash").
	Tool  string
	Input json.RawMessage
	// Plan is the plan an ExitPlanMode request asks to approve.
	Plan string
}

// protocol is Claude Code's side of one turn: its stream-json output,
// read by the parser, and for a turn that streams its input (the control
// protocol) the user's message, the chat's answers and interrupts written
// to its stdin.
type protocol struct {
	parser *Parser
	link   *cliproc.Link
	// next numbers the bot's own control requests.
	next atomic.Int64
	// fresh reports whether the session is as it was at the start.
	fresh func() bool
	// inbox is the turn's, open from its message on; steered counts the
	// messages given to the CLI through it until ended (the turn's
	// result), replays those the CLI has taken in, the turn's own
	// included (--replay-user-messages). mu guards inbox, steered and
	// ended.
	mu      sync.Mutex
	inbox   *core.Inbox
	steered int64
	ended   bool
	replays atomic.Int64
}

var (
	_ cliproc.Interrupter = (*protocol)(nil)
	_ cliproc.Freshener   = (*protocol)(nil)
)

// protocol returns the protocol of t's turn: the message goes on stdin,
// permission requests to the chat, messages steered in after it.
func (p *Plugin) protocol(t core.Turn) func(*cliproc.Link) cliproc.Protocol {
	return func(link *cliproc.Link) cliproc.Protocol {
		c := newProtocol(link, t.Workdir)
		if dir, err := p.cfg.StateDir(os.Getenv); err == nil {
			c.parser.PlansDir = filepath.Join(dir, "plans")
		}
		c.fresh = cliproc.Unchanged(func() sessionStamp { return p.stampSession(t) })
		if t.ReadOnly {
			c.denyWrites()
		}
		c.parser.OnResult = c.resultSeen
		c.parser.OnReplay = func() { c.replays.Add(1) }
		link.Ready(func(t core.Turn) {
			if err := link.Send(userMessage(t)); err != nil {
				link.Logger().Warn("send the message to Claude Code", "err", err)
				return
			}
			c.mu.Lock()
			c.inbox = t.Inbox
			c.mu.Unlock()
			t.Inbox.Open(c.steer)
		})
		return c
	}
}

// newProtocol reads a turn in workdir, putting permission requests to
// the chat through link.
func newProtocol(link *cliproc.Link, workdir string) *protocol {
	c := &protocol{link: link}
	c.parser = NewParser(link.Emit)
	c.parser.Workdir = workdir
	c.parser.OnPermission = func(req PermissionRequest) {
		link.Emit(core.Event{Kind: core.EventQuestion, Question: question(req, func(a core.Answer) {
			if err := c.answer(req, a); err != nil {
				link.Logger().Warn("answer a permission request", "tool", req.Tool, "err", err)
			}
		})})
	}
	return c
}

// denyWrites makes a read-only turn deny a request to run a tool that
// writes, runs a command or leaves plan mode (ExitPlanMode) without asking
// the chat, whatever it would answer (APPROVALS, "always allow"). The turn
// does not offer those tools (readOnlyArgs): this holds should the CLI ask
// anyway. The agent's question and the bot's own tools are put as usual.
func (c *protocol) denyWrites() {
	ask := c.parser.OnPermission
	c.parser.OnPermission = func(req PermissionRequest) {
		if !slices.Contains(writeTools, req.Tool) {
			ask(req)
			return
		}
		if err := c.decide(req, map[string]any{"behavior": "deny", "message": "The user denied this tool call: " + readOnlyDenial}); err != nil {
			c.link.Logger().Warn("deny a permission request", "tool", req.Tool, "err", err)
		}
	}
}

func (c *protocol) Line(b []byte) { c.parser.Line(b) }

func (c *protocol) Outcome() cliproc.Outcome {
	r := c.parser.Result()
	return cliproc.Outcome{Result: r, SessionID: c.parser.SessionID(), Failed: r != nil && r.IsError}
}

// Fresh reports whether the session the CLI loaded is still as it was:
// resumed meanwhile elsewhere (a terminal, another conversation), the
// waiting CLI would answer from stale history.
func (c *protocol) Fresh() bool { return c.fresh == nil || c.fresh() }

// ReadStream feeds a recorded stream or control-protocol session (what
// Claude Code wrote) through a turn's protocol, as Run does, answering
// nothing: for jakebot replay and golden tests. Permission requests and
// the agent's questions are emitted as questions.
// Paths of edited files are shown relative to workdir.
func ReadStream(r io.Reader, workdir string, emit func(core.Event)) (*core.TurnResult, error) {
	return cliproc.Replay(r, "Claude Code", func(link *cliproc.Link) cliproc.Protocol { return newProtocol(link, workdir) }, emit)
}

// userMessage is the turn's message as a stream-json input line: its
// images as image blocks, then its text.
func userMessage(t core.Turn) any {
	var content []any
	for _, img := range images.Load(t.Images) {
		content = append(content, map[string]any{"type": "image",
			"source": map[string]any{"type": "base64", "media_type": img.MediaType, "data": img.Base64}})
	}
	content = append(content, map[string]any{"type": "text", "text": t.Prompt})
	return map[string]any{
		"type":    "user",
		"message": map[string]any{"role": "user", "content": content},
	}
}

// steer writes a message for the running turn on the CLI's stdin: it
// reaches the model at the turn's next step ("The user sent a new message
// while you were working").
func (c *protocol) steer(s core.Steering) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return core.ErrNotTaken
	}
	if err := c.link.Send(userMessage(core.Turn{Prompt: s.Prompt, Images: s.Images})); err != nil {
		return err
	}
	c.steered++
	return nil
}

// resultSeen ends the turn at its result: the inbox closes and so does the
// CLI's stdin. A message steered in as the model wrote its last answer
// missed the turn; the CLI runs it as one more turn of its own, with a
// result of its own, which the reply waits for. A CLI that echoes no
// message (not even the turn's own) is not waited for. While work runs in
// the background both stay open: the CLI waits for the work only while
// its stdin is open (closed, it may give the work 5 s: FORMAT.md), and
// runs a message steered in meanwhile as one more turn at once. The work's
// end closes the inbox; stdin stays open for the turn the CLI writes in
// answer to it, until its result: closed, the CLI would have only its
// exit grace (cliproc.DefaultExitGrace) to write a turn that may take the
// model longer.
func (c *protocol) resultSeen() {
	interrupted := c.parser.interrupted.Load()
	if len(c.parser.bg.running) > 0 && !interrupted {
		return
	}
	c.mu.Lock()
	c.ended = true
	steered, inbox := c.steered, c.inbox
	c.mu.Unlock()
	inbox.Close()
	if c.parser.FollowUpDue() && !interrupted {
		return
	}
	if taken := c.replays.Load(); taken > 0 && taken < 1+steered && !interrupted {
		return
	}
	c.link.Done()
}

// answer tells the CLI the chat's decision on req. The agent's own
// question (AskUserQuestion) is allowed with the answer added to its
// input; a plan (ExitPlanMode) is approved or sent back with the words.
func (c *protocol) answer(req PermissionRequest, a core.Answer) error {
	decision := map[string]any{"behavior": "allow", "updatedInput": req.Input}
	switch req.Tool {
	case "AskUserQuestion":
		var in map[string]any
		_ = json.Unmarshal(req.Input, &in)
		if in == nil {
			in = map[string]any{}
		}
		if qs, _ := in["questions"].([]any); len(qs) > 0 {
			if q, _ := qs[0].(map[string]any); q != nil {
				in["answers"] = map[string]any{fmt.Sprint(q["question"]): a.Choice}
			}
		}
		decision["updatedInput"] = in
	case "ExitPlanMode":
		if choice := strings.TrimSpace(a.Choice); choice != approvePlan {
			a = core.Answer{Decision: core.Deny, Reason: "keep planning"}
			if choice != "" && choice != keepPlanning {
				a.Reason = "keep planning: " + choice
			}
		}
	}
	if a.Decision == core.Deny {
		msg := "The user denied this tool call."
		if a.Reason != "" {
			msg = "The user denied this tool call: " + a.Reason
		}
		decision = map[string]any{"behavior": "deny", "message": msg}
	}
	return c.decide(req, decision)
}

// decide sends the CLI decision on req.
func (c *protocol) decide(req PermissionRequest, decision map[string]any) error {
	return c.link.Send(map[string]any{
		"type":     "control_response",
		"response": map[string]any{"subtype": "success", "request_id": req.RequestID, "response": decision},
	})
}

// Interrupt asks the CLI to stop the turn; it ends it with a result and
// keeps the partial turn in its session.
func (c *protocol) Interrupt() error {
	c.parser.Interrupt()
	id := interruptPrefix + strconv.FormatInt(c.next.Add(1), 10)
	return c.link.Send(map[string]any{"type": "control_request", "request_id": id, "request": map[string]any{"subtype": "interrupt"}})
}

// interruptPrefix starts the ids of the bot's interrupts.
const interruptPrefix = "jakebot-interrupt-"

// Plan mode's answers.
const (
	approvePlan  = "Approve plan"
	keepPlanning = "Keep planning"
)

// question is req as the chat sees it: the tool, what it will do (the
// command, the file) and, for edits, a short diff. The agent's own
// question and a plan to approve offer their options instead.
func question(req PermissionRequest, answer func(core.Answer)) *core.Question {
	q := &core.Question{Tool: ToolName(req.Tool), Answer: answer}
	switch req.Tool {
	case "AskUserQuestion":
		var in struct {
			Questions []struct {
				Question string           `json:"question"`
				Options  []display.Option `json:"options"`
			} `json:"questions"`
		}
		if json.Unmarshal(req.Input, &in) == nil && len(in.Questions) > 0 {
			first := in.Questions[0]
			q.Summary = first.Question
			display.Offer(q, first.Options)
			if len(q.Options) == 0 {
				q.Options = []string{"Yes", "No"}
			}
			return q
		}
	case "ExitPlanMode":
		q.Summary, q.Options = "Ready to code? The plan:", []string{approvePlan, keepPlanning}
		q.Detail = shortPlan(req.Plan)
		return q
	}
	var in struct {
		Command string `json:"command"`
		diffs.Edit
	}
	_ = json.Unmarshal(req.Input, &in)
	switch {
	case in.Command != "":
		q.Summary = "`" + in.Command + "`"
	case in.FilePath != "":
		q.Summary = in.FilePath
	default:
		q.Summary = toolArg(req.Tool, req.Input)
	}
	if in.Replaces() || in.Content != "" {
		q.Detail = diffs.Short(in.Diff(), diffs.QuestionLines)
	}
	return q
}

// shortPlan keeps the start of a plan for the chat.
func shortPlan(plan string) string {
	lines := strings.Split(strings.TrimSpace(plan), "\n")
	if len(lines) > 30 {
		lines = append(lines[:30], "…")
	}
	return strings.Join(lines, "\n")
}
