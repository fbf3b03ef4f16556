package plugintest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

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
	// Answer answers every question; the zero Answer allows.
	Answer core.Answer
	// Interrupt stops the turn once the model is asked for its first
	// reply, which waits until the end of the test.
	Interrupt bool
}

// RecordSessions records each case with the pinned CLI named cli into
// testdata/<cli>/<subdir>/<name>.jsonl at the repository root, when
// enabled (a test's -capture flag; the test is skipped otherwise): plugin
// makes the plugin on the CLI at the path it is given (a Recorder of the
// real one) and the fake model it talks to, answering with the case's
// replies; the turn runs in a new workdir, which is replaced by as in the
// recording, so that it does not change with the test's temporary
// directory.
func RecordSessions(t *testing.T, enabled bool, cli, subdir, as string, cases []SessionCase, plugin func(t *testing.T, bin string, replies []Reply) (core.Plugin, Model)) {
	if !enabled {
		t.Skip("recapture with -capture")
	}
	bin := CLIPath(t, cli)
	dir := filepath.Join(ModuleRoot(), "testdata", cli, subdir)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			raw := filepath.Join(t.TempDir(), "stdout.jsonl")
			replies := slices.Clone(c.Replies)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if c.Interrupt {
				hold := make(chan struct{})
				t.Cleanup(func() { close(hold) })
				replies[0].Hold = hold
			}
			p, model := plugin(t, Recorder(t, bin, raw), replies)
			if c.Interrupt {
				go func() {
					<-model.Arrived()
					cancel()
				}()
			}
			answer := c.Answer
			if answer == (core.Answer{}) {
				answer = core.Answer{Decision: core.Allow}
			}
			turn := core.Turn{Workdir: Workdir(t), Prompt: "do it", Ask: true, Mode: c.Mode}
			RunAnswering(ctx, t, p, turn, answer)
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

// RunCLI runs a CLI with args in dir, with env added to the test's own,
// for recording its output, and returns what it wrote on stdout.
func RunCLI(t *testing.T, bin, dir string, env []string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("%s %q: %v\n%s%s", filepath.Base(bin), args, err, stdout.Bytes(), stderr.Bytes())
	return stdout.Bytes()
}

// CopyHistory copies a CLI's history files from its state folder to dst,
// those keep takes by their path relative to state, with workdir replaced
// by as, so that the listing tests read what the real CLI wrote.
func CopyHistory(t *testing.T, state, dst, workdir, as string, keep func(rel string) bool) {
	t.Helper()
	if err := os.RemoveAll(dst); err != nil {
		t.Fatal(err)
	}
	err := filepath.WalkDir(state, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(state, path)
		if !keep(rel) {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, bytes.ReplaceAll(data, []byte(workdir), []byte(as)), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
