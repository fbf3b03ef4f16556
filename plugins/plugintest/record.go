package plugintest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/jake-bot/jake-bot/core"
)

// Recorder returns a program that runs bin with its arguments and copies
// what it writes on stdout to the file out, for recording the sessions
// the golden tests replay: a plugin run with it as its CLI behaves as
// with bin.
func Recorder(t testing.TB, bin, out string) string {
	t.Helper()
	script := filepath.Join(t.TempDir(), filepath.Base(bin)+"-recorder")
	body := fmt.Sprintf("#!/bin/sh\n%q \"$@\" | tee -a %q\n", bin, out)
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

// SessionCase is a protocol session to record: its name (the recording's
// file name), the turn's mode, the fake model's replies.
type SessionCase struct {
	Name, Mode string
	Replies    []Reply
}

// RecordSessions records each case with the real CLI at bin into
// dir/<name>.jsonl: plugin makes the plugin on the CLI at the path it is
// given (a Recorder of bin) against a fake model answering with the
// case's replies; the turn runs in a new workdir with every question
// answered with allow, and the workdir is replaced by as in the recording,
// which then does not change with the test's temporary directory.
func RecordSessions(t *testing.T, bin, dir, as string, cases []SessionCase, plugin func(t *testing.T, bin string, replies []Reply) core.Plugin) {
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			raw := filepath.Join(t.TempDir(), "stdout.jsonl")
			turn := core.Turn{Workdir: Workdir(t), Prompt: "do it", Ask: true, Mode: c.Mode}
			RunAnswering(context.Background(), t, plugin(t, Recorder(t, bin, raw), c.Replies), turn, core.Answer{Decision: core.Allow})
			data, err := os.ReadFile(raw)
			if err != nil {
				t.Fatal(err)
			}
			data = bytes.ReplaceAll(data, []byte(turn.Workdir), []byte(as))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, c.Name+".jsonl"), data, 0o644); err != nil {
				t.Fatal(err)
			}
		})
	}
}
