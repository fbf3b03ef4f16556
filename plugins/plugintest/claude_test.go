package plugintest

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

var capture = flag.Bool("capture", false, "run the real claude CLI scenarios and write their stdout to testdata/claude/<scenario>.jsonl")

// claudeRun is one scenario's run of the real CLI against the fake.
type claudeRun struct {
	a         *Anthropic
	home, dir string
	outs      [][]byte // stdout of each turn, as-is
	errs      []error  // exit error of each turn
	session   string   // session id of the last turn
}

// events parses the JSON lines of turn i's stdout.
func (r *claudeRun) events(t *testing.T, i int) []map[string]any {
	t.Helper()
	var events []map[string]any
	for _, line := range bytes.Split(r.outs[i], []byte("\n")) {
		var e map[string]any
		if json.Unmarshal(line, &e) == nil {
			events = append(events, e)
		}
	}
	return events
}

// result returns the result event of turn i.
func (r *claudeRun) result(t *testing.T, i int) map[string]any {
	t.Helper()
	for _, e := range r.events(t, i) {
		if e["type"] == "result" {
			return e
		}
	}
	t.Fatalf("turn %d: no result event in\n%s", i, r.outs[i])
	return nil
}

// find returns the events of turn i with the given type whose message
// holds a content block of the given type.
func (r *claudeRun) blocks(t *testing.T, i int, typ, block string) []map[string]any {
	t.Helper()
	var found []map[string]any
	for _, e := range r.events(t, i) {
		if e["type"] != typ {
			continue
		}
		msg, _ := e["message"].(map[string]any)
		content, _ := msg["content"].([]any)
		for _, c := range content {
			if c, _ := c.(map[string]any); c["type"] == block {
				found = append(found, c)
			}
		}
	}
	return found
}

// streamedText concatenates the text deltas of turn i.
func (r *claudeRun) streamedText(t *testing.T, i int) string {
	t.Helper()
	var sb strings.Builder
	for _, e := range r.events(t, i) {
		if e["type"] != "stream_event" {
			continue
		}
		ev, _ := e["event"].(map[string]any)
		if d, _ := ev["delta"].(map[string]any); d["type"] == "text_delta" {
			sb.WriteString(str(d["text"]))
		}
	}
	return sb.String()
}

const unknownSession = "0b0b0b0b-0b0b-4b0b-8b0b-0b0b0b0b0b0b"

// claudeScenario runs the CLI for one or more turns. In args, "{session}"
// stands for the session id of the previous turn and "{dir}" for the
// workdir.
type claudeScenario struct {
	name    string
	replies func(dir string) []Reply
	turns   [][]string
	env     []string
	check   func(t *testing.T, r *claudeRun)
}

var claudeScenarios = []claudeScenario{
	{
		name:    "text",
		replies: func(string) []Reply { return []Reply{{Text: []string{"Hello", " from the", " fake model."}}} },
		turns:   [][]string{{"-p", "say hello"}},
		check: func(t *testing.T, r *claudeRun) {
			if got := r.streamedText(t, 0); got != "Hello from the fake model." {
				t.Errorf("streamed %q", got)
			}
			res := r.result(t, 0)
			if res["subtype"] != "success" || res["is_error"] != false || res["result"] != "Hello from the fake model." {
				t.Errorf("result %v", res)
			}
			if r.errs[0] != nil {
				t.Errorf("exit: %v", r.errs[0])
			}
		},
	},
	{
		name: "tool_bash",
		replies: func(string) []Reply {
			return []Reply{
				{Text: []string{"I'll write the file."}, Tool: &ToolCall{ID: "toolu_bash1", Name: "Bash",
					Input: map[string]any{"command": "echo hello > out.txt && echo wrote", "description": "Write out.txt"}}},
				{Text: []string{"Wrote out.txt."}},
			}
		},
		turns: [][]string{{"-p", "write hello to out.txt", "--allowedTools", "Bash"}},
		check: func(t *testing.T, r *claudeRun) {
			if b, err := os.ReadFile(filepath.Join(r.dir, "out.txt")); err != nil || string(b) != "hello\n" {
				t.Errorf("out.txt: %q %v", b, err)
			}
			results := r.blocks(t, 0, "user", "tool_result")
			if len(results) != 1 || results[0]["is_error"] != false || results[0]["tool_use_id"] != "toolu_bash1" {
				t.Errorf("tool results %v", results)
			}
			reqs := r.a.Requests()
			if len(reqs) != 2 || !strings.Contains(reqs[1].LastUserText(), "wrote") {
				t.Errorf("the model did not get the tool's output: %d requests", len(reqs))
			}
			if res := r.result(t, 0); res["result"] != "Wrote out.txt." || res["num_turns"] != 2.0 {
				t.Errorf("result %v", res)
			}
		},
	},
	{
		name: "tool_error",
		replies: func(string) []Reply {
			return []Reply{
				{Tool: &ToolCall{ID: "toolu_fail1", Name: "Bash", Input: map[string]any{"command": "echo oops >&2; exit 3", "description": "Fail"}}},
				{Text: []string{"The command failed."}},
			}
		},
		turns: [][]string{{"-p", "run a failing command", "--allowedTools", "Bash"}},
		check: func(t *testing.T, r *claudeRun) {
			results := r.blocks(t, 0, "user", "tool_result")
			if len(results) != 1 || results[0]["is_error"] != true {
				t.Errorf("tool results %v", results)
			}
		},
	},
	{
		name: "tool_denied",
		replies: func(string) []Reply {
			return []Reply{
				{Tool: &ToolCall{ID: "toolu_deny1", Name: "Bash", Input: map[string]any{"command": "touch denied.txt", "description": "Touch"}}},
				{Text: []string{"I was not allowed."}},
			}
		},
		turns: [][]string{{"-p", "touch a file"}},
		check: func(t *testing.T, r *claudeRun) {
			if _, err := os.Stat(filepath.Join(r.dir, "denied.txt")); err == nil {
				t.Error("a denied command ran")
			}
			results := r.blocks(t, 0, "user", "tool_result")
			if len(results) != 1 || results[0]["is_error"] != true {
				t.Errorf("tool results %v", results)
			}
			if d, _ := r.result(t, 0)["permission_denials"].([]any); len(d) != 1 {
				t.Errorf("permission_denials %v", d)
			}
		},
	},
	{
		name: "edit",
		replies: func(dir string) []Reply {
			file := filepath.Join(dir, "hello.txt")
			return []Reply{
				{Tool: &ToolCall{ID: "toolu_write1", Name: "Write", Input: map[string]any{"file_path": file, "content": "one\ntwo\nthree\n"}}},
				{Tool: &ToolCall{ID: "toolu_edit1", Name: "Edit", Input: map[string]any{"file_path": file, "old_string": "two", "new_string": "TWO"}}},
				{Tool: &ToolCall{ID: "toolu_write2", Name: "Write", Input: map[string]any{"file_path": file, "content": "one\nTWO\nthree\nfour\n"}}},
				{Text: []string{"Edited hello.txt."}},
			}
		},
		turns: [][]string{{"-p", "make and edit hello.txt", "--permission-mode", "acceptEdits"}},
		check: func(t *testing.T, r *claudeRun) {
			if b, err := os.ReadFile(filepath.Join(r.dir, "hello.txt")); err != nil || string(b) != "one\nTWO\nthree\nfour\n" {
				t.Errorf("hello.txt: %q %v", b, err)
			}
			results := r.blocks(t, 0, "user", "tool_result")
			if len(results) != 3 {
				t.Errorf("tool results %v", results)
			}
			for _, res := range results {
				if res["is_error"] == true {
					t.Errorf("tool failed: %v", res)
				}
			}
		},
	},
	{
		name: "multi_tool",
		replies: func(dir string) []Reply {
			return []Reply{
				{Text: []string{"Two commands at once."},
					Tool:  &ToolCall{ID: "toolu_multi1", Name: "Bash", Input: map[string]any{"command": "echo one > one.txt", "description": "Write one"}},
					Tools: []ToolCall{{ID: "toolu_multi2", Name: "Bash", Input: map[string]any{"command": "echo two > two.txt", "description": "Write two"}}}},
				{Tool: &ToolCall{ID: "toolu_multi3", Name: "Read", Input: map[string]any{"file_path": filepath.Join(dir, "one.txt")}}},
				{Text: []string{"Both files are written."}},
			}
		},
		turns: [][]string{{"-p", "write two files", "--allowedTools", "Bash Read"}},
		check: func(t *testing.T, r *claudeRun) {
			for _, f := range []string{"one.txt", "two.txt"} {
				if _, err := os.Stat(filepath.Join(r.dir, f)); err != nil {
					t.Error(err)
				}
			}
			if uses := r.blocks(t, 0, "assistant", "tool_use"); len(uses) != 3 {
				t.Errorf("%d tool uses, want 3", len(uses))
			}
			if results := r.blocks(t, 0, "user", "tool_result"); len(results) != 3 {
				t.Errorf("%d tool results, want 3", len(results))
			}
		},
	},
	{
		name: "thinking",
		replies: func(string) []Reply {
			return []Reply{{Thinking: "The user wants a greeting.", Text: []string{"Hi there."}}}
		},
		turns: [][]string{{"-p", "think, then greet"}},
		check: func(t *testing.T, r *claudeRun) {
			if th := r.blocks(t, 0, "assistant", "thinking"); len(th) != 1 || th[0]["thinking"] != "The user wants a greeting." {
				t.Errorf("thinking blocks %v", th)
			}
		},
	},
	{
		name: "resume",
		replies: func(string) []Reply {
			return []Reply{{Text: []string{"I will remember banana."}}, {Text: []string{"The word was banana."}}}
		},
		turns: [][]string{{"-p", "remember the word banana"}, {"-p", "what was the word?", "--resume", "{session}"}},
		check: func(t *testing.T, r *claudeRun) {
			first, second := r.result(t, 0), r.result(t, 1)
			if first["session_id"] != second["session_id"] {
				t.Errorf("resume changed the session id: %v -> %v", first["session_id"], second["session_id"])
			}
			reqs := r.a.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d main requests, want 2", len(reqs))
			}
			text := reqs[1].Text()
			for _, want := range []string{"remember the word banana", "I will remember banana.", "what was the word?"} {
				if !strings.Contains(text, want) {
					t.Errorf("the resumed request lacks %q", want)
				}
			}
			if turns := reqs[1].Turns(); !slices.Contains(turns, "assistant") {
				t.Errorf("the resumed request's turns: %v", turns)
			}
		},
	},
	{
		name:    "api_error",
		replies: func(string) []Reply { return []Reply{{Status: 401, Message: "invalid x-api-key"}} },
		turns:   [][]string{{"-p", "hello"}},
		check: func(t *testing.T, r *claudeRun) {
			res := r.result(t, 0)
			if res["is_error"] != true || res["api_error_status"] != 401.0 {
				t.Errorf("result %v", res)
			}
			if r.errs[0] == nil {
				t.Error("exit status 0 on an API error")
			}
			if n := len(r.a.Requests()); n != 1 {
				t.Errorf("%d requests: a 401 was retried", n)
			}
		},
	},
	{
		name: "retry",
		replies: func(string) []Reply {
			return []Reply{{Status: 529, Message: "Overloaded"}, {Text: []string{"Back again."}}}
		},
		turns: [][]string{{"-p", "hello"}},
		env:   []string{"CLAUDE_CODE_MAX_RETRIES=1"},
		check: func(t *testing.T, r *claudeRun) {
			retries := 0
			for _, e := range r.events(t, 0) {
				if e["type"] == "system" && e["subtype"] == "api_retry" {
					retries++
				}
			}
			if res := r.result(t, 0); retries != 1 || res["is_error"] != false || res["result"] != "Back again." {
				t.Errorf("%d retries, result %v", retries, res)
			}
		},
	},
	{
		name:    "unknown_resume",
		replies: func(string) []Reply { return nil },
		turns:   [][]string{{"-p", "hello", "--resume", unknownSession}},
		check: func(t *testing.T, r *claudeRun) {
			events := r.events(t, 0)
			if len(events) != 1 || events[0]["subtype"] != "error_during_execution" || events[0]["is_error"] != true {
				t.Errorf("events %v", events)
			}
			if r.errs[0] == nil {
				t.Error("exit status 0")
			}
		},
	},
}

// runClaudeScenario runs sc's turns with the real CLI against a fresh
// fake, each with a private HOME, a temp workdir and stdin closed.
func runClaudeScenario(t *testing.T, sc claudeScenario) *claudeRun {
	t.Helper()
	cli := CLIPath(t, "claude")
	r := &claudeRun{home: Home(t), dir: t.TempDir()}
	r.a = NewAnthropic(t, sc.replies(r.dir)...)
	marker, alive := ProcessMarker(t)
	for i, args := range sc.turns {
		args = slices.Clone(args)
		for j := range args {
			args[j] = strings.NewReplacer("{session}", r.session, "{dir}", r.dir).Replace(args[j])
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, cli, append(args, "--output-format", "stream-json", "--verbose", "--include-partial-messages")...)
		cmd.Dir = r.dir
		cmd.Env = append(append(ClaudeEnv(t, r.a, r.home), marker), sc.env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		start := time.Now()
		out, err := cmd.Output()
		cancel()
		t.Logf("turn %d took %v (exit: %v)", i, time.Since(start).Round(time.Millisecond), err)
		if stderr.Len() > 0 {
			t.Logf("stderr: %s", stderr.Bytes())
		}
		r.outs = append(r.outs, out)
		r.errs = append(r.errs, err)
		for _, e := range r.events(t, i) {
			if id := str(e["session_id"]); id != "" {
				r.session = id
			}
		}
	}
	if pids := alive(); len(pids) > 0 {
		t.Errorf("processes left running: %v", pids)
	}
	return r
}

func TestClaudeAgainstFake(t *testing.T) {
	for _, sc := range claudeScenarios {
		t.Run(sc.name, func(t *testing.T) {
			r := runClaudeScenario(t, sc)
			sc.check(t, r)
		})
	}
}

// projectDirRE is the encoding of a workdir in ~/.claude/projects: every
// character outside [A-Za-z0-9] becomes "-".
var projectDirRE = regexp.MustCompile(`[^A-Za-z0-9]`)

// TestClaudeTranscriptPath checks where the CLI keeps a session's
// transcript: ~/.claude/projects/<encoded realpath of cwd>/<id>.jsonl,
// even when started in a symlink to the workdir.
func TestClaudeTranscriptPath(t *testing.T) {
	cli := CLIPath(t, "claude")
	home, base := Home(t), t.TempDir()
	real := filepath.Join(base, "My proj_v1.2 é")
	link := filepath.Join(base, "link")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	a := NewAnthropic(t, Reply{Text: []string{"ok"}})
	cmd := exec.Command(cli, "-p", "hello", "--output-format", "stream-json", "--verbose")
	cmd.Dir = link
	cmd.Env = append(ClaudeEnv(t, a, home), "PWD="+link)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	r := &claudeRun{outs: [][]byte{out}}
	session := str(r.result(t, 0)["session_id"])
	realDir, err := filepath.EvalSymlinks(real)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(home, ".claude", "projects", projectDirRE.ReplaceAllString(realDir, "-"), session+".jsonl")
	if _, err := os.Stat(path); err != nil {
		matches, _ := filepath.Glob(filepath.Join(home, ".claude", "projects", "*", "*.jsonl"))
		t.Fatalf("transcript not at %s: %v; found %v", path, err, matches)
	}
}

// TestCaptureClaude records the real CLI's stdout for every scenario into
// testdata/claude/<scenario>.jsonl (the last turn, as-is), and the
// transcript of the resume scenario into
// testdata/claude/transcript_sample.jsonl, for the parser's golden tests:
//
//	go test ./plugins/plugintest -run TestCaptureClaude -capture
func TestCaptureClaude(t *testing.T) {
	if !*capture {
		t.Skip("run with -capture to record the real CLI's streams")
	}
	outDir := filepath.Join(ModuleRoot(), "testdata", "claude")
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, sc := range claudeScenarios {
		t.Run(sc.name, func(t *testing.T) {
			r := runClaudeScenario(t, sc)
			sc.check(t, r)
			if t.Failed() {
				return
			}
			if err := os.WriteFile(filepath.Join(outDir, sc.name+".jsonl"), r.outs[len(r.outs)-1], 0o644); err != nil {
				t.Fatal(err)
			}
			if sc.name == "resume" {
				matches, _ := filepath.Glob(filepath.Join(r.home, ".claude", "projects", "*", r.session+".jsonl"))
				if len(matches) != 1 {
					t.Fatalf("transcript of %s: %v", r.session, matches)
				}
				b, err := os.ReadFile(matches[0])
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(outDir, "transcript_sample.jsonl"), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
