package mattermost_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/mattermost/mattermosttest"
)

// A reply longer than a post continues in new posts of the thread, each
// within the server's limit, and a code block cut between two posts is
// closed and reopened so each renders on its own.
func TestLongReplySplitsWithoutBreakingCodeBlocks(t *testing.T) {
	t.Parallel()
	const limit = 300
	h := start(t, setup{limit: limit, before: func(f *mattermosttest.Server) { f.SetMaxRunes(limit) }})
	thread := h.startThread(h.alice, h.fake.Channel)
	h.fake.Say(t, h.alice, h.fake.Channel, thread, "live: write a lot")
	turn := h.plugin.Next(t)
	var code strings.Builder
	for i := range 40 {
		code.WriteString(strings.Repeat("x", 10) + string(rune('a'+i%26)) + "\n")
	}
	turn.Emit(t, core.TextEvent("Here it is:\n\n```go\n"+code.String()+"```\nDone."))
	turn.End(t, core.TurnResult{Duration: time.Second})
	replies := h.waitReply(h.fake.Channel, thread, "— 1.0s")
	posts := replies[1:] // after the start notice
	if len(posts) < 2 {
		t.Fatalf("the reply is %d posts, want it split: %q", len(posts), messages(posts))
	}
	for i, p := range posts {
		if n := utf8.RuneCountInString(p.Message); n > limit {
			t.Errorf("post %d has %d runes, over the limit %d", i, n, limit)
		}
		if strings.Count(p.Message, "```")%2 != 0 {
			t.Errorf("post %d leaves a code block open:\n%s", i, p.Message)
		}
	}
	if !strings.HasPrefix(posts[1].Message, "```go\n") {
		t.Errorf("the second post does not reopen the go block: %q", posts[1].Message)
	}
	if failed := h.fake.Failed(); len(failed) != 0 {
		t.Errorf("calls failed: %+v", failed)
	}
}

// A 429 on an edit is waited out for as long as Retry-After says, and
// the wait holds every write to the server (the limit is the bot's, not the thread's): a reply in
// another thread waits too.
func TestRateLimitHoldsEveryWrite(t *testing.T) {
	t.Parallel()
	h := start(t, setup{})
	a := h.startThread(h.alice, h.fake.Channel)
	b := h.startThread(h.bob, h.fake.Channel)
	h.fake.Say(t, h.alice, h.fake.Channel, a, "live: one")
	turn := h.plugin.Next(t)
	turn.Emit(t, core.TextEvent("first"))
	h.waitReply(h.fake.Channel, a, "first")
	const retry = 5 * time.Second
	h.fake.RateLimit("PUT", retry, 1)
	turn.Emit(t, core.TextEvent(" second"))
	limited := func() bool {
		for _, c := range h.fake.Calls() {
			if c.Status == 429 {
				return true
			}
		}
		return false
	}
	// The edit interval passes; the Retry-After does not, nor any wait
	// from now on: the clock stands still while the limit holds.
	pending := h.drive("the 429", retry, limited)
	waitFor := func(n int, why string) {
		for len(pending) < n {
			select {
			case d := <-h.clock.Waiting():
				if d == retry {
					pending = append(pending, d)
				}
			case <-time.After(guard):
				t.Fatalf("waits %v: %s", pending, why)
			}
		}
	}
	waitFor(1, "the edit refused did not wait for Retry-After")
	refusedAt := h.clock.Now()
	turn.Emit(t, core.TextEvent(" third"))
	hello := h.fake.Say(t, h.bob, h.fake.Channel, b, "hello")
	// Bob's reply (and his message's reaction) wait out the same 5s.
	waitFor(2, "the reply in the other thread did not wait for the limit")
	for _, c := range h.fake.Calls() {
		if strings.Contains(c.Body, "echo: hello") || strings.Contains(c.Body, hello.ID) {
			t.Errorf("%s %s %s written while the rate limit held", c.Method, c.Path, c.Body)
		}
	}
	h.clock.Advance(retry)
	h.waitReply(h.fake.Channel, a, "first second third")
	h.waitReply(h.fake.Channel, b, "echo: hello")
	for _, c := range h.fake.Calls() {
		if c.Method != "GET" && c.Status != 429 && c.At.After(refusedAt) && c.At.Before(refusedAt.Add(retry)) {
			t.Errorf("%s %s at %v, before the limit's end at %v", c.Method, c.Path, c.At, refusedAt.Add(retry))
		}
	}
	turn.End(t, core.TurnResult{})
}

// With the server's rate limiter on (PerSec, MaxBurst), the bot stops
// writing when X-Ratelimit-Remaining reaches 0 instead of running into
// 429s, and writes again once X-Ratelimit-Reset has passed.
func TestRemainingZeroHoldsBeforeA429(t *testing.T) {
	t.Parallel()
	h := start(t, setup{before: func(f *mattermosttest.Server) { f.SetRateLimit(1, 6) }})
	thread := h.startThread(h.alice, h.fake.Channel)
	for _, w := range []string{"a", "b", "c", "d", "e"} {
		h.fake.Say(t, h.alice, h.fake.Channel, thread, w)
		h.waitReply(h.fake.Channel, thread, "echo: "+w)
	}
	calls := h.fake.Calls()
	for i, c := range calls {
		if c.Status == 429 {
			t.Errorf("%s %s was refused with 429: the bot should have waited for the reset", c.Method, c.Path)
			for _, c := range calls[max(i-8, 0) : i+1] {
				t.Logf("  %v %s %s → %d remaining %d", c.At.Format("05.000"), c.Method, c.Path, c.Status, c.Remaining)
			}
		}
	}
}

// A call whose caller gives up before its answer comes (a typing
// indicator stopped while the server was answering it) was counted by the
// server all the same: it keeps its place until its answer comes, so when
// it took the last call of the bucket the next write waits for the refill
// instead of running into a 429.
func TestACallGivenUpCountsUntilItsAnswer(t *testing.T) {
	t.Parallel()
	h := start(t, setup{before: func(f *mattermosttest.Server) { f.SetRateLimit(1, 6) }})
	to := core.Target{Platform: "mattermost", Channel: h.fake.Channel}
	if left := spendUntil(t, h, to, 1); left != 1 {
		t.Fatalf("the bucket went to %d, past 1 at once; calls:\n%v", left, h.fake.Calls())
	}
	release := h.fake.Hold("POST")
	defer release()
	ctx, cancel := context.WithCancel(t.Context())
	typed := make(chan error, 1)
	go func() { typed <- h.adapter.Typing(ctx, to) }()
	h.fake.WaitFor(t, "the typing call", func() bool {
		calls := h.fake.Calls()
		return strings.HasSuffix(calls[len(calls)-1].Path, "/typing")
	})
	cancel()
	<-typed
	sent := make(chan error, 1)
	go func() {
		_, err := h.adapter.Send(t.Context(), to, "one too many")
		sent <- err
	}()
	release()
	if _, limited := core.AsRateLimit(<-sent); !limited {
		t.Errorf("Send went through: the typing call spent the last call")
	}
	for _, c := range h.fake.Calls() {
		if c.Status == 429 {
			t.Errorf("%s %s was refused with 429: the call given up was not counted", c.Method, c.Path)
		}
	}
}

// A call that waits for the answer of one under way, with few calls left
// in the bucket, gives up when its caller does: the call under way may
// take up to the client's minute to answer.
func TestAWaitingCallGivesUpWithItsCaller(t *testing.T) {
	t.Parallel()
	h := start(t, setup{before: func(f *mattermosttest.Server) { f.SetRateLimit(1, 6) }})
	to := core.Target{Platform: "mattermost", Channel: h.fake.Channel}
	spendUntil(t, h, to, 2)
	release := h.fake.Hold("POST")
	defer release()
	typed := make(chan error, 1)
	go func() { typed <- h.adapter.Typing(t.Context(), to) }()
	h.fake.WaitFor(t, "the typing call", func() bool {
		calls := h.fake.Calls()
		return strings.HasSuffix(calls[len(calls)-1].Path, "/typing")
	})
	ctx := watch(t.Context())
	sent := make(chan error, 1)
	go func() {
		_, err := h.adapter.Send(ctx, to, "waits")
		sent <- err
	}()
	select {
	case <-ctx.asked:
	case err := <-sent:
		t.Fatalf("Send = %v while the typing call was under way, without waiting for its answer", err)
	case <-time.After(time.Minute):
		t.Fatal("Send neither waited on its context nor returned")
	}
	ctx.cancel()
	select {
	case err := <-sent:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Send = %v, want its caller's context.Canceled", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Send still waits for the typing call's answer after its caller gave up")
	}
	release()
	if err := <-typed; err != nil {
		t.Errorf("Typing = %v", err)
	}
}

// spendUntil posts fillers to to until the server's bucket has left
// calls or fewer, and returns how many it has. The clock stands still:
// the bucket only empties.
func spendUntil(t *testing.T, h *harness, to core.Target, left int) int {
	t.Helper()
	for {
		calls := h.fake.Calls()
		if n := calls[len(calls)-1].Remaining; n <= left {
			return n
		}
		if _, err := h.adapter.Send(t.Context(), to, "filler"); err != nil {
			t.Fatalf("Send = %v with calls left", err)
		}
	}
}

// watched is a context that says when a caller first waits on it.
type watched struct {
	context.Context
	cancel context.CancelFunc
	once   sync.Once
	asked  chan struct{}
}

func watch(parent context.Context) *watched {
	ctx, cancel := context.WithCancel(parent)
	return &watched{Context: ctx, cancel: cancel, asked: make(chan struct{})}
}

func (w *watched) Done() <-chan struct{} {
	w.once.Do(func() { close(w.asked) })
	return w.Context.Done()
}
