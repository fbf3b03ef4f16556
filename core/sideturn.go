package core

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

// sideTurn is what sets a turn of agents side by side apart from a
// person's own: the agent that runs it, how, and what follows it.
type sideTurn struct {
	// helper is the plugin ID of the helper agent that runs the turn;
	// empty for a turn of the conversation's author (findings to fix).
	helper string
	// readOnly: the turn may read the workdir but change nothing
	// (Turn.ReadOnly).
	readOnly bool
	// label heads the turn's reply, naming the agent and its part.
	label string
	// review, for a review, is what it reviews (core/review.go).
	review *reviewScope
	// pair: the turn is a step of the conversation's pair loop.
	pair bool
}

// helps reports whether s is run by a helper agent rather than the
// conversation's author.
func (s *sideTurn) helps() bool { return s != nil && s.helper != "" }

// sideRecord is a side turn as Turn.Side keeps it, for a later process
// of the bot that follows the turn on its runner (followUnfinished): the
// turn stays its helper's, labelled as it was; a review still records
// what it reviewed; a step of a pair loop goes on with the loop.
type sideRecord struct {
	Helper   string        `json:"helper,omitempty"`
	ReadOnly bool          `json:"read_only,omitempty"`
	Label    string        `json:"label,omitempty"`
	Review   *reviewRecord `json:"review,omitempty"`
	Pair     *pairRecord   `json:"pair,omitempty"`
}

// reviewRecord is a reviewScope as sideRecord keeps it.
type reviewRecord struct {
	Author string   `json:"author"`
	Parts  []string `json:"parts,omitempty"`
}

// pairRecord is the pair loop a step ran in, as it was when it started.
type pairRecord struct {
	Reviewer string `json:"reviewer"`
	Round    int    `json:"round"`
	Rounds   int    `json:"rounds"`
}

// readSide is the side turn Turn.Side kept, and the pair loop it was a
// step of; nil for a turn of a person's own, or one recorded by a
// process that kept no side.
func readSide(data json.RawMessage) (*sideTurn, *pairRecord, error) {
	if len(data) == 0 {
		return nil, nil, nil
	}
	var rec sideRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, nil, fmt.Errorf("the turn's side record: %w", err)
	}
	side := &sideTurn{helper: rec.Helper, readOnly: rec.ReadOnly, label: rec.Label, pair: rec.Pair != nil}
	if rec.Review != nil {
		side.review = &reviewScope{author: rec.Review.Author, parts: rec.Review.Parts}
	}
	return side, rec.Pair, nil
}

// The bounds of what sideBySide keeps, in memory: the last exchanges of
// the most recent conversations (a review of one older says it does not
// know the reply) and the most recent findings, each at most maxSaid and
// maxRequest bytes, some 64 MB at most. The request is kept with the
// conversation too (Conversation.LastRequest), in the state saved on
// every change: with NATS_URL one message, of at most 1 MB by default,
// holding every conversation.
const (
	keptExchanges = 2000
	keptFindings  = 1000
	maxSaid       = 16 << 10
	maxRequest    = 4 << 10
)

// exchange is a person's request to the author's agent and its reply.
type exchange struct{ request, reply string }

// clipHead keeps the first n bytes of s, whole characters, marked when
// cut.
func clipHead(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// saidText is the text a turn's agent said, its last maxSaid bytes. It
// is safe for concurrent use.
type saidText struct {
	mu  sync.Mutex
	b   strings.Builder
	cut bool
}

func (s *saidText) add(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.WriteString(text)
	if s.b.Len() > 2*maxSaid {
		keep := s.b.String()[s.b.Len()-maxSaid:]
		s.b.Reset()
		s.b.WriteString(keep)
		s.cut = true
	}
}

func (s *saidText) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.b.String()
	if len(t) > maxSaid || s.cut {
		t = "…" + strings.ToValidUTF8(t[len(t)-min(len(t), maxSaid):], "")
	}
	return t
}

// readOnlyMeans says how p keeps a turn from writing, or why it cannot:
// the refusal names the way round it when there is one.
func readOnlyMeans(p Plugin, instead string) (string, error) {
	if rp, ok := p.(ReadOnlyPlugin); ok {
		if means, ok := rp.ReadOnlyMeans(); ok {
			return means, nil
		}
	}
	msg := fmt.Sprintf("%s has no read-only mode here, so it cannot do this without the right to write", p.Name())
	if instead != "" {
		msg += "; " + instead
	}
	return "", Errorf("%s", msg)
}
