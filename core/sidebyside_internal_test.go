package core

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseVerdict(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		review string
		want   verdict
	}{
		{"all good\nVERDICT: APPROVE", approved},
		{"all good\nVERDICT: APPROVE\n\n", approved},
		{"fix x\n**VERDICT: CHANGES**", changesRequested},
		{"fix x\n`VERDICT: CHANGES`", changesRequested},
		{"nothing", noVerdict},
		{"", noVerdict},
		{"VERDICT: APPROVE\nthen more\nVERDICT: CHANGES", changesRequested},
		{"VERDICT: CHANGES\nVERDICT: APPROVE", approved},
		{"VERDICT: APPROVE with a nit", noVerdict},
		{"VERDICT: approve", noVerdict},
		{"verdict: APPROVE", noVerdict},
		{"I would say VERDICT: APPROVE", noVerdict},
		{"VERDICT: APPROVE\nVERDICT: maybe", noVerdict},
	} {
		if got := parseVerdict(tc.review); got != tc.want {
			t.Errorf("parseVerdict(%q) = %v, want %v", tc.review, got, tc.want)
		}
	}
}

func TestParseAsk(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		arg, plugin, text string
		write             bool
	}{
		{"codex why?", "codex", "why?", false},
		{"Codex --write fix it\nplease", "codex", "fix it\nplease", true},
		{"codex", "codex", "", false},
		{"codex --write", "codex", "", true},
		{"codex say --write", "codex", "say --write", false},
	} {
		plugin, write, text := parseAsk(tc.arg)
		if plugin != tc.plugin || write != tc.write || text != tc.text {
			t.Errorf("parseAsk(%q) = %q, %t, %q; want %q, %t, %q", tc.arg, plugin, write, text, tc.plugin, tc.write, tc.text)
		}
	}
}

func TestDiffParts(t *testing.T) {
	t.Parallel()
	patch := "diff --git a/a.txt b/a.txt\n-one\n+two\ndiff --git a/b.txt b/b.txt\n-x\n+y\n"
	parts := diffParts(patch, " a.txt | 2 +-\nNew files git does not track yet: c.txt")
	if len(parts) != 3 || !strings.HasPrefix(parts[0].text, "diff --git a/a.txt") || !strings.HasSuffix(parts[0].text, "+two\n") ||
		!strings.HasPrefix(parts[1].text, "diff --git a/b.txt") || parts[2].text != "New files git does not track yet: c.txt" {
		t.Fatalf("diffParts = %q", parts)
	}
	again := diffParts(strings.Replace(patch, "+y", "+z", 1), "")
	if again[0].hash != parts[0].hash || again[1].hash == parts[1].hash {
		t.Errorf("hashes: a.txt unchanged %t, b.txt changed %t", again[0].hash == parts[0].hash, again[1].hash != parts[1].hash)
	}
}

// A helper agent's turn, and the findings it sends the author, are the
// bot's on the person's behalf: never a command, an answer, a steer into
// a running turn, nor in a mode that skips approvals, even an admin's.
func TestPermitOfAHelper(t *testing.T) {
	t.Parallel()
	access := NewAccess()
	access.Allow("p", "alice")
	access.Admin("p", "alice")
	r := NewRouter(context.Background(), RouterConfig{Access: access}, nil)
	key := ConversationKey{Platform: "p", User: "alice", Channel: "c"}
	person := Message{Key: key, Text: "hi"}
	helper := Message{Key: key, Text: "hi", origin: OriginHelper}
	ofPerson, ofHelper := r.permitsOf(person), r.permitsOf(helper)
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"a person's command", ofPerson.command, ""},
		{"a helper's command", ofHelper.command, "a message sent by a helper agent is never a command"},
		{"a helper's answer", ofHelper.answer, "not a helper agent's"},
		{"a helper's steer into its person's turn", ofHelper.steerInto(&queued{m: person, may: ofPerson}), "starts a turn of its own"},
		{"a person's steer into their helper's turn", ofPerson.steerInto(&queued{m: helper, may: ofHelper}), ""},
		{"an admin's bypass", ofPerson.bypass, ""},
		{"a helper's bypass", ofHelper.bypass, "another agent of the conversation caused runs no mode that skips approvals"},
	} {
		if (tc.err == nil) != (tc.want == "") || tc.err != nil && !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, tc.err, tc.want)
		}
	}
}

// What a turn said is kept to its last maxSaid bytes, in whole
// characters, however it streamed.
func TestSaidTextKeepsItsEnd(t *testing.T) {
	t.Parallel()
	var s saidText
	for range maxSaid {
		s.add("é") // two bytes
	}
	s.add("VERDICT: APPROVE")
	got := s.String()
	if !strings.HasPrefix(got, "…é") || !strings.HasSuffix(got, "éVERDICT: APPROVE") || len(got) > maxSaid+len("…") || !utf8.ValidString(got) {
		t.Errorf("kept %d bytes, starting %q, ending %q", len(got), got[:8], got[len(got)-20:])
	}
	if head := clipHead(strings.Repeat("é", maxRequest), maxRequest-1); !utf8.ValidString(head) || len(head) > maxRequest+len("…") {
		t.Errorf("clipHead kept %d bytes, valid %t", len(head), utf8.ValidString(head))
	}
}
