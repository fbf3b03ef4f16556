package bot

import (
	"io"
	"regexp"
	"sync"

	"github.com/jake-bot/jake-bot/core"
)

// secretName matches the names of variables that hold credentials:
// DISCORD_TOKEN, SLACK_BOT_TOKEN, ANTHROPIC_API_KEY, OPENAI_API_KEY,
// SLACK_SIGNING_SECRET, ... A count of tokens (BUDGET_USER_DAILY_TOKENS)
// is not one: a plural TOKENS does not match.
var secretName = regexp.MustCompile(`(?i)(TOKEN(?:$|[^S])|SECRET|PASSWORD|PASSWD|API_?KEY|PRIVATE_KEY|CREDENTIAL)`)

// secretValues returns the values of secret-looking variables.
func secretValues(vars map[string]string) []string {
	var out []string
	for k, v := range vars {
		if len(v) >= core.MinSecret && secretName.MatchString(k) {
			out = append(out, v)
		}
	}
	return out
}

// redactor is a writer that blanks out secrets before passing each write
// on. slog and the audit log write one whole line per call, so a secret is
// never split across writes. It is safe for concurrent use.
type redactor struct {
	mu sync.Mutex
	w  io.Writer
	r  *core.Redactor
}

func newRedactor(w io.Writer, secrets []string) io.Writer {
	r := core.NewRedactor(secrets)
	if r == nil {
		return w
	}
	return &redactor{w: w, r: r}
}

func (r *redactor) Write(p []byte) (int, error) {
	out := r.r.Redact(string(p))
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := io.WriteString(r.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}
