package discord

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/discord/discordtest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// chunkPlugin emits the chunks a test sends, one at a time, and ends the
// turn when the channel is closed (or the turn is cancelled).
func chunkPlugin(chunks <-chan string) *plugintest.Scripted {
	return &plugintest.Scripted{Script: func(ctx context.Context, _ core.Turn, emit func(core.Event)) (core.TurnResult, error) {
		for {
			select {
			case c, ok := <-chunks:
				if !ok {
					return core.TurnResult{SessionID: "s1", Duration: 2 * time.Second, CostUSD: 0.0123}, nil
				}
				emit(core.TextEvent(c))
			case <-ctx.Done():
				return core.TurnResult{}, ctx.Err()
			}
		}
	}}
}

// writes returns the successful message writes (posts and edits) in
// channel, in the order the fake received them.
func writes(fake *discordtest.Server, channel string) []discordtest.Call {
	var out []discordtest.Call
	for _, c := range fake.Calls() {
		if c.Status == 200 && (c.Is("POST", "channels/"+channel+"/messages") || c.Is("PATCH", "channels/"+channel+"/messages/*")) {
			out = append(out, c)
		}
	}
	return out
}

// checkBudget fails when writes break the adapter's limits: one edit per
// interval per message, at most five writes in any five seconds per
// channel, and never the same text twice in a row.
func checkBudget(t *testing.T, ws []discordtest.Call, interval time.Duration) {
	t.Helper()
	last := map[string]discordtest.Call{}
	for i, w := range ws {
		if i >= 5 {
			if d := w.At.Sub(ws[i-5].At); d < 5*time.Second {
				t.Errorf("six writes within %s in one channel (writes %d..%d)", d, i-5, i)
			}
		}
		if prev, ok := last[w.Message]; ok {
			if d := w.At.Sub(prev.At); d < interval {
				t.Errorf("message %s edited %s after the previous write, want at least %s", w.Message, d, interval)
			}
			if string(prev.Body) == string(w.Body) {
				t.Errorf("message %s re-sent unchanged: %s", w.Message, w.Body)
			}
		}
		last[w.Message] = w
	}
}

func TestPlainMessagesStreamWithinLimits(t *testing.T) {
	t.Parallel()
	chunks := make(chan string)
	h := newHarness(t, chunkPlugin(chunks), nil)
	thread := h.start(h.owner)
	h.fake.Say(h.owner, thread, "count to five")
	var text string
	for i := 1; i <= 5; i++ {
		part := fmt.Sprintf("part %d. ", i)
		send(t, chunks, part)
		text += part
		h.waitBot(thread, strings.TrimSpace(text)) // the reply shows all so far
	}
	// The indicator goes out beside the turn; end the turn once it has
	// arrived, or the turn's end may cancel it first.
	h.fake.WaitCall("POST", "channels/"+thread+"/typing", nil)
	close(chunks)
	final := h.waitBot(thread, "$0.0123")
	if want := text + "\n\n— 2.0s · $0.0123"; final.Content != want {
		t.Errorf("final reply = %q, want %q", final.Content, want)
	}
	if final.Edits < 4 {
		t.Errorf("reply edited %d times, want at least 4 (one per part)", final.Edits)
	}
	checkBudget(t, writes(h.fake, thread), h.cfg.EditInterval)
}

func TestLongAnswerArrivesComplete(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("Here is the file:\n\n```go\n")
	for i := 0; b.Len() < 6000; i++ {
		fmt.Fprintf(&b, "func f%d() int { return %d } // ünïcödé padding ✓\n", i, i)
	}
	b.WriteString("```\n\nAnd why:\n\n")
	for utf8.RuneCountInString(b.String()) < 10000 {
		b.WriteString("Lorem ipsum dolor sit amet, ✓ consectetur. ")
	}
	answer := b.String()
	chunks := make(chan string)
	go func() {
		defer close(chunks)
		for s := answer; s != ""; {
			n := min(len(s), 700)
			for !utf8.RuneStart(s[n%len(s)]) && n < len(s) {
				n++
			}
			chunks <- s[:n]
			s = s[n:]
		}
	}()
	h := newHarness(t, chunkPlugin(chunks), nil)
	thread := h.start(h.owner)
	h.fake.Say(h.owner, thread, "write a long file")
	h.waitBot(thread, "— 2.0s")
	pages := h.botMessages(thread)[1:] // after "conversation started"
	if len(pages) < 5 {
		t.Fatalf("answer of %d characters came in %d messages, want at least 5", utf8.RuneCountInString(answer), len(pages))
	}
	var got []string
	for i, p := range pages {
		if n := utf8.RuneCountInString(p.Content); n > maxLen {
			t.Errorf("message %d has %d characters, over Discord's %d", i, n, maxLen)
		}
		fences := 0
		for _, line := range strings.Split(p.Content, "\n") {
			if strings.HasPrefix(line, "```") {
				fences++
				continue
			}
			got = append(got, line)
		}
		if fences%2 != 0 {
			t.Errorf("message %d has unbalanced code fences:\n%s", i, p.Content)
		}
	}
	var want []string
	for _, line := range strings.Split(strings.TrimRight(answer, "\n")+"\n\n— 2.0s · $0.0123", "\n") {
		if !strings.HasPrefix(line, "```") {
			want = append(want, line)
		}
	}
	// A line longer than a page is cut, so compare the text without line
	// breaks (and without the fences the split adds).
	if g, w := strings.Join(got, ""), strings.Join(want, ""); g != w {
		t.Errorf("the pages do not join up to the answer: got %d characters, want %d", utf8.RuneCountInString(g), utf8.RuneCountInString(w))
	}
	checkBudget(t, writes(h.fake, thread), h.cfg.EditInterval)
}

func TestRateLimitDelaysButLosesNothing(t *testing.T) {
	t.Parallel()
	chunks := make(chan string)
	h := newHarness(t, chunkPlugin(chunks), nil)
	thread := h.start(h.owner)
	h.fake.RateLimit("POST", "channels/"+thread+"/messages", 2*time.Second, 1)
	h.fake.RateLimit("PATCH", "channels/"+thread+"/messages/*", 3*time.Second, 2)
	h.fake.Say(h.owner, thread, "go")
	var text string
	for i := 1; i <= 4; i++ {
		part := fmt.Sprintf("part %d. ", i)
		send(t, chunks, part)
		text += part
		h.waitBot(thread, strings.TrimSpace(text))
	}
	close(chunks)
	final := h.waitBot(thread, "$0.0123")
	if want := text + "\n\n— 2.0s · $0.0123"; final.Content != want {
		t.Errorf("final reply = %q, want %q", final.Content, want)
	}
	if n := len(h.botMessages(thread)); n != 2 {
		t.Errorf("%d bot messages in the thread, want 2 (start, reply): a retried post was duplicated", n)
	}
	limited := 0
	var at time.Time
	for _, c := range h.fake.Calls() {
		switch {
		case c.Status == 429:
			limited++
			at = c.At
		case !at.IsZero() && strings.HasPrefix(c.Path, "channels/"+thread+"/messages"):
			if c.At.Before(at.Add(2 * time.Second)) {
				t.Errorf("%s %s at %s, only %s after a 429", c.Method, c.Path, c.At, c.At.Sub(at))
			}
			at = time.Time{}
		}
	}
	if limited != 3 {
		t.Errorf("%d calls answered 429, want 3", limited)
	}
}

func TestErrorsShowAsRedEmbeds(t *testing.T) {
	t.Parallel()
	p := &plugintest.Scripted{Script: func(ctx context.Context, _ core.Turn, emit func(core.Event)) (core.TurnResult, error) {
		emit(core.TextEvent("Working on it."))
		emit(core.ErrorEvent("the model is overloaded (529)"))
		return core.TurnResult{IsError: true, Duration: time.Second}, nil
	}}
	h := newHarness(t, p, nil)
	thread := h.start(h.owner)
	h.fake.Say(h.owner, thread, "hi")
	m := h.waitBot(thread, "— 1.0s")
	if want := "Working on it.\n\n— 1.0s"; m.Content != want {
		t.Errorf("content = %q, want %q", m.Content, want)
	}
	if len(m.Embeds) != 1 || m.Embeds[0].Color != errorColor || m.Embeds[0].Description != "the model is overloaded (529)" {
		t.Errorf("embeds = %+v, want one red embed with the error", m.Embeds)
	}
}
