package core

import (
	"regexp"
	"slices"
	"strings"
)

// Redacted replaces a secret wherever one is blanked out.
const Redacted = "[REDACTED]"

// MinSecret is the shortest value treated as a secret: blanking out "1"
// or "true" everywhere would garble the text and protect nothing.
const MinSecret = 6

// secretName matches the names of variables that hold credentials:
// DISCORD_TOKEN, SLACK_BOT_TOKEN, ANTHROPIC_API_KEY, OPENAI_API_KEY,
// SLACK_SIGNING_SECRET, ... A count of tokens (BUDGET_USER_DAILY_TOKENS)
// is not one: a plural TOKENS does not match.
var secretName = regexp.MustCompile(`(?i)(TOKEN(?:$|[^S])|SECRET|PASSWORD|PASSWD|API_?KEY|PRIVATE_KEY|CREDENTIAL)`)

// SecretName reports whether a variable's name says it holds a credential
// (TOKEN, SECRET, PASSWORD, API_KEY, PRIVATE_KEY, CREDENTIAL...).
func SecretName(name string) bool { return secretName.MatchString(name) }

// Redactor blanks known secret values (the bot's tokens, API keys) out of
// text. The nil Redactor changes nothing. It is safe for concurrent use.
type Redactor struct {
	secrets []string // longest first, so a secret holding another goes whole
}

// NewRedactor returns a redactor for the secrets at least MinSecret
// bytes long, or nil when there is none.
func NewRedactor(secrets []string) *Redactor {
	var keep []string
	for _, s := range secrets {
		if len(s) >= MinSecret && !slices.Contains(keep, s) {
			keep = append(keep, s)
		}
	}
	if len(keep) == 0 {
		return nil
	}
	slices.SortFunc(keep, func(a, b string) int { return len(b) - len(a) })
	return &Redactor{secrets: keep}
}

// Longest is the length of the longest secret, 0 for none: a text cut in
// parts holds no secret if no part does with that much of its neighbours.
func (r *Redactor) Longest() int {
	if r == nil {
		return 0
	}
	return len(r.secrets[0])
}

// Redact returns s with every secret replaced by Redacted.
func (r *Redactor) Redact(s string) string {
	if r == nil {
		return s
	}
	for _, secret := range r.secrets {
		if strings.Contains(s, secret) {
			s = strings.ReplaceAll(s, secret, Redacted)
		}
	}
	return s
}

// hold splits streamed text into what may be shown now, redacted, and
// its end that may yet become a secret (the beginning of one), to hold
// back until more text decides: an edit must not show a secret's first
// half while the second is on its way.
func (r *Redactor) hold(text string) (show, held string) {
	if r == nil {
		return text, ""
	}
	text = r.Redact(text)
	n := 0
	for _, secret := range r.secrets {
		n = max(n, beginsAtEnd(text, secret))
	}
	return text[:len(text)-n], text[len(text)-n:]
}

// beginsAtEnd returns the length of the longest end of text that is the
// beginning of secret, shorter than it (a whole one is redacted).
func beginsAtEnd(text, secret string) int {
	for i := max(0, len(text)-len(secret)+1); i < len(text); i++ {
		j := strings.IndexByte(text[i:], secret[0])
		if j < 0 {
			return 0
		}
		i += j
		if strings.HasPrefix(secret, text[i:]) {
			return len(text) - i
		}
	}
	return 0
}

// redactBlock returns b with the secrets blanked out of its text.
func (r *Redactor) redactBlock(b ResponseBlock) ResponseBlock {
	if r != nil {
		b.Text, b.Detail, b.Path = r.Redact(b.Text), r.Redact(b.Detail), r.Redact(b.Path)
	}
	return b
}

// redactBlocks returns blocks with the secrets blanked out of their text,
// sharing blocks that hold none.
func (r *Redactor) redactBlocks(blocks []ResponseBlock) []ResponseBlock {
	if r == nil {
		return blocks
	}
	var out []ResponseBlock
	for i, b := range blocks {
		clean := r.redactBlock(b)
		if clean == b {
			if out != nil {
				out = append(out, b)
			}
			continue
		}
		if out == nil {
			out = append(make([]ResponseBlock, 0, len(blocks)), blocks[:i]...)
		}
		out = append(out, clean)
	}
	if out == nil {
		return blocks
	}
	return out
}
