package codex

import (
	"encoding/json"
	"strings"
	"sync"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/internal/display"
	"github.com/jake-bot/jake-bot/plugins/internal/jsonrpc"
)

// userInputRequest is Codex asking the user (its request_user_input
// tool): questions, each with options to pick from or room for the
// person's own words.
type userInputRequest struct {
	Questions []struct {
		ID       string           `json:"id"`
		Question string           `json:"question"`
		Options  []display.Option `json:"options"`
	} `json:"questions"`
}

// userInput puts each of Codex's questions to the chat, and answers Codex
// once the chat has answered them all. An unanswered question (denied,
// or timed out) gets no answer.
func (s *appServer) userInput(m jsonrpc.Message) {
	var req userInputRequest
	if json.Unmarshal(m.Params, &req) != nil || len(req.Questions) == 0 {
		_ = s.rpc.Refuse(m.ID, m.Method)
		return
	}
	var mu sync.Mutex
	answers := map[string]any{}
	id := m.ID
	for _, q := range req.Questions {
		question := &core.Question{Tool: "Question", Summary: strings.TrimSpace(q.Question)}
		display.Offer(question, q.Options)
		if len(question.Options) == 0 {
			// Free text only: the person's own words answer.
			question.Detail = "Answer in your own words."
		}
		qid := q.ID
		question.Answer = func(a core.Answer) {
			given := []string{}
			if choice := strings.TrimSpace(a.Choice); choice != "" && a.Decision != core.Deny {
				given = []string{choice}
			}
			mu.Lock()
			answers[qid] = map[string]any{"answers": given}
			done := len(answers) == len(req.Questions)
			mu.Unlock()
			if !done {
				return
			}
			if err := s.rpc.Reply(id, map[string]any{"answers": answers}); err != nil {
				s.link.Logger().Warn("codex app-server: answer a question", "err", err)
			}
		}
		s.link.Emit(core.Event{Kind: core.EventQuestion, Question: question})
	}
}
