package configured_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/configured"
)

// taken refuses the built-in plugins and the router's command words, as
// the bot does.
func taken(id string) string {
	switch {
	case id == "claude":
		return "a built-in plugin has it"
	case core.IsReserved(id):
		return "it is the /" + id + " command"
	}
	return ""
}

func TestLoadExample(t *testing.T) {
	t.Parallel()
	specs, err := configured.Load("testdata/plugins.yaml", configured.Options{Taken: taken, SkipLookPath: true})
	if err != nil {
		t.Fatalf("Load(example) = %v", err)
	}
	var got []string
	for _, s := range specs {
		got = append(got, s.ID+" "+string(s.Mode)+" "+s.Source)
	}
	want := []string{"aider pty testdata/plugins.yaml:10", "opencode jsonl testdata/plugins.yaml:19", "qwen_json jsonl testdata/plugins.yaml:33", "qwen acp testdata/plugins.yaml:51", "opencode_acp acp testdata/plugins.yaml:67"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("example plugins (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"~/.qwen"}, specs[3].State); diff != "" {
		t.Errorf("qwen's state (-want +got):\n%s", diff)
	}
	turn := core.Turn{Prompt: "fix the tests", Workdir: "/src", SessionID: "ses_1"}
	for _, tt := range []struct {
		spec int
		turn core.Turn
		want []string
	}{
		{0, turn, []string{"--yes-always", "--no-auto-commits", "--no-check-update", "--no-show-model-warnings", "--message", "fix the tests"}},
		{1, turn, []string{"run", "--format", "json", "--session", "ses_1", "--", "fix the tests"}},
		{1, core.Turn{Prompt: "-rf /"}, []string{"run", "--format", "json", "--", "-rf /"}},
		{2, core.Turn{Prompt: "--help me"}, []string{"--output-format", "stream-json", "--prompt", " --help me"}},
		{2, core.Turn{Prompt: "it's \"quoted\"; $(rm -rf ~)", SessionID: "abc"},
			[]string{"--output-format", "stream-json", "--resume", "abc", "--prompt", "it's \"quoted\"; $(rm -rf ~)"}},
		// The message and the session go over the protocol.
		{3, turn, []string{"--acp"}},
	} {
		if got := specs[tt.spec].Argv(tt.turn); !cmp.Equal(got, tt.want) {
			t.Errorf("%s Argv(%+v) = %q, want %q", specs[tt.spec].ID, tt.turn, got, tt.want)
		}
	}
	if !cmp.Equal(specs[3].SafeModes, []string{"plan"}) || specs[4].SafeModes != nil {
		t.Errorf("safe modes: qwen %q, opencode %q; want plan and none", specs[3].SafeModes, specs[4].SafeModes)
	}
	if specs[3].ReadOnlyMode != "plan" || specs[4].ReadOnlyMode != "" {
		t.Errorf("read-only modes: qwen %q, opencode %q; want plan and none", specs[3].ReadOnlyMode, specs[4].ReadOnlyMode)
	}
	if specs[0].KeepsSessions() || !specs[1].KeepsSessions() || !specs[3].KeepsSessions() {
		t.Errorf("KeepsSessions: aider %v, opencode %v; want false, true", specs[0].KeepsSessions(), specs[1].KeepsSessions())
	}
}

func TestLoadRejectsBadConfiguration(t *testing.T) {
	t.Parallel()
	const entry = "plugins:\n  - id: x\n    bin: sh\n    mode: plain\n"
	tests := []struct {
		name, yaml string
		want       []string // each a "line: message" substring of an error
	}{
		{"unknown mode", "plugins:\n  - id: x\n    bin: sh\n    args: ['{message}']\n    mode: tty\n",
			[]string{":5: unknown mode \"tty\": want jsonl, plain, pty or acp"}},
		{"acp with a placeholder", "plugins:\n  - id: x\n    bin: sh\n    args: ['{message}']\n    mode: acp\n",
			[]string{`:4: args: "{message}": mode acp takes no placeholders`}},
		{"acp with resume", "plugins:\n  - id: x\n    bin: sh\n    mode: acp\n    resume: 'id: (\\S+)'\n",
			[]string{":5: `resume:` is for plain and pty modes; in mode acp the agent gives the session id"}},
		{"missing mode", "plugins:\n  - id: x\n    bin: sh\n    args: ['{message}']\n",
			[]string{":2: plugin \"x\": missing mode"}},
		{"missing binary", "plugins:\n  - id: x\n    bin: jakebot-no-such-cli\n    args: ['{message}']\n    mode: plain\n",
			[]string{`:3: bin "jakebot-no-such-cli": not found`}},
		{"missing binary by relative path", "plugins:\n  - id: x\n    bin: ./bin/nothing\n    args: ['{message}']\n    mode: plain\n",
			[]string{`/bin/nothing": not found`}},
		{"duplicate id", entry + "    args: ['{message}']\n  - id: x\n    bin: sh\n    mode: plain\n    args: ['{message}']\n",
			[]string{`:6: duplicate id "x" (first defined at line 2)`}},
		{"built-in id", "plugins:\n  - id: claude\n    bin: sh\n    args: ['{message}']\n    mode: plain\n",
			[]string{`:2: id "claude" is taken: a built-in plugin has it`}},
		{"reserved id", "plugins:\n  - id: status\n    bin: sh\n    args: ['{message}']\n    mode: plain\n",
			[]string{`:2: id "status" is taken: it is the /status command`}},
		{"id not a command word", "plugins:\n  - id: My-CLI\n    bin: sh\n    args: ['{message}']\n    mode: plain\n",
			[]string{`:2: id "My-CLI": want a lowercase letter`}},
		{"placeholder in a quoted string", entry + "    args: [-c, \"'{message}'\"]\n",
			[]string{`:5: args: "'{message}'" puts a placeholder inside a larger or quoted string`}},
		{"placeholder in a larger string", entry + "    args: ['--prompt={message}']\n",
			[]string{`:5: args: "--prompt={message}" puts a placeholder inside`}},
		{"unknown placeholder", entry + "    args: ['{prompt}']\n",
			[]string{`:5: args: unknown placeholder {prompt}`, `:5: args: want {message} exactly once`}},
		{"no message", entry + "    args: [--version]\n", []string{`:5: args: want {message} exactly once`}},
		{"message twice", entry + "    args: ['{message}', '{message}']\n", []string{`(found 2)`}},
		{"resume outside a group", entry + "    resume: 'id: (\\S+)'\n    args: ['{message}', --resume, '{resume}']\n",
			[]string{`:6: {resume} must be in an optional group`}},
		{"resume with no way to find it", entry + "    args: ['{message}', [--resume, '{resume}']]\n",
			[]string{`:5: args use {resume} but nothing finds the session id`}},
		{"session found but never passed", entry + "    resume: 'id: (\\S+)'\n    args: ['{message}']\n",
			[]string{`:6: the session id is found but args have no {resume}`}},
		{"resume regex without a group", entry + "    resume: 'id: \\S+'\n    args: ['{message}']\n",
			[]string{`:5: resume "id: \\S+": want exactly one capture group`}},
		{"bad resume regex", entry + "    resume: 'id: ((\\S+)'\n    args: ['{message}']\n", []string{`:5: resume: error parsing regexp`}},
		{"jsonl without a mapping", "plugins:\n  - id: x\n    bin: sh\n    mode: jsonl\n    args: ['{message}']\n",
			[]string{`:4: mode jsonl needs a ` + "`jsonl:`" + ` mapping`}},
		{"jsonl without text", "plugins:\n  - id: x\n    bin: sh\n    mode: jsonl\n    args: ['{message}']\n    jsonl:\n      session: id\n",
			[]string{`:7: jsonl: needs text`}},
		{"bad path", "plugins:\n  - id: x\n    bin: sh\n    mode: jsonl\n    args: ['{message}']\n    jsonl:\n      text: a..b\n",
			[]string{`:7: jsonl.text "a..b": want a dotted path`}},
		{"unknown key", entry + "    args: ['{message}']\n    shell: true\n", []string{`:6: plugin entry: unknown key "shell"`}},
		{"safe modes outside acp mode", entry + "    args: ['{message}']\n    safe_modes: [plan]\n", []string{":6: `safe_modes:` is for mode acp"}},
		{"read-only mode outside acp mode", entry + "    args: ['{message}']\n    read_only_mode: plan\n",
			[]string{":6: `read_only_mode:` is for mode acp: no other mode can keep an agent from writing"}},
		{"terminal outside pty mode", entry + "    args: ['{message}']\n    terminal: {cols: 80}\n", []string{":6: `terminal:` is for mode pty"}},
		{"not yaml", "plugins: [\n", []string{`:1: did not find expected node content`}},
		{"no plugins list", "plugin:\n  - id: x\n", []string{`:1: the top level: unknown key "plugin"`, `:1: want a top-level`}},
		{"every mistake is reported", "plugins:\n  - id: x\n    bin: sh\n    mode: tty\n    args: ['{message}']\n  - id: help\n    bin: sh\n    mode: plain\n    args: ['{message}']\n",
			[]string{`:4: unknown mode`, `:6: id "help" is taken`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), "plugins.yaml")
			if err := os.WriteFile(file, []byte(tt.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			specs, err := configured.Load(file, configured.Options{Taken: taken})
			if err == nil {
				t.Fatalf("Load(%q) = %d plugins and no error", tt.yaml, len(specs))
			}
			var ce *configured.ConfigError
			if !errors.As(err, &ce) || ce.File != file {
				t.Errorf("Load error %v is not a ConfigError naming %s", err, file)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), file+w) && !strings.Contains(err.Error(), w) {
					t.Errorf("Load error:\n%v\nwant it to contain %q", err, file+w)
				}
			}
		})
	}
}

func TestLoadEmptyFile(t *testing.T) {
	t.Parallel()
	specs, err := configured.Parse("empty.yaml", []byte("# nothing yet\n"), configured.Options{})
	if err != nil || len(specs) != 0 {
		t.Fatalf("Parse(empty) = %v, %v; want nothing", specs, err)
	}
}
