package core

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
)

// The review's prompt and verdict, written once for every reviewer: the
// reviewer ends with exactly one verdict line, and only the last such
// line is read (parseVerdict).
const (
	verdictApprove = "VERDICT: APPROVE"
	verdictChanges = "VERDICT: CHANGES"

	reviewPrompt = `You are reviewing the work of another coding agent, %[1]s, in this directory. Do not change any file: read, and report.

The user's last request to %[1]s:
<request>
%[2]s
</request>

%[1]s's reply:
<reply>
%[3]s
</reply>

What changed since the last review, against %[4]s:
%[5]s

Review the change: bugs, what the request asked that is missing, risky or unclear code, missing tests. List each finding with its file and line, the most important first, and say how to fix it. Do not repeat what is fine.

End your answer with exactly one line, the last line, either
` + verdictApprove + `
when the change is right as it is, or
` + verdictChanges + `
when something must change.`

	fixPrompt = `%s reviewed your change and asks for changes. Its findings:

%s

Fix what you agree with, and say briefly why you leave anything you do not.`
)

// maxReviewPatch bounds the diff a review's prompt carries; the reviewer
// reads the rest in the workdir.
const maxReviewPatch = 48 << 10

// verdict is a reviewer's verdict.
type verdict int

const (
	// noVerdict: the review has no verdict line, or one that is neither;
	// it counts as asking for changes, and the chat is told so.
	noVerdict verdict = iota
	approved
	changesRequested
)

// parseVerdict reads the verdict of a review: its last line that starts
// with "VERDICT:", markdown emphasis around it aside, which must be
// exactly one of the two verdicts.
func parseVerdict(review string) verdict {
	lines := strings.Split(review, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.Trim(strings.TrimSpace(lines[i]), "*_` ")
		if !strings.HasPrefix(l, "VERDICT:") {
			continue
		}
		switch l {
		case verdictApprove:
			return approved
		case verdictChanges:
			return changesRequested
		}
		return noVerdict
	}
	return noVerdict
}

// reviewScope is what a review reviews: the hashes of the diff's parts,
// which become the conversation's Reviewed once it ran.
type reviewScope struct {
	author string
	parts  []string
}

// diffPart is one file's part of a patch, or the line naming new files
// git does not track, with its hash.
type diffPart struct{ text, hash string }

// diffParts splits what changed into parts a review may have seen.
func diffParts(patch, stat string) []diffPart {
	var parts []diffPart
	add := func(text string) {
		if strings.TrimSpace(text) != "" {
			sum := sha256.Sum256([]byte(text))
			parts = append(parts, diffPart{text: text, hash: hex.EncodeToString(sum[:12])})
		}
	}
	var cur strings.Builder
	for _, line := range strings.SplitAfter(patch, "\n") {
		if strings.HasPrefix(line, "diff --git ") {
			add(cur.String())
			cur.Reset()
		}
		cur.WriteString(line)
	}
	add(cur.String())
	if i := strings.Index(stat, "New files git does not track yet: "); i >= 0 {
		add(stat[i:])
	}
	return parts
}

// findings are a review's findings waiting for a button: Fix with the
// author, or Dismiss.
type findings struct {
	key      ConversationKey
	started  time.Time
	author   string
	reviewer string
	text     string
}
