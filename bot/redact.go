package bot

import (
	"io"
	"sync"

	"github.com/jake-bot/jake-bot/core"
)

// secretValues returns the values of secret-looking variables.
func secretValues(vars map[string]string) []string {
	var out []string
	for k, v := range vars {
		if len(v) >= core.MinSecret && core.SecretName(k) {
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
