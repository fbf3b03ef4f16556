package cliproc_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jake-bot/jake-bot/plugins/cliproc"
)

func TestStateDirFind(t *testing.T) {
	t.Parallel()
	codex := cliproc.StateDir{Var: "CODEX_HOME", Dot: ".codex"}
	gemini := cliproc.StateDir{Var: "GEMINI_CLI_HOME", Dot: ".gemini", VarIsHome: true}
	tests := []struct {
		name       string
		dir        cliproc.StateDir
		configured string
		env        map[string]string
		want       string // "" wants an error
	}{
		{"the home's dot folder", codex, "", map[string]string{"HOME": "/home/u"}, "/home/u/.codex"},
		{"the variable names the folder", codex, "", map[string]string{"HOME": "/home/u", "CODEX_HOME": "/srv/c"}, "/srv/c"},
		{"configured wins over the variable", codex, "/cfg", map[string]string{"HOME": "/home/u", "CODEX_HOME": "/srv/c"}, "/cfg"},
		{"the variable needs no HOME", codex, "", map[string]string{"CODEX_HOME": "/srv/c"}, "/srv/c"},
		{"configured needs no HOME", codex, "/cfg", nil, "/cfg"},
		{"nothing set", codex, "", nil, ""},
		{"a home variable: the home's dot folder", gemini, "", map[string]string{"HOME": "/home/u"}, "/home/u/.gemini"},
		{"a home variable: the dot folder in it", gemini, "", map[string]string{"HOME": "/home/u", "GEMINI_CLI_HOME": "/srv/g"}, "/srv/g/.gemini"},
		{"a home variable: configured wins", gemini, "/cfg", map[string]string{"HOME": "/home/u", "GEMINI_CLI_HOME": "/srv/g"}, "/cfg/.gemini"},
		{"a home variable needs no HOME", gemini, "", map[string]string{"GEMINI_CLI_HOME": "/srv/g"}, "/srv/g/.gemini"},
		{"a home variable: nothing set", gemini, "", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			getenv := func(k string) string { return tt.env[k] }
			got, err := tt.dir.Find(tt.configured, getenv)
			if got != tt.want || (err != nil) != (tt.want == "") {
				t.Errorf("%+v.Find(%q) = %q, %v; want %q", tt.dir, tt.configured, got, err, tt.want)
			}
			if tt.configured != "" {
				return // Whole, a StateFunc, reads only the CLI's environment
			}
			var want []cliproc.StatePath
			if tt.want != "" {
				want = []cliproc.StatePath{{Path: tt.want}}
			}
			if diff := cmp.Diff(want, tt.dir.Whole(getenv, "/work")); diff != "" {
				t.Errorf("%+v.Whole (-want +got):\n%s", tt.dir, diff)
			}
		})
	}
}
