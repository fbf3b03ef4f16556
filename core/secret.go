package core

import "log/slog"

// Secret is a string that never prints: fmt, log/slog and encoders show
// it redacted (and an empty one empty), so a logged configuration does
// not leak a token.
type Secret string

func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return Redacted
}

// GoString keeps %#v from printing the secret.
func (s Secret) GoString() string { return `"` + s.String() + `"` }

// LogValue keeps slog from printing the secret.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalText keeps encoders (JSON, YAML) from printing the secret.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }
