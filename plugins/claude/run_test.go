package claude_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/claude"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

func TestArgs(t *testing.T) {
	t.Parallel()
	p := claude.New(claude.Config{PermissionMode: "acceptEdits", Model: "sonnet", Args: []string{"--max-turns", "3"}}, nil)
	got := p.Args(core.Turn{Prompt: "--help me; rm -rf ~", ResumeToken: "0b0b0b0b-0b0b-4b0b-8b0b-0b0b0b0b0b0b"})
	want := []string{"-p", "--output-format", "stream-json", "--verbose", "--include-partial-messages",
		"--resume", "0b0b0b0b-0b0b-4b0b-8b0b-0b0b0b0b0b0b", "--permission-mode", "acceptEdits", "--model", "sonnet",
		"--max-turns", "3", "--", "--help me; rm -rf ~"}
	if !slices.Equal(got, want) {
		t.Fatalf("Args = %q\nwant   %q", got, want)
	}
}

func TestCheckResumeID(t *testing.T) {
	t.Parallel()
	p := claude.New(claude.Config{}, nil)
	for id, ok := range map[string]bool{
		"1ce8f0c3-3b99-4530-a951-2990725e4bdf": true,
		"; rm -rf ~":                           false,
		"--dangerously-skip-permissions":       false,
		"":                                     false,
	} {
		if err := p.CheckResumeID(id); (err == nil) != ok {
			t.Errorf("CheckResumeID(%q) = %v", id, err)
		}
	}
}

// TestRunStreamsAndLists runs the real CLI: the reply arrives as several
// text events, the session id is reported, and the listing finds it.
func TestRunStreamsAndLists(t *testing.T) {
	t.Parallel()
	bin := plugintest.CLIPath(t, "claude")
	model := plugintest.NewAnthropic(t, plugintest.Reply{Text: []string{"one ", "two ", "three"}})
	home := plugintest.Home(t)
	mark, alive := plugintest.ProcessMarker(t)
	workdir, _ := filepath.EvalSymlinks(t.TempDir())
	p := claude.New(claude.Config{Bin: bin, ConfigDir: filepath.Join(home, ".claude"),
		Env: append(plugintest.ClaudeEnv(t, model, home), mark)}, nil)

	var texts []string
	var session string
	res, err := p.Run(context.Background(), core.Turn{Workdir: workdir, Prompt: "count to three"}, func(ev core.Event) {
		switch ev.Kind {
		case core.EventText:
			texts = append(texts, ev.Text)
		case core.EventSession:
			session = ev.ResumeToken
		}
	})
	if err != nil || res.IsError {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if strings.Join(texts, "") != "one two three" || len(texts) < 3 {
		t.Errorf("text events = %q, want the reply streamed in pieces", texts)
	}
	if session == "" || res.ResumeToken != session {
		t.Errorf("session event %q, result token %q: want the same non-empty id", session, res.ResumeToken)
	}
	if pids := alive(); len(pids) != 0 {
		t.Errorf("processes %v outlived the turn", pids)
	}
	convs, err := p.Conversations(context.Background(), workdir)
	if err != nil {
		t.Fatal(err)
	}
	if len(convs) != 1 || convs[0].ID != session || convs[0].Title != "count to three" {
		t.Fatalf("Conversations = %+v, want the session titled by its prompt", convs)
	}
	if other, _ := p.Conversations(context.Background(), t.TempDir()); len(other) != 0 {
		t.Errorf("another workdir lists %+v, want nothing", other)
	}
}
