package mattermosttest_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/jake-bot/jake-bot/platforms/mattermost/mattermosttest"
)

// call makes one REST call as the bot (or with token) and returns the
// status and the server's error id.
func call(t *testing.T, s *mattermosttest.Server, token, method, path string, body any) (int, string) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, s.URL+"/api/v4"+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e struct {
		ID string `json:"id"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&e)
	return resp.StatusCode, e.ID
}

// The fake refuses what the server refuses, loudly: a wrong token, a
// post over the size limit or under a reply, an edit of someone else's
// post, a reaction as someone else, ids not of Mattermost's form, a path
// or a method the API lacks.
func TestTheFakeEnforcesTheServersRules(t *testing.T) {
	t.Parallel()
	s := mattermosttest.New(t)
	alice := s.NewUser("alice")
	root := s.Say(t, alice, s.Channel, "", "hello")
	reply := s.Say(t, alice, s.Channel, root.ID, "in the thread")
	tok := mattermosttest.Token
	for _, tt := range []struct {
		name, token, method, path string
		body                      any
		status                    int
	}{
		{"wrong token", "x", "GET", "/users/me", nil, 401},
		{"a post", tok, "POST", "/posts", map[string]any{"channel_id": s.Channel, "message": "hi"}, 201},
		{"too long", tok, "POST", "/posts", map[string]any{"channel_id": s.Channel, "message": strings.Repeat("é", mattermosttest.MaxRunes+1)}, 400},
		{"at the limit", tok, "POST", "/posts", map[string]any{"channel_id": s.Channel, "message": strings.Repeat("é", mattermosttest.MaxRunes)}, 201},
		{"under a reply", tok, "POST", "/posts", map[string]any{"channel_id": s.Channel, "root_id": reply.ID, "message": "hi"}, 400},
		{"unknown channel", tok, "POST", "/posts", map[string]any{"channel_id": "c9999999999999999999999999", "message": "hi"}, 403},
		{"a button with a bad id", tok, "POST", "/posts", map[string]any{"channel_id": s.Channel, "message": "hi",
			"props": map[string]any{"attachments": []any{map[string]any{"actions": []any{map[string]any{"id": "my_button", "name": "x",
				"integration": map[string]any{"url": "http://127.0.0.1:1/"}}}}}}}, 400},
		{"someone else's post", tok, "PUT", "/posts/" + root.ID + "/patch", map[string]any{"message": "mine now"}, 403},
		{"no such post", tok, "PUT", "/posts/p9999999999999999999999999/patch", map[string]any{"message": "x"}, 404},
		{"a bad id", tok, "PUT", "/posts/nope/patch", map[string]any{"message": "x"}, 400},
		{"a reaction as alice", tok, "POST", "/reactions", map[string]any{"user_id": alice.ID, "post_id": root.ID, "emoji_name": "eyes"}, 403},
		{"a reaction", tok, "POST", "/reactions", map[string]any{"user_id": s.Bot.ID, "post_id": root.ID, "emoji_name": "eyes"}, 200},
		{"a bad emoji", tok, "POST", "/reactions", map[string]any{"user_id": s.Bot.ID, "post_id": root.ID, "emoji_name": "Eyes!"}, 400},
		{"no such path", tok, "GET", "/nothing/here", nil, 404},
		{"a wrong method", tok, "DELETE", "/posts", nil, 405},
	} {
		if status, id := call(t, s, tt.token, tt.method, tt.path, tt.body); status != tt.status {
			t.Errorf("%s: %s %s = %d %s, want %d", tt.name, tt.method, tt.path, status, id, tt.status)
		}
	}
}

// The event stream wants the token in its first message; a wrong one is
// answered FAIL and the connection closed, a right one hello, then OK.
func TestTheFakeStreamAuthenticates(t *testing.T) {
	t.Parallel()
	s := mattermosttest.New(t)
	url := "ws" + strings.TrimPrefix(s.URL, "http") + "/api/v4/websocket"
	for _, tt := range []struct {
		token  string
		status string
	}{{"wrong", "FAIL"}, {mattermosttest.Token, "OK"}} {
		ws, _, err := websocket.DefaultDialer.Dial(url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := ws.WriteJSON(map[string]any{"seq": 1, "action": "authentication_challenge", "data": map[string]string{"token": tt.token}}); err != nil {
			t.Fatal(err)
		}
		// The server greets a new connection with hello before it answers.
		if tt.status == "OK" {
			var hello struct {
				Event string `json:"event"`
				Seq   int    `json:"seq"`
			}
			if err := ws.ReadJSON(&hello); err != nil || hello.Event != "hello" || hello.Seq != 0 {
				t.Errorf("first: %+v, %v, want hello, seq 0", hello, err)
			}
		}
		var reply struct {
			Status   string `json:"status"`
			SeqReply int    `json:"seq_reply"`
		}
		if err := ws.ReadJSON(&reply); err != nil || reply.Status != tt.status || reply.SeqReply != 1 {
			t.Errorf("token %q: answered %+v, %v, want %s to seq 1", tt.token, reply, err, tt.status)
		}
		if tt.status == "FAIL" {
			if err := ws.ReadJSON(&reply); err == nil {
				t.Errorf("after FAIL the connection goes on: %+v", reply)
			}
		}
		ws.Close()
	}
}
