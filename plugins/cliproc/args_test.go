package cliproc_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jake-bot/jake-bot/plugins/cliproc"
)

func TestArgsUnmarshalText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    cliproc.Args
		wantErr bool
	}{
		{"empty", "", nil, false},
		{"only spaces", "  \t ", nil, false},
		{"plain words", "--max-turns 3 --verbose", cliproc.Args{"--max-turns", "3", "--verbose"}, false},
		{"runs of spaces", "  -a   b\t-c ", cliproc.Args{"-a", "b", "-c"}, false},
		{"double quotes", `--allowedTools "Bash(git log:*)" --verbose`, cliproc.Args{"--allowedTools", "Bash(git log:*)", "--verbose"}, false},
		{"single quotes", `-c 'model="o3"'`, cliproc.Args{"-c", `model="o3"`}, false},
		{"quotes inside a word", `--flag="a b"c`, cliproc.Args{"--flag=a bc"}, false},
		{"escaped space", `a\ b c`, cliproc.Args{"a b", "c"}, false},
		{"empty quoted word", `a "" b`, cliproc.Args{"a", "", "b"}, false},
		{"mid-word hash is literal", "-c x=#1", cliproc.Args{"-c", "x=#1"}, false},
		{"quoted hash", `--title '#1' "#2" \#3`, cliproc.Args{"--title", "#1", "#2", "#3"}, false},
		{"word starting with hash", "--verbose #why --deny Bash", nil, true},
		{"lone hash", "a # b", nil, true},
		{"unbalanced double quote", `--allowedTools "Bash(git log:*)`, nil, true},
		{"unbalanced single quote", `-c 'x`, nil, true},
		{"trailing backslash", `a \`, nil, true},
		{"trailing backslash in a word", `a b\`, nil, true},
		{"escapes in double quotes", `"a\"b\$c\q\\"`, cliproc.Args{`a"b$c\q\`}, false},
		{"backslash in single quotes", `'a\' b`, cliproc.Args{`a\`, "b"}, false},
		{"escaped hash", `\#x`, cliproc.Args{"#x"}, false},
		{"globs, braces and tilde stay", `*.go {a,b} ~root/x ~`, cliproc.Args{"*.go", "{a,b}", "~root/x", "~"}, false},
		{"a lone dollar", `cost $ 5`, cliproc.Args{"cost", "$", "5"}, false},
		{"variable", `--dir $HOME`, nil, true},
		{"braced variable", `--dir ${HOME}/x`, nil, true},
		{"variable in double quotes", `--dir "$HOME"`, nil, true},
		{"command substitution", `--title $(id)`, nil, true},
		{"backquotes", "--title `id`", nil, true},
		{"arithmetic", `--max-turns $((1+2))`, nil, true},
		{"process substitution", `--file <(id)`, nil, true},
		{"ANSI-C quotes", `--sep $'\t'`, nil, true},
		{"operator", `--verbose; id`, nil, true},
		{"pipe", `--verbose | id`, nil, true},
		{"unquoted parentheses", `--allowedTools Bash(git log:*)`, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got cliproc.Args
			err := got.UnmarshalText([]byte(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("UnmarshalText(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("UnmarshalText(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}
