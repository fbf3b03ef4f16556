package bot_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// SIGTERM during a slow turn: the chat is told, new turns are refused, the
// turn gets SHUTDOWN_GRACE, the process exits 0 and leaves no CLI behind.
func TestSignalWindsTurnsDownAndExitsZero(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		grace  string
		finish bool // the model answers during the grace period
		want   string
	}{
		{"the turn finishes within the grace period", "2m", true, `Finished in time\.`},
		{"the turn outlasts the grace period", "300ms", false, `The bot is restarting; this turn was stopped\. Send your message again once it is back \(/claude resume continues this session\)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			hold := make(chan struct{})
			f := newFixture(t, plugintest.Reply{Text: []string{"Finished in time."}, Hold: hold})
			b := startBinary(t, f.workdir, f.binEnv("STATE_FILE=off", "SHUTDOWN_GRACE="+tt.grace, "CONSOLE_INPUT=typed"))
			b.say("/claude start", "take your time")
			b.expect(`started in`)
			<-f.model.Arrived() // the CLI is waiting for the model
			b.signal(syscall.SIGTERM)
			b.expect(`The bot is restarting\. The running turn has ` + regexp.QuoteMeta(tt.grace[:len(tt.grace)-1]) + `[^ ]* to finish; if it is cut short, send your message again once the bot is back\. The conversation continues by itself if the bot keeps its state; otherwise /claude resume [0-9a-f-]{36} brings it back\.`)
			b.say("one more thing")
			b.expect(`starts no new turns; this message was not sent`)
			if tt.finish {
				close(hold)
			}
			b.expect(tt.want)
			if code := b.wait(); code != 0 {
				t.Fatalf("exit code %d, want 0\n%s", code, b.stderr.String())
			}
			if !tt.finish {
				close(hold)
			}
			if pids := f.alive(); len(pids) != 0 {
				t.Fatalf("processes %v outlived the bot", pids)
			}
			if logs := b.stderr.String(); !strings.Contains(logs, "shutting down: no new turns") || !strings.Contains(logs, "jakebot stopped") {
				t.Fatalf("logs lack the shutdown:\n%s", logs)
			}
		})
	}
}

// SIGKILL between turns loses nothing: the next start continues the
// conversation from the state file, and the resumed request carries the
// first exchange.
func TestStateSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	f := newFixture(t,
		plugintest.Reply{Text: []string{"The secret word is pineapple."}},
		plugintest.Reply{Text: []string{"You asked about the secret."}},
	)
	statePath := filepath.Join(t.TempDir(), "state", "state.json")
	env := f.binEnv("STATE_FILE=" + statePath)

	first := startBinary(t, f.workdir, env)
	first.say("/claude start", "remember a secret word")
	first.expect(`started in`)
	first.expect(`pineapple`)
	waitFor(t, "the session id in the state file", func() bool {
		data, _ := os.ReadFile(statePath)
		return sessionRE.Match(data)
	})
	first.signal(syscall.SIGKILL)
	first.wait()

	second := startBinary(t, f.workdir, env)
	second.say("what was it?") // no /start: the conversation is still there
	second.expect(`You asked about the secret`)
	second.in.Close()
	if code := second.wait(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	if !strings.Contains(second.stderr.String(), "state loaded") {
		t.Errorf("second start did not load the state:\n%s", second.stderr.String())
	}
	reqs := f.model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("model saw %d requests, want 2", len(reqs))
	}
	if text := reqs[1].Text(); !strings.Contains(text, "remember a secret word") || !strings.Contains(text, "pineapple") {
		t.Fatalf("the resumed request lacks the first exchange: %q", text)
	}
}
