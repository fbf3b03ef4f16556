package plugintest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
)

// RecordedWorkdir stands for the workdir in every recording, so that a
// recording does not change with the test's temporary directory.
const RecordedWorkdir = "/workdir"

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
	// Env and Args are the case's own additions to the CLI's environment
	// (NAME=value each) and arguments, for the plugin to add.
	Env, Args []string
}

// RecordSessions records each case with the pinned CLI named cli into
// testdata/<cli>/<subdir>/<name>.jsonl at the repository root, when
// enabled (a test's -capture flag; the test is skipped otherwise): plugin
// makes the plugin on the CLI at the path it is given (a Recorder of the
// real one) with the case's Env and Args, and the fake model it talks to,
// answering with the case's replies; the turn runs in a new workdir, which the recording calls
// RecordedWorkdir.
func RecordSessions(t *testing.T, enabled bool, cli, subdir string, cases []SessionCase, plugin func(t *testing.T, bin string, c SessionCase) (core.Plugin, Model)) {
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
			c.Replies = replies
			p, model := plugin(t, Recorder(t, bin, raw), c)
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
			data = bytes.ReplaceAll(data, []byte(turn.Workdir), []byte(RecordedWorkdir))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, c.Name+".jsonl"), data, 0o644); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// StreamTurn is one run of a one-shot CLI in a recording: its prompt, the
// fake model's replies to it, and arguments of its own.
type StreamTurn struct {
	Prompt  string
	Replies []Reply
	Args    []string
}

// StreamCase is a one-shot stream to record, Name being its file's name:
// its last turn is written, earlier ones set up the session it resumes.
// Opts is what else the CLI's recorder needs to know of the case.
type StreamCase[O any] struct {
	Name  string
	Turns []StreamTurn
	Opts  O
}

// StreamRecorder records what a one-shot CLI writes on stdout, for the
// golden tests, into testdata/<CLI>/<case>.jsonl at the repository root,
// each case's workdir being RecordedWorkdir there.
type StreamRecorder[O any] struct {
	CLI string
	// Run runs one turn of case c with the CLI at bin in dir, its state
	// in home, resuming session unless it is empty, and returns what it
	// wrote on stdout (RunCLI).
	Run func(t *testing.T, bin string, c StreamCase[O], turn StreamTurn, home, dir, session string) []byte
	// SessionField of the first line of type SessionEvent a turn writes
	// is its session's id.
	SessionEvent, SessionField string
	// State is the CLI's state folder in home; of case "resume" the
	// files Keep takes are copied to testdata/<CLI>/history/<State>, for
	// the listing tests (CopyHistory).
	State string
	Keep  func(rel string) bool
	// Recorded, when set, is called once a case is written, to keep more
	// of what the CLI left.
	Recorded func(t *testing.T, c StreamCase[O], home, dir, session string)
}

// Record records each case when enabled (a test's -capture flag; the test
// is skipped otherwise).
func (r StreamRecorder[O]) Record(t *testing.T, enabled bool, cases []StreamCase[O]) {
	if !enabled {
		t.Skip("recapture with -capture")
	}
	bin := CLIPath(t, r.CLI)
	outDir := filepath.Join(ModuleRoot(), "testdata", r.CLI)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			home, dir := Home(t), t.TempDir()
			var out []byte
			session := ""
			for _, turn := range c.Turns {
				out = r.Run(t, bin, c, turn, home, dir, session)
				session = firstField(out, r.SessionEvent, r.SessionField)
			}
			out = bytes.ReplaceAll(out, []byte(dir), []byte(RecordedWorkdir))
			if err := os.WriteFile(filepath.Join(outDir, c.Name+".jsonl"), out, 0o644); err != nil {
				t.Fatal(err)
			}
			if c.Name == "resume" {
				CopyHistory(t, filepath.Join(home, r.State), filepath.Join(outDir, "history", r.State), dir, r.Keep)
			}
			if r.Recorded != nil {
				r.Recorded(t, c, home, dir, session)
			}
		})
	}
}

// firstField returns the string field of the first line of out, a stream
// of JSON lines, whose "type" is typ.
func firstField(out []byte, typ, field string) string {
	for _, line := range bytes.Split(out, []byte("\n")) {
		var ev map[string]any
		if json.Unmarshal(line, &ev) == nil && ev["type"] == typ {
			s, _ := ev[field].(string)
			return s
		}
	}
	return ""
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
// by RecordedWorkdir, so that the listing tests read what the real CLI
// wrote.
func CopyHistory(t *testing.T, state, dst, workdir string, keep func(rel string) bool) {
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
		return os.WriteFile(out, bytes.ReplaceAll(data, []byte(workdir), []byte(RecordedWorkdir)), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
