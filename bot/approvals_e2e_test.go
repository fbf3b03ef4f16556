package bot_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// asker is a CLI of the suite: how its fake model asks for a shell
// command, and the tool's name in the chat's questions.
type asker struct {
	otherCLI
	tool  string
	shell func(n int, command string) *plugintest.ToolCall
}

var askers = map[string]asker{
	"claude": {claudeCLI, "Bash", func(n int, command string) *plugintest.ToolCall {
		return &plugintest.ToolCall{ID: fmt.Sprintf("toolu_%d", n), Name: "Bash", Input: map[string]any{"command": command, "description": "run it"}}
	}},
	"codex": {otherCLIs[0], "Shell", func(n int, command string) *plugintest.ToolCall {
		return &plugintest.ToolCall{ID: fmt.Sprintf("call_%d", n), Name: "exec_command", Input: map[string]any{"cmd": command}}
	}},
	"gemini": {otherCLIs[1], "Shell", func(n int, command string) *plugintest.ToolCall {
		return &plugintest.ToolCall{ID: fmt.Sprintf("call_%d", n), Name: "run_shell_command", Input: map[string]any{"command": command}}
	}},
}

// scene is one approval scenario under way: a CLI asking on a platform.
type scene struct {
	t      *testing.T
	c      *chat
	f      *fixture
	a      asker
	plat   string
	model  fakeModel
	timers *coretest.ManualClock
}

// approvalTimeout is APPROVAL_TIMEOUT in the suite, on the manual Timers.
const approvalTimeout = 10 * time.Minute

// action is one thing people do with an agent's request: its model's
// script and what the chat shows.
type action struct {
	name    string
	replies func(a asker, hold chan struct{}) []plugintest.Reply
	run     func(s *scene)
}

var actions = []action{
	{"allow", madeOrKept, allowAction},
	{"always", twoCommands, alwaysAction},
	{"deny", madeOrKept, denyAction},
	{"timeout", madeOrKept, timeoutAction},
	{"stranger", madeOrKept, strangerAction},
	{"interrupt", heldThenGoOn, interruptAction},
}

// TestApprovalsEndToEnd runs each action with a real CLI on each platform
// and with each CLI on some platform: not every combination, since each
// real CLI turn takes a second. Claude Code and Codex take turns along
// the table, so each does every action and each platform sees both;
// Gemini CLI, whose turns take two seconds, does every action once.
func TestApprovalsEndToEnd(t *testing.T) {
	t.Parallel()
	type row struct {
		plat platformCase
		act  action
		cli  string
	}
	var rows []row
	for i, p := range platformCases {
		for j, act := range actions {
			if act.name == "stranger" && p.name == "console" {
				continue // the console has one user
			}
			rows = append(rows, row{p, act, []string{"claude", "codex"}[(i+j)%2]})
		}
	}
	for _, g := range []struct{ plat, act int }{
		{0, 0}, {1, 4}, {2, 1}, {3, 2}, {4, 3}, // console allow, discord stranger, slack always, telegram deny, web timeout
		{3, 5}, // telegram interrupt
		{5, 4}, // mattermost stranger
		{6, 0}, // matrix allow
	} {
		rows = append(rows, row{platformCases[g.plat], actions[g.act], "gemini"})
	}
	for _, r := range rows {
		t.Run(r.plat.name+"/"+r.act.name+"/"+r.cli, func(t *testing.T) {
			t.Parallel()
			hold := make(chan struct{})
			t.Cleanup(func() { close(hold) })
			s := newScene(t, r.plat, askers[r.cli], r.act.replies(askers[r.cli], hold))
			s.c.start(r.cli)
			r.act.run(s)
		})
	}
}

func newScene(t *testing.T, plat platformCase, a asker, replies []plugintest.Reply) *scene {
	t.Helper()
	f := newFixture(t)
	cfg := f.config()
	s := &scene{t: t, f: f, a: a, plat: plat.name, timers: coretest.NewManualClock()}
	cfg.Approvals, cfg.ApprovalTimeout, cfg.Timers = "ask", approvalTimeout, s.timers
	// acceptEdits lets a shell command that only writes a file through.
	cfg.Claude.PermissionMode = "default"
	s.model = a.setup(t, f, &cfg, replies...)
	d := plat.open(t, &cfg)
	s.c = runChat(t, cfg, d)
	return s
}

func madeOrKept(a asker, _ chan struct{}) []plugintest.Reply {
	return []plugintest.Reply{{Text: []string{"Creating it."}, Tool: a.shell(1, "echo made > made.txt")}, {Text: []string{"Finished."}}}
}

func twoCommands(a asker, _ chan struct{}) []plugintest.Reply {
	return []plugintest.Reply{{Tool: a.shell(1, "echo one > one.txt")}, {Tool: a.shell(2, "echo two > two.txt")}, {Text: []string{"Both made."}}}
}

func heldThenGoOn(a asker, hold chan struct{}) []plugintest.Reply {
	return []plugintest.Reply{{Text: []string{"Thinking."}, Hold: hold}, {Text: []string{"Continuing."}}}
}

// question waits for the agent's question about command.
func (s *scene) question(command string) {
	s.t.Helper()
	s.c.expect(`Allow `+s.a.tool+`\?`, regexp.QuoteMeta(command))
}

func (s *scene) exists(name string) bool {
	_, err := os.Stat(filepath.Join(s.f.workdir, name))
	return err == nil
}

// settled waits until the question shows its answer and no buttons, on
// platforms where it had buttons.
func (s *scene) settled(answer string) {
	s.t.Helper()
	if s.plat == "console" {
		return
	}
	s.c.until("the question to show "+answer, func() bool {
		for _, m := range s.c.d.messages() {
			if strings.Contains(m.text, "Allow "+s.a.tool+"?") {
				return strings.Contains(m.text, answer) && len(m.buttons) == 0
			}
		}
		return false
	})
}

func allowAction(s *scene) {
	s.c.say("make a file")
	s.question("echo made > made.txt")
	if p, ok := s.c.d.(pinger); ok {
		s.c.until("the question's ping", p.pinged)
	}
	s.c.press(owner, "Allow")
	s.c.expect(`Allowed ` + s.a.tool + ` \(`)
	s.c.expect(`Finished\.`)
	s.settled("→ Allowed " + s.a.tool)
	if !s.exists("made.txt") {
		s.t.Error("the allowed command did not run")
	}
}

func alwaysAction(s *scene) {
	s.c.say("make two files")
	s.question("echo one > one.txt")
	s.c.press(owner, "Always allow")
	s.c.expect(`Allowed ` + s.a.tool + `, and always from now on in this conversation`)
	s.c.expect(`Both made\.`)
	if !s.exists("one.txt") || !s.exists("two.txt") {
		s.t.Errorf("the commands did not both run: one.txt %v, two.txt %v", s.exists("one.txt"), s.exists("two.txt"))
	}
	asked := 0
	for _, m := range s.c.d.messages() {
		if strings.Contains(m.text, "Allow "+s.a.tool+"?") {
			asked++
		}
	}
	if asked != 1 {
		s.t.Errorf("the chat was asked %d times, want once: the second call is allowed always", asked)
	}
	s.c.say("/status")
	s.c.expect(`Always allowed: ` + s.a.tool)
}

func denyAction(s *scene) {
	s.c.say("make a file")
	s.question("echo made > made.txt")
	s.c.press(owner, "Deny")
	s.c.expect(`Denied ` + s.a.tool + ` \(`)
	s.c.expect(`Finished\.`)
	s.settled("→ Denied " + s.a.tool)
	if s.exists("made.txt") {
		s.t.Error("the denied command ran")
	}
}

func timeoutAction(s *scene) {
	s.c.say("make a file")
	s.question("echo made > made.txt")
	select {
	case <-s.timers.Waiting(): // the question's timer is set
	case <-time.After(patience):
		s.t.Fatal("the question set no timer")
	}
	s.c.mark()
	s.timers.Advance(approvalTimeout)
	s.c.expect(`Denied ` + s.a.tool + `: nobody answered within 10m0s\.`)
	s.c.expect(`Finished\.`)
	s.settled("⏱ Denied: nobody answered within 10m0s.")
	if s.exists("made.txt") {
		s.t.Error("the command ran though nobody allowed it")
	}
}

func strangerAction(s *scene) {
	s.c.say("make a file")
	s.question("echo made > made.txt")
	s.c.press(stranger, "Allow")
	if s.plat != "web" { // the web refuses anyone without the sign-in at the door
		s.c.expect(`Only the author of this turn \(.+\) or an admin can answer\.`)
	}
	if s.exists("made.txt") {
		s.t.Fatal("a stranger's press ran the command")
	}
	s.c.press(owner, "Allow")
	s.c.expect(`Allowed ` + s.a.tool + ` \(`)
	s.c.expect(`Finished\.`)
	if !s.exists("made.txt") {
		s.t.Error("the owner's press did not run the command")
	}
}

func interruptAction(s *scene) {
	s.c.say("think hard about pineapples")
	s.c.until("the model's request", func() bool { return len(s.model.Requests()) > 0 })
	s.c.say("/stop")
	s.c.expect(`Stopped\. The conversation continues with your next message\.`)
	s.c.say("go on")
	s.c.expect(`Continuing\.`)
	reqs := s.model.Requests()
	if len(reqs) < 2 {
		s.t.Fatalf("the model saw %d requests, want the interrupted turn's and the next", len(reqs))
	}
	if text := reqs[len(reqs)-1].Text(); !strings.Contains(text, "think hard about pineapples") {
		s.t.Errorf("the turn after /stop did not continue the session: its request lacks the interrupted message:\n%s", text)
	}
}

// pinger is a platform that makes a phone buzz for a question: it reports
// whether it did, the platform's way.
type pinger interface{ pinged() bool }
