package plugintest

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// OpenCode (`opencode acp`) runs on the fake OpenAI Responses API (see
// OpenAI) as a custom provider of its bundled @ai-sdk/openai, whose base
// URL is the fake's. Observed with opencode 1.18.33: one POST
// /v1/responses per model turn once its title agent is off (it would ask
// the model for a session title beside the turn, in either order), and
// nothing else on the network with models.dev, updates, LSP downloads and
// its default plugins off. Its title agent asks a model for a session's
// title beside the turn, in either order: it asks another fake (small_model
// titles/echo), which answers with the user's message, so that a session
// is titled with its first prompt, as the other CLIs title theirs.

// OpenCodeEnv returns the environment for OpenCode in home on o: its
// configuration (OPENCODE_CONFIG_CONTENT) names o as provider fake, model
// fake/fake-model; ask sets the bash and edit permissions to ask, else
// everything is allowed.
func OpenCodeEnv(t testing.TB, home string, o *OpenAI, ask bool) []string {
	t.Helper()
	perm := "allow"
	if ask {
		perm = "ask"
	}
	cfg, err := json.Marshal(map[string]any{
		"$schema": "https://opencode.ai/config.json",
		"provider": map[string]any{"fake": map[string]any{"npm": "@ai-sdk/openai", "name": "Fake",
			"options": map[string]any{"baseURL": o.URL, "apiKey": "fake-key"},
			"models": map[string]any{"fake-model": map[string]any{"name": "Fake model", "attachment": true,
				"modalities": map[string]any{"input": []string{"text", "image"}, "output": []string{"text"}}}}},
			"titles": map[string]any{"npm": "@ai-sdk/openai", "name": "Titles",
				"options": map[string]any{"baseURL": echoModel(t), "apiKey": "fake-key"},
				"models":  map[string]any{"echo": map[string]any{"name": "Echo"}}}},
		"model": "fake/fake-model", "small_model": "titles/echo",
		// external_directory: a command naming a path outside the
		// workdir is asked about too (denied unasked) unless allowed.
		"permission": map[string]any{"bash": perm, "edit": perm, "external_directory": perm},
		"autoupdate": false, "share": "disabled",
	})
	if err != nil {
		t.Fatal(err)
	}
	return []string{"HOME=" + home, "TMPDIR=" + tmpDir(t, home), "NO_COLOR=1",
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"OPENCODE_CONFIG_CONTENT=" + string(cfg), "OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD=1", "OPENCODE_DISABLE_DEFAULT_PLUGINS=1", "OPENCODE_DISABLE_SHARE=1"}
}

// echoModel starts a Responses API that answers every request with the
// text of its last user message, and returns its base URL.
func echoModel(t testing.TB) string {
	t.Helper()
	o := &OpenAI{replyQueue: newReplyQueue(nil)}
	return startServer(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		o.respond(w, Reply{Text: []string{lastUserInput(body)}}, body)
	}).URL + "/v1"
}

// lastUserInput is the text of a Responses request's last user message.
func lastUserInput(body []byte) string {
	var req struct {
		Input []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"input"`
	}
	_ = json.Unmarshal(body, &req)
	for i := len(req.Input) - 1; i >= 0; i-- {
		if req.Input[i].Role != "user" {
			continue
		}
		var s string
		if json.Unmarshal(req.Input[i].Content, &s) == nil {
			return strings.TrimSpace(s)
		}
		var parts []struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal(req.Input[i].Content, &parts)
		if len(parts) > 0 {
			return strings.TrimSpace(parts[len(parts)-1].Text)
		}
	}
	return ""
}
