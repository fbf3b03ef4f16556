package core_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/platforms/platformtest"
)

var target = core.Target{Platform: "fake", Channel: "c1"}

// closeOnManualClock closes the replies and drives clock until each has
// delivered its final state. The clock moves only while every open reply
// waits on a timer, so no sender is between reading the time and writing
// when it moves: each write is stamped with the time its sender saw. (An
// InstantClock shared by two replies moves under one while the other
// waits, and stamps writes later than the sender read.)
func closeOnManualClock(ctx context.Context, clock *coretest.ManualClock, replies ...*core.Reply) {
	done := make(chan struct{}, len(replies))
	for _, r := range replies {
		go func() {
			r.Close(ctx)
			done <- struct{}{}
		}()
	}
	for open := len(replies); open > 0; {
		if clock.Pending() >= open {
			clock.AdvanceToNext()
			continue
		}
		select {
		case <-clock.Waiting():
		case <-done:
			open--
		}
	}
}

// checkEditSpacing fails when a message was edited twice within interval.
func checkEditSpacing(t *testing.T, calls []platformtest.Call, interval time.Duration) {
	t.Helper()
	lastEdit := map[string]time.Time{}
	for _, c := range calls {
		if c.Op == "edit" {
			if prev, ok := lastEdit[c.Ref.ID]; ok && c.At.Sub(prev) < interval {
				t.Errorf("message %s edited %v after the previous edit, want at least %v", c.Ref.ID, c.At.Sub(prev), interval)
			}
			lastEdit[c.Ref.ID] = c.At
		}
	}
}

func TestCoordinatorKeepsEditsWithinTheRate(t *testing.T) {
	t.Parallel()
	clock := coretest.NewManualClock()
	lim := core.Limits{EditInterval: time.Second, ChannelInterval: 200 * time.Millisecond, ChannelBurst: 5}
	rec := platformtest.NewRecorder(clock, lim)
	coord := core.NewStreamCoordinator(rec, clock, nil)

	// Two replies in one channel share the channel budget.
	ctx := context.Background()
	r1, r2 := coord.NewReply(ctx, target), coord.NewReply(ctx, target)
	var want1, want2 strings.Builder
	for i := range 400 {
		s := fmt.Sprintf("w%d ", i)
		want1.WriteString(s)
		want2.WriteString(strings.ToUpper(s))
		r1.Emit(core.TextEvent(s))
		r2.Emit(core.TextEvent(strings.ToUpper(s)))
	}
	closeOnManualClock(ctx, clock, r1, r2)

	msgs := rec.Messages()
	if len(msgs) != 2 || !(msgs[0] == want1.String() && msgs[1] == want2.String() || msgs[0] == want2.String() && msgs[1] == want1.String()) {
		t.Fatalf("final messages = %q, want the two full texts", msgs)
	}
	calls := rec.Calls()
	checkEditSpacing(t, calls, lim.EditInterval)
	// In any window of one second the channel allows its burst plus one
	// write per interval.
	maxPerSecond := lim.ChannelBurst + int(time.Second/lim.ChannelInterval)
	for i, c := range calls {
		n := 0
		for _, d := range calls[i:] {
			if d.At.Sub(c.At) < time.Second {
				n++
			}
		}
		if n > maxPerSecond {
			t.Fatalf("%d writes to the channel within a second from %v, want at most %d", n, c.At, maxPerSecond)
		}
	}
}

// slowRender is a platform whose first renders take time on a manual
// clock, and later ones none.
type slowRender struct {
	*platformtest.Recorder
	clock *coretest.ManualClock
	slow  int
}

func (p *slowRender) Render(blocks []core.ResponseBlock) []string {
	if p.slow > 0 {
		p.slow--
		p.clock.Advance(900 * time.Millisecond)
	}
	return p.Recorder.Render(blocks)
}

// The edit limit holds between the writes themselves, however long the
// renders before them took: a limiter asked at a reading of the clock taken
// before rendering would let a slow render and a fast one land two edits
// 100ms apart.
func TestCoordinatorMeasuresTheRateAtTheWrite(t *testing.T) {
	t.Parallel()
	clock := coretest.NewManualClock()
	lim := core.Limits{EditInterval: time.Second}
	rec := platformtest.NewRecorder(clock, lim)
	coord := core.NewStreamCoordinator(&slowRender{Recorder: rec, clock: clock, slow: 2}, clock, nil)
	ctx := context.Background()
	r := coord.NewReply(ctx, target)
	var want strings.Builder
	for i := range 50 {
		s := fmt.Sprintf("w%d ", i)
		want.WriteString(s)
		r.Emit(core.TextEvent(s))
		// Let the sender write this state before the next word.
		for len(rec.Calls()) <= i/5 {
			select {
			case <-rec.Written():
			case <-clock.Waiting():
				clock.AdvanceToNext()
			}
		}
	}
	closeOnManualClock(ctx, clock, r)
	if msgs := rec.Messages(); len(msgs) != 1 || msgs[0] != want.String() {
		t.Fatalf("messages = %q, want [%q]", msgs, want.String())
	}
	calls := rec.Calls()
	if len(calls) < 5 {
		t.Fatalf("%d writes, want the reply edited as it grew", len(calls))
	}
	checkEditSpacing(t, calls, lim.EditInterval)
}

func TestCoordinatorDeliversFinalStateAfterWaitingForTheLimiter(t *testing.T) {
	t.Parallel()
	clock := coretest.NewManualClock()
	rec := platformtest.NewRecorder(clock, core.Limits{EditInterval: time.Second})
	coord := core.NewStreamCoordinator(rec, clock, nil)
	ctx := context.Background()
	r := coord.NewReply(ctx, target)

	r.Emit(core.TextEvent("a"))
	if c := <-rec.Written(); c.Op != "send" || c.Text != "a" {
		t.Fatalf("first write = %+v, want send of %q", c, "a")
	}
	r.Emit(core.TextEvent("b"))
	if c := <-rec.Written(); c.Op != "edit" || c.Text != "ab" {
		t.Fatalf("second write = %+v, want edit to %q", c, "ab")
	}
	r.Emit(core.TextEvent("c"))
	if d := <-clock.Waiting(); d <= 0 || d > time.Second {
		t.Fatalf("sender waits %v, want a wait of at most the edit interval", d)
	}
	closed := make(chan struct{})
	go func() {
		r.Close(ctx)
		close(closed)
	}()
	select {
	case c := <-rec.Written():
		t.Fatalf("write %+v before the edit interval passed", c)
	case <-closed:
		t.Fatal("Close returned before the final state was delivered")
	default:
	}
	clock.Advance(time.Second)
	<-closed
	if got := rec.Messages(); len(got) != 1 || got[0] != "abc" {
		t.Fatalf("messages = %q, want [abc]", got)
	}
}

func TestCoordinatorWaitsOutRateLimitAndLosesNothing(t *testing.T) {
	t.Parallel()
	clock := coretest.NewInstantClock()
	rec := platformtest.NewRecorder(clock, core.Limits{EditInterval: time.Second})
	var limitedAt time.Time
	failed := 0
	rec.Fail = func(c platformtest.Call) error {
		if c.Op == "edit" && failed < 2 {
			failed++
			limitedAt = c.At
			return &core.RateLimitError{RetryAfter: 7 * time.Second, Err: errors.New("429")}
		}
		return nil
	}
	coord := core.NewStreamCoordinator(rec, clock, nil)
	ctx := context.Background()
	r := coord.NewReply(ctx, target)
	var want strings.Builder
	for i := range 100 {
		s := fmt.Sprintf("%d,", i)
		want.WriteString(s)
		r.Emit(core.TextEvent(s))
	}
	r.Close(ctx)
	if got := rec.Messages(); len(got) != 1 || got[0] != want.String() {
		t.Fatalf("messages = %q, want [%q]", got, want.String())
	}
	for _, c := range rec.Calls() {
		if c.Op == "edit" && c.At.Before(limitedAt.Add(7*time.Second)) && c.At.After(limitedAt) {
			t.Errorf("edit at %v, within the retry-after window that began at %v", c.At, limitedAt)
		}
	}
}

// An edit the platform fails once (a 5xx, a timeout) is tried again: sent
// as a new message at once, the reply's first part stayed in the old one
// and the chat showed it twice (make chaos found it).
func TestCoordinatorRetriesAnEditThatFailedOnce(t *testing.T) {
	t.Parallel()
	clock := coretest.NewInstantClock()
	rec := platformtest.NewRecorder(clock, core.Limits{EditInterval: time.Second})
	failed := false
	rec.Fail = func(c platformtest.Call) error {
		if c.Op == "edit" && !failed {
			failed = true
			return errors.New("503 Service Unavailable")
		}
		return nil
	}
	coord := core.NewStreamCoordinator(rec, clock, nil)
	ctx := context.Background()
	r := coord.NewReply(ctx, target)
	r.Emit(core.TextEvent("first part, "))
	<-rec.Written() // sent: what follows is an edit
	for i := range 50 {
		r.Emit(core.TextEvent(fmt.Sprintf("%d,", i)))
	}
	r.Close(ctx)
	if !failed {
		t.Fatal("no edit was made")
	}
	if got := rec.Messages(); len(got) != 1 || !strings.HasSuffix(got[0], "49,") {
		t.Fatalf("messages = %q, want one holding the whole reply", got)
	}
}

// An edit that keeps failing (the message was deleted) is sent as a new
// message, so that the reply never stays stuck on an old state.
func TestCoordinatorSendsAnewAnEditThatKeepsFailing(t *testing.T) {
	t.Parallel()
	clock := coretest.NewInstantClock()
	rec := platformtest.NewRecorder(clock, core.Limits{EditInterval: time.Second})
	rec.Fail = func(c platformtest.Call) error {
		if c.Op == "edit" && c.Ref.ID == "1" {
			return errors.New("400 Bad Request: message to edit not found")
		}
		return nil
	}
	coord := core.NewStreamCoordinator(rec, clock, nil)
	ctx := context.Background()
	r := coord.NewReply(ctx, target)
	r.Emit(core.TextEvent("first part, "))
	<-rec.Written()
	r.Emit(core.TextEvent("second part."))
	r.Close(ctx)
	if got := rec.Messages(); len(got) != 2 || got[1] != "first part, second part." {
		t.Fatalf("messages = %q, want the whole reply in a new one", got)
	}
}

func TestCoordinatorSplitsLongOutputWithBalancedFences(t *testing.T) {
	t.Parallel()
	clock := coretest.NewInstantClock()
	rec := platformtest.NewRecorder(clock, core.Limits{EditInterval: time.Second})
	rec.MaxLen = 500
	coord := core.NewStreamCoordinator(rec, clock, nil)
	ctx := context.Background()
	r := coord.NewReply(ctx, target)
	var code strings.Builder
	for i := range 200 {
		fmt.Fprintf(&code, "fmt.Println(%d) // ünïcode ✓\n", i)
	}
	r.Emit(core.TextEvent("Here is the program:\n\n```go\n"))
	r.Emit(core.TextEvent(code.String()))
	r.Emit(core.TextEvent("```\n\nDone."))
	r.Close(ctx)
	msgs := rec.Messages()
	if len(msgs) < 10 {
		t.Fatalf("got %d messages, want the answer split into many", len(msgs))
	}
	var joined strings.Builder
	for i, m := range msgs {
		if n := len([]rune(m)); n > rec.MaxLen {
			t.Errorf("message %d has %d runes, over the limit %d", i, n, rec.MaxLen)
		}
		if strings.Count(m, "```")%2 != 0 {
			t.Errorf("message %d has unbalanced fences:\n%s", i, m)
		}
		joined.WriteString(m + "\n")
	}
	for i := range 200 {
		if line := fmt.Sprintf("fmt.Println(%d) // ünïcode ✓", i); !strings.Contains(joined.String(), line) {
			t.Fatalf("line %q lost", line)
		}
	}
	if !strings.HasSuffix(msgs[len(msgs)-1], "Done.") {
		t.Errorf("last message = %q, want it to end with the answer's end", msgs[len(msgs)-1])
	}
}

func TestCoordinatorFinalOnly(t *testing.T) {
	t.Parallel()
	clock := coretest.NewInstantClock()
	rec := platformtest.NewRecorder(clock, core.Limits{FinalOnly: true})
	coord := core.NewStreamCoordinator(rec, clock, nil)
	ctx := context.Background()
	r := coord.NewReply(ctx, target)
	for range 50 {
		r.Emit(core.TextEvent("x"))
	}
	r.Add(core.ResponseBlock{Kind: core.BlockToolUse, ID: "t1", Tool: "Bash", Text: "ls", Status: core.ToolRunning})
	r.Add(core.ResponseBlock{Kind: core.BlockToolUse, ID: "t1", Tool: "Bash", Text: "ls", Status: core.ToolDone})
	r.Close(ctx)
	calls := rec.Calls()
	if len(calls) != 1 || calls[0].Op != "send" {
		t.Fatalf("calls = %+v, want one final send", calls)
	}
	want := strings.Repeat("x", 50) + "\n\n✅ Bash: ls"
	if calls[0].Text != want {
		t.Errorf("final text = %q, want %q", calls[0].Text, want)
	}
}

func TestHealth(t *testing.T) {
	t.Parallel()
	var h core.Health
	if err := h.Healthy(); err == nil || !strings.Contains(err.Error(), "not connected yet") {
		t.Errorf("zero Health = %v, want not connected yet", err)
	}
	h.Set(nil)
	if err := h.Healthy(); err != nil {
		t.Errorf("after Set(nil) = %v", err)
	}
	h.Set(errors.New("gateway gone"))
	if err := h.Healthy(); err == nil || err.Error() != "gateway gone" {
		t.Errorf("after Set(err) = %v", err)
	}
}
