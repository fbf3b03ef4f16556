package core_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jake-bot/jake-bot/core"
)

func TestParseCommand(t *testing.T) {
	t.Parallel()
	plugins := []string{"claude", "codex"}
	tests := []struct {
		in      string
		want    core.Command
		wantErr string
	}{
		{"/help", core.Command{Name: core.CmdHelp}, ""},
		{"  /HELP  ", core.Command{Name: core.CmdHelp}, ""},
		{"/claude start", core.Command{Name: core.CmdStart, Plugin: "claude"}, ""},
		{"/claude start ~/my project", core.Command{Name: core.CmdStart, Plugin: "claude", Arg: "~/my project"}, ""},
		{"/codex conversations", core.Command{Name: core.CmdConversations, Plugin: "codex"}, ""},
		{"/claude resume abc123", core.Command{Name: core.CmdResume, Plugin: "claude", Arg: "abc123"}, ""},
		{"/resume", core.Command{Name: core.CmdResume}, ""},
		{"/resume 3", core.Command{Name: core.CmdResume, Arg: "3"}, ""},
		{"/conversation end", core.Command{Name: core.CmdEnd}, ""},
		{"/end", core.Command{Name: core.CmdEnd}, ""},
		{"/status", core.Command{Name: core.CmdStatus}, ""},
		{"/status all", core.Command{Name: core.CmdStatus, Arg: "all"}, ""},
		{"/stop", core.Command{Name: core.CmdStop}, ""},
		{"/workdir", core.Command{Name: core.CmdWorkdir}, ""},
		{"/workdir set ../x", core.Command{Name: core.CmdWorkdirSet, Arg: "../x"}, ""},
		{"/bogus", core.Command{}, "unknown command /bogus"},
		{"/gemini start", core.Command{}, "unknown command /gemini"},
		{"/claude", core.Command{}, "usage: /claude start"},
		{"/claude frobnicate", core.Command{}, "usage: /claude start"},
		{"/claude resume ; rm -rf ~", core.Command{}, "usage: /claude resume <id>"},
		{"/claude conversations extra", core.Command{}, "usage: /claude conversations"},
		{"/conversation", core.Command{}, "usage: /conversation end"},
		{"/workdir set", core.Command{}, "usage: /workdir set <path>"},
		{"/stop now", core.Command{}, "usage: /stop"},
		{"/status everything", core.Command{}, "usage: /status [all]"},
		{"/resume a b", core.Command{}, "usage: /resume [id]"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := core.ParseCommand(tt.in, plugins)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(core.UserMessage(err), tt.wantErr) {
					t.Fatalf("ParseCommand(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseCommand(%q) error = %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseCommand(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{"/help", "/claude start ~/x", "/claude resume ; rm -rf ~", "/workdir set ../../etc", "/\x00", "/resume \xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := core.ParseCommand(s, []string{"claude"})
		if err == nil && c.Name == "" {
			t.Fatalf("ParseCommand(%q) = %+v with no name and no error", s, c)
		}
		if err != nil && core.UserMessage(err) == "" {
			t.Fatalf("ParseCommand(%q): empty user message", s)
		}
	})
}
