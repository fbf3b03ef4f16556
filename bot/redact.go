package bot

import (
	"bytes"
	"io"
	"regexp"
	"sort"
	"sync"
)

// secretName matches the names of variables that hold credentials:
// DISCORD_TOKEN, SLACK_BOT_TOKEN, ANTHROPIC_API_KEY, OPENAI_API_KEY,
// SLACK_SIGNING_SECRET, ...
var secretName = regexp.MustCompile(`(?i)(TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|PRIVATE_KEY|CREDENTIAL)`)

// minSecret is the shortest value treated as a secret: blanking out
// "1" or "true" everywhere would garble the logs and protect nothing.
const minSecret = 6

// secretValues returns the values of secret-looking variables, longest
// first (so a secret containing another is blanked whole).
func secretValues(vars map[string]string) []string {
	var out []string
	for k, v := range vars {
		if len(v) >= minSecret && secretName.MatchString(k) {
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// redactor is a writer that blanks out secrets before passing each write
// on. slog and the audit log write one whole line per call, so a secret is
// never split across writes. It is safe for concurrent use.
type redactor struct {
	mu      sync.Mutex
	w       io.Writer
	secrets [][]byte
}

func newRedactor(w io.Writer, secrets []string) io.Writer {
	if len(secrets) == 0 {
		return w
	}
	r := &redactor{w: w}
	for _, s := range secrets {
		r.secrets = append(r.secrets, []byte(s))
	}
	return r
}

var redacted = []byte("[REDACTED]")

func (r *redactor) Write(p []byte) (int, error) {
	out := p
	for _, s := range r.secrets {
		if bytes.Contains(out, s) {
			out = bytes.ReplaceAll(out, s, redacted)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
