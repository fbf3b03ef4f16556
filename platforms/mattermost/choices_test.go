package mattermost_test

import (
	"bytes"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/mattermost/mattermosttest"
)

// ask starts a live turn in a new thread of alice's and has it ask about
// a Bash call; it returns the thread, the turn and where its answer goes.
func (h *harness) ask() (string, chan core.Answer, func()) {
	h.t.Helper()
	thread := h.startThread(h.alice, h.fake.Channel)
	h.fake.Say(h.t, h.alice, h.fake.Channel, thread, "live: clean the build")
	turn := h.plugin.Next(h.t)
	answers := make(chan core.Answer, 1)
	go func() {
		turn.Events() <- core.Event{Kind: core.EventQuestion, Question: &core.Question{Tool: "Bash", Summary: "`rm -rf build`",
			Answer: func(a core.Answer) { answers <- a }}}
	}()
	return thread, answers, func() { turn.End(h.t, core.TurnResult{}) }
}

// question waits for the question's post in thread.
func (h *harness) question(thread string) mattermosttest.Post {
	h.t.Helper()
	var q mattermosttest.Post
	h.until("the question", func() bool {
		for _, p := range h.fake.BotReplies(h.fake.Channel, thread) {
			if strings.Contains(p.Message, "Allow Bash?") {
				q = p
				return true
			}
		}
		return false
	})
	return q
}

// With MATTERMOST_ACTIONS_URL, a question carries buttons; the server
// posts a press to the bot's endpoint with the button's context. Mallory,
// who is not allowed, is told so privately and changes nothing; bob, who
// is allowed but not the turn's author, is refused in the thread; alice's
// press answers, and the question loses its buttons. The author is
// pinged with a mention.
func TestQuestionButtons(t *testing.T) {
	t.Parallel()
	h := start(t, setup{buttons: true})
	thread, answers, end := h.ask()
	q := h.question(thread)
	want := []mattermosttest.Button{{ID: "choice0", Name: "Allow"}, {ID: "choice1", Name: "Always allow Bash"}, {ID: "choice2", Name: "Deny"}}
	if got := q.Buttons(); !slices.Equal(got, want) {
		t.Fatalf("buttons %+v, want %+v", got, want)
	}
	if !strings.Contains(q.Message, "Only alice or an admin can answer") {
		t.Errorf("question %q does not name its author without a mention", q.Message)
	}
	h.waitReply(h.fake.Channel, thread, "@alice a question is waiting for your answer")

	if r := h.fake.Press(t, h.mallory, q.ID, "choice0"); !strings.Contains(r.EphemeralText, "not on this bot's allow-list") || !strings.Contains(r.EphemeralText, h.mallory.ID) {
		t.Errorf("mallory's press was answered %+v, want a private refusal with her id", r)
	}
	h.fake.Press(t, h.bob, q.ID, "choice0")
	h.waitReply(h.fake.Channel, thread, "Only the author of this turn")
	select {
	case a := <-answers:
		t.Fatalf("a stranger's press answered the question: %+v", a)
	default:
	}
	h.fake.Press(t, h.alice, q.ID, "choice0")
	if a := <-answers; a.Decision != core.Allow || a.By != h.alice.ID {
		t.Errorf("answer %+v, want alice's allow", a)
	}
	h.until("the question settled, without buttons", func() bool {
		p, _ := h.fake.Post(q.ID)
		return strings.Contains(p.Message, "→ Allowed Bash (alice)") && len(p.Buttons()) == 0
	})
	end()
	if failed := h.fake.Failed(); len(failed) != 0 {
		t.Errorf("calls failed: %+v", failed)
	}
}

// A request to the button endpoint that is not the server's (no token,
// a token the bot never gave, a GET) changes nothing.
func TestForgedPressesChangeNothing(t *testing.T) {
	t.Parallel()
	h := start(t, setup{buttons: true})
	thread, answers, end := h.ask()
	q := h.question(thread)
	url := h.adapterActionsURL(t, q)
	for _, body := range []string{
		`{"user_id":"` + h.alice.ID + `","channel_id":"` + h.fake.Channel + `","post_id":"` + q.ID + `","context":{}}`,
		`{"user_id":"` + h.alice.ID + `","channel_id":"` + h.fake.Channel + `","post_id":"` + q.ID + `","context":{"token":"00112233445566778899aabbccddeeff"}}`,
		`not json`,
	} {
		resp, err := http.Post(url, "application/json", bytes.NewReader([]byte(body)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if resp, err := http.Get(url); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET %s: %v %v, want 405", url, resp.Status, err)
	}
	select {
	case a := <-answers:
		t.Fatalf("a forged press answered the question: %+v", a)
	default:
	}
	h.fake.Press(t, h.alice, q.ID, "choice2")
	if a := <-answers; a.Decision != core.Deny {
		t.Errorf("answer %+v, want alice's deny", a)
	}
	end()
}

// Without MATTERMOST_ACTIONS_URL a question offers its choices as
// numbered reactions the bot adds itself; alice's click on one answers,
// and the bot's reactions go once the question is settled.
func TestQuestionReactions(t *testing.T) {
	t.Parallel()
	h := start(t, setup{})
	thread, answers, end := h.ask()
	q := h.question(thread)
	if !strings.Contains(q.Message, "React with :one: Allow · :two: Always allow Bash · :three: Deny") {
		t.Errorf("question %q lacks the legend", q.Message)
	}
	h.until("the bot's three reactions", func() bool {
		p, _ := h.fake.Post(q.ID)
		return len(p.Reactions) == 3
	})
	h.fake.React(t, h.bob, q.ID, "one")
	h.waitReply(h.fake.Channel, thread, "Only the author of this turn")
	h.fake.React(t, h.alice, q.ID, "three")
	if a := <-answers; a.Decision != core.Deny || a.By != h.alice.ID {
		t.Errorf("answer %+v, want alice's deny", a)
	}
	h.until("the question settled, the bot's reactions gone", func() bool {
		p, _ := h.fake.Post(q.ID)
		bots := 0
		for _, r := range p.Reactions {
			if r.User == h.fake.Bot.ID {
				bots++
			}
		}
		return strings.Contains(p.Message, "→ Denied Bash") && !strings.Contains(p.Message, "React with") && bots == 0
	})
	end()
}

// adapterActionsURL returns the callback URL of q's buttons, read off the
// server's side of the post (which no client sees).
func (h *harness) adapterActionsURL(t *testing.T, q mattermosttest.Post) string {
	t.Helper()
	u := h.fake.ActionURL(q.ID, "choice0")
	if u == "" {
		t.Fatal("the question's button has no integration URL")
	}
	return u
}
