package remote_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The agent tools of a turn on a runner (issue 31): the runner serves them
// beside its CLI and relays each call to the gateway, which acts in the
// turn's conversation: a notice, a file read from the runner (inside its
// roots, checked on both sides), a schedule; a tool the gateway does not
// offer is refused. Only the tools both sides serve are the CLI's.
func TestAgentToolsOnARunner(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.gwTools = []string{"send_file", "notify", "schedule"}
	box2 := w.startRunner(runnerOpts{name: "box2", tools: []string{"send_file", "notify", "ask_user", "schedule"}})
	w.startGateway()
	w.waitOnline("box2")
	if err := os.WriteFile(filepath.Join(box2.app(), "report.txt"), []byte("all green\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w.startOn(box2)
	w.say("use the tools")
	got := w.expect("tools: ")
	for _, want := range []string{"notified; sent; error: ", "outside", "; Scheduled", `; error: the bot offers no tool "ask_user" here`} {
		if !strings.Contains(got, want) {
			t.Errorf("the tools answered %q, want %q in it", got, want)
		}
	}
	if n := recv(t, w.gw.rec.Notified(), "the notice"); n.Text != "halfway there" || n.User != admin {
		t.Errorf("notified %+v", n)
	}
	if f := recv(t, w.gw.rec.Files(), "the report"); f.Name != "report.txt" || string(f.Data) != "all green\n" || f.Caption != "the report" {
		t.Errorf("sent %+v", f)
	}
	w.say("/schedules")
	w.expect("check the deploy")
	turn := box2.plugin.Turns()[0]
	if turn.Tools == nil || strings.Join(turn.Tools.Tools, ",") != "send_file,notify,schedule" {
		t.Errorf("the runner's CLI was told of %+v, want the tools both sides serve", turn.Tools)
	}
}

// A gateway without agent tools (AGENT_TOOLS=off) has a runner serve its
// CLI none, whatever the runner's own setting.
func TestNoAgentToolsOnARunnerWhenTheGatewayHasNone(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	box2 := w.startRunner(runnerOpts{name: "box2", tools: []string{"notify"}})
	w.startGateway()
	w.waitOnline("box2")
	w.startOn(box2)
	w.say("use the tools")
	w.expect("no tools")
}
