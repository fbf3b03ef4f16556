package doctor_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fakeSlack answers auth.test and apps.connections.open as Slack does:
// HTTP 200 with ok false for a token it refuses.
func fakeSlack(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		var resp map[string]any
		switch {
		case r.Method != http.MethodPost:
			http.Error(w, "want POST", http.StatusMethodNotAllowed)
			return
		case strings.Contains(tok, "revoked"):
			resp = map[string]any{"ok": false, "error": "invalid_auth"}
		case r.URL.Path == "/api/auth.test" && strings.HasPrefix(tok, "xoxb-"):
			resp = map[string]any{"ok": true, "team": "Acme", "user": "jakebot"}
		case r.URL.Path == "/api/apps.connections.open" && strings.HasPrefix(tok, "xapp-"):
			resp = map[string]any{"ok": true, "url": "wss://example.invalid/link?ticket=secret"}
		default:
			resp = map[string]any{"ok": false, "error": "not_allowed_token_type"}
		}
		json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(srv.Close)
	return srv
}
