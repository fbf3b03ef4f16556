package core

import (
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultApprovalTimeout is how long a question waits for its answer
// before the tool call is denied.
const DefaultApprovalTimeout = 10 * time.Minute

// chooses says q is answered by a choice or in words, not allow or deny.
func (q *Question) chooses() bool { return len(q.Options) > 0 || q.Open }

// pendingQuestion is a question shown in a chat, waiting for its answer.
type pendingQuestion struct {
	id     string
	key    ConversationKey
	author string // the turn's author, who may answer besides admins
	// authorName is how the chat names the author (Message.AuthorName).
	authorName string
	q          *Question
	once       sync.Once

	timerMu sync.Mutex
	timer   Timer
	// answered is called after the answer, to resume the turn's idle
	// watch.
	answered func()
	// shown is the question's message with buttons, and text its text:
	// once answered it is edited to say how, without the buttons.
	shown *MessageRef
	text  string
	// settled is how it was answered, kept when the answer came before
	// the message was known (a press quicker than the post's reply): the
	// edit then follows the post.
	settled string
}

// answer gives pq its answer once and stops its timer.
func (pq *pendingQuestion) answer(ans Answer) bool {
	first := false
	pq.once.Do(func() {
		first = true
		pq.timerMu.Lock()
		if pq.timer != nil {
			pq.timer.Stop()
		}
		pq.timerMu.Unlock()
		pq.q.Answer(ans)
		pq.answered()
	})
	return first
}

// What a question of a turn nobody may be watching gets
// (UNATTENDED_APPROVALS, RouterConfig.UnattendedApprovals).
const (
	UnattendedDeny = "deny"
	UnattendedAsk  = "ask"
)

// choiceAnswer reads an answer to a question with options: an option's
// number picks it, anything else is the person's own words.
func choiceAnswer(q *Question, text string) Answer {
	text = strings.TrimSpace(text)
	if n, err := strconv.Atoi(text); err == nil && n >= 1 && n <= len(q.Options) {
		return Answer{Decision: Allow, Choice: q.Options[n-1]}
	}
	return Answer{Decision: Allow, Choice: text}
}

// parseAnswer reads a plain-text answer: y, a, n, or a reason to deny;
// for a question with options, the text itself (see choiceAnswer).
func parseAnswer(text string) Answer {
	a := parseApproval(text)
	a.Choice = strings.TrimSpace(text)
	return a
}

func parseApproval(text string) Answer {
	switch strings.ToLower(strings.TrimSpace(text)) {
	case "y", "yes", "allow", "ok":
		return Answer{Decision: Allow}
	case "a", "always":
		return Answer{Decision: AllowAlways}
	case "n", "no", "deny":
		return Answer{Decision: Deny}
	}
	return Answer{Decision: Deny, Reason: strings.TrimSpace(text)}
}

// answerCommand reads /allow [id] [always] and /deny [id] [reason].
func answerCommand(cmd Command) (id string, ans Answer) {
	arg := strings.TrimSpace(cmd.Arg)
	if first, rest, _ := strings.Cut(arg, " "); len(first) > 1 && first[0] == 'q' {
		if _, err := strconv.Atoi(first[1:]); err == nil {
			id, arg = first, strings.TrimSpace(rest)
		}
	}
	if cmd.Name == CmdAnswer {
		return id, Answer{Decision: Allow, Choice: arg}
	}
	if cmd.Name == CmdAllow {
		if strings.EqualFold(arg, "always") {
			return id, Answer{Decision: AllowAlways}
		}
		return id, Answer{Decision: Allow}
	}
	return id, Answer{Decision: Deny, Reason: arg}
}
