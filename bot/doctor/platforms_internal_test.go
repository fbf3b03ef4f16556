package doctor

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/platforms/mattermost/mattermosttest"
)

// The Discord check waits for its configuration to land in bot.Config;
// it is tested on its own meanwhile, like the others.

func has(t *testing.T, r Report, name string, s Status, detail string) {
	t.Helper()
	for _, c := range r.Checks {
		if c.Name == name && c.Status == s && strings.Contains(c.Detail, detail) {
			return
		}
	}
	var b strings.Builder
	r.Write(&b)
	t.Errorf("no check %q %s %q in:\n%s", name, s, detail, b.String())
}

func noSecret(t *testing.T, r Report, secret string) {
	t.Helper()
	var b strings.Builder
	r.Write(&b)
	if strings.Contains(b.String(), secret) {
		t.Errorf("the report prints the secret %q:\n%s", secret, b.String())
	}
}

func TestCheckDiscord(t *testing.T) {
	t.Parallel()
	good := base64.RawStdEncoding.EncodeToString([]byte("1234567890123456789")) + ".GhJkLm.abcdefghijklmnopqrstuvwxyz0123456789AB"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v10/users/@me" || r.Header.Get("Authorization") != "Bot "+good {
			w.WriteHeader(http.StatusUnauthorized)
			json.NewEncoder(w).Encode(map[string]any{"message": "401: Unauthorized", "code": 0})
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"id": "1234567890123456789", "username": "jakebot"})
	}))
	defer srv.Close()
	opts := Options{Online: true, HTTP: srv.Client()}.withDefaults()
	for _, tt := range []struct {
		name, token string
		users       []string
		roles       []string
		checks      [][3]string // name, status, detail
	}{
		{"good", "Bot " + good, []string{"42"}, nil, [][3]string{
			{"discord token", "ok", "DISCORD_TOKEN is set and well formed (bot id 1234567890123456789)"},
			{"discord allow-list", "ok", "1 users"},
			{"discord /users/@me", "ok", "accepted: jakebot (1234567890123456789)"}}},
		{"roles only", good, nil, []string{"r1", "r2"}, [][3]string{{"discord allow-list", "ok", "2 roles"}}},
		{"two parts", "abc.def", []string{"42"}, nil, [][3]string{{"discord token", "FAIL", "DISCORD_TOKEN is not a bot token: three parts separated by dots"}}},
		{"missing", "", []string{"42"}, nil, [][3]string{{"discord token", "FAIL", "DISCORD_TOKEN is not set"}}},
		{"nobody allowed", good, nil, nil, [][3]string{{"discord allow-list", "FAIL", "DISCORD_ALLOWED_USERS is empty"}}},
		{"refused", good[:len(good)-1] + "X", []string{"42"}, nil, [][3]string{{"discord /users/@me", "FAIL", "answered 401 Unauthorized"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var r Report
			checkDiscord(context.Background(), &r, discordSettings{Token: tt.token, APIURL: srv.URL + "/api/v10", Users: tt.users, Roles: tt.roles}, opts)
			for _, c := range tt.checks {
				has(t, r, c[0], statusNamed(c[1]), c[2])
			}
			noSecret(t, r, strings.SplitN(good, ".", 3)[2])
		})
	}
}

func TestCheckTelegram(t *testing.T) {
	t.Parallel()
	const good = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/bot"+good+"/getMe" {
			w.WriteHeader(http.StatusUnauthorized)
			json.NewEncoder(w).Encode(map[string]any{"ok": false, "error_code": 401, "description": "Unauthorized"})
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": map[string]any{"id": 123456789, "username": "jake_bot"}})
	}))
	endpoint := srv.URL + "/bot%s/%s"
	opts := Options{Online: true, HTTP: srv.Client()}.withDefaults()
	for _, tt := range []struct {
		name, token, endpoint string
		checks                [][3]string
	}{
		{"good", good, endpoint, [][3]string{
			{"telegram token", "ok", "TELEGRAM_TOKEN is set and well formed (bot id 123456789)"},
			{"telegram getMe", "ok", "accepted: @jake_bot"}}},
		{"no colon", "123456789AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw", endpoint, [][3]string{
			{"telegram token", "FAIL", "TELEGRAM_TOKEN is not digits, a colon, then the secret"}}},
		{"refused", "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsXX", endpoint, [][3]string{
			{"telegram getMe", "FAIL", "answered 401 Unauthorized"}}},
		// The token is in the URL: a transport error must not print it.
		{"unreachable", good, "http://127.0.0.1:1/bot%s/%s", [][3]string{
			{"telegram getMe", "FAIL", "GET 127.0.0.1:1"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var r Report
			checkTelegram(context.Background(), &r, telegramSettings{Token: tt.token, Endpoint: tt.endpoint, Users: []string{"7"}}, opts)
			for _, c := range tt.checks {
				has(t, r, c[0], statusNamed(c[1]), c[2])
			}
			noSecret(t, r, "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDs")
		})
	}
	srv.Close()
}

// The Mattermost checks against the fake server, which answers
// /api/v4/users/me as the server does: a token of the right form that the
// server refuses fails online, and the report never prints the token.
func TestCheckMattermost(t *testing.T) {
	t.Parallel()
	fake := mattermosttest.New(t)
	opts := Options{Online: true, HTTP: &http.Client{}}.withDefaults()
	for _, tt := range []struct {
		name, url, token string
		checks           [][3]string
	}{
		{"good", fake.URL, mattermosttest.Token, [][3]string{
			{"mattermost url", "ok", fake.URL},
			{"mattermost token", "ok", "MATTERMOST_TOKEN is set and well formed"},
			{"mattermost /users/me", "ok", "accepted: bot @jakebot (" + fake.Bot.ID + ")"}}},
		{"malformed", fake.URL, "not-a-token", [][3]string{
			{"mattermost token", "FAIL", "MATTERMOST_TOKEN is not a bot account's access token"}}},
		{"refused", fake.URL + "/", "abcdefghijklmnopqrstuvwxyz", [][3]string{
			{"mattermost /users/me", "FAIL", "answered 401 Unauthorized"}}},
		{"no url", "chat.example.com", mattermosttest.Token, [][3]string{
			{"mattermost url", "FAIL", "MATTERMOST_URL is not the server's http(s) address"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var r Report
			checkMattermost(context.Background(), &r, mattermostSettings{URL: tt.url, Token: tt.token, Users: []string{"u1"}}, opts)
			for _, c := range tt.checks {
				has(t, r, c[0], statusNamed(c[1]), c[2])
			}
			noSecret(t, r, mattermosttest.Token)
			noSecret(t, r, "abcdefghijklmnopqrstuvwxyz")
		})
	}
}

func TestCheckWritable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var r Report
	checkWritable(&r, "STATE_FILE", filepath.Join(dir, "state.json"), true)
	checkWritable(&r, "STATE_NEW_DIR", filepath.Join(dir, "new", "deeper", "state.json"), true)
	checkWritable(&r, "AUDIT_DIR", dir, false)
	checkWritable(&r, "AUDIT_LOG", filepath.Join(dir, "missing", "audit.log"), false)
	has(t, r, "STATE_FILE", OK, "state.json is writable")
	has(t, r, "STATE_NEW_DIR", OK, "is writable")
	has(t, r, "AUDIT_DIR", OK, "is writable")
	has(t, r, "AUDIT_LOG", Fail, "is not writable")
}

func statusNamed(s string) Status {
	for st := OK; st <= Skip; st++ {
		if st.String() == s {
			return st
		}
	}
	panic("unknown status " + s)
}
