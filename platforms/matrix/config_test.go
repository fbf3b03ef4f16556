package matrix

import (
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	ok := Config{Homeserver: "https://matrix.example.org/", UserID: "@jakebot:example.org", AccessToken: "syt_abc",
		AllowedUsers: []string{"@alice:example.org", "*"}}
	for _, tc := range []struct {
		name   string
		change func(*Config)
		want   string // in the error; empty: valid
	}{
		{"valid", func(*Config) {}, ""},
		{"no token", func(c *Config) { c.AccessToken = "" }, "MATRIX_ACCESS_TOKEN"},
		{"no homeserver", func(c *Config) { c.Homeserver = "" }, "MATRIX_HOMESERVER"},
		{"homeserver without scheme", func(c *Config) { c.Homeserver = "matrix.example.org" }, "MATRIX_HOMESERVER"},
		{"user without @", func(c *Config) { c.UserID = "jakebot:example.org" }, "MATRIX_USER_ID"},
		{"user without server", func(c *Config) { c.UserID = "@jakebot" }, "MATRIX_USER_ID"},
		{"allowed user not an id", func(c *Config) { c.AllowedUsers = []string{"alice"} }, `"alice"`},
		{"negative interval", func(c *Config) { c.EditInterval = -1 }, "negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.change(&c)
			err := c.Validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Validate() = %v, want an error naming %q", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "syt_abc") {
				t.Errorf("Validate() = %v echoes the token", err)
			}
		})
	}
	if s := ok.String(); strings.Contains(s, "syt_abc") {
		t.Errorf("String() = %q shows the token", s)
	}
}
