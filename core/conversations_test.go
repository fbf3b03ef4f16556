package core_test

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
)

// idleConversationBytes fills a map with n conversations shaped like real
// ones (snowflake ids, a workdir, a UUID token) and returns the heap they
// take, per conversation.
func idleConversationBytes(n int) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	convs := core.NewState()
	now := time.Now()
	for i := range n {
		key := core.ConversationKey{
			Platform: "discord",
			User:     fmt.Sprintf("1234567890%08d", i),
			Channel:  fmt.Sprintf("9876543210%08d", i%5000),
			Thread:   fmt.Sprintf("5555555555%08d", i),
		}
		convs.Put(key, core.Conversation{
			Plugin:    "claude",
			Workdir:   "/home/dev/src/project",
			SessionID: fmt.Sprintf("1ce8f0c3-3b99-4530-a951-%012d", i),
			Started:   now,
			LastUsed:  now,
		})
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(convs)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
}

func TestIdleConversationMemory(t *testing.T) {
	if got := idleConversationBytes(100_000); got >= 1024 {
		t.Fatalf("an idle conversation takes %.0f bytes, want under 1 KiB", got)
	}
}

func BenchmarkIdleConversationMemory(b *testing.B) {
	for b.Loop() {
		b.ReportMetric(idleConversationBytes(100_000), "bytes/conversation")
	}
}

func TestConversationsConcurrentUse(t *testing.T) {
	t.Parallel()
	convs := core.NewState()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				k := core.ConversationKey{Platform: "p", User: fmt.Sprint(w), Channel: fmt.Sprint(i % 10)}
				convs.Put(k, core.Conversation{Plugin: "claude"})
				convs.Update(k, func(c *core.Conversation) { c.SessionID = "t" })
				convs.Get(k)
				if i%3 == 0 {
					convs.End(k)
				}
				convs.All()
			}
		}()
	}
	wg.Wait()
	// Per worker, channels 2, 5 and 8 were last ended (190+c is a
	// multiple of 3), the other seven stay.
	if n := convs.Len(); n != 8*7 {
		t.Fatalf("Len = %d, want 56", n)
	}
}

// Starting a conversation looks for another in its workdir (the shared
// workdir warning): among 5,000 others it must not copy and sort them all,
// which made starting 10,000 conversations quadratic (issue 33). What one
// start allocates may not grow with the conversations there are.
func TestStartingAmongManyConversations(t *testing.T) {
	f := newRouterFixture(t, echo)
	perStart := func(others int) uint64 {
		convs := f.router.Conversations()
		for i := range others {
			key := core.ConversationKey{Platform: "other", User: fmt.Sprint(i), Channel: "c"}
			convs.Put(key, core.Conversation{Plugin: "fake", Workdir: fmt.Sprintf("/elsewhere/%d", i), LastUsed: time.Now()})
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		const starts = 20
		for range starts {
			f.say("alice", "/fake start")
			f.expect("conversation started")
		}
		runtime.ReadMemStats(&after)
		return (after.TotalAlloc - before.TotalAlloc) / starts
	}
	few := perStart(0)
	many := perStart(5000)
	if many > few+64<<10 {
		t.Errorf("a start among 5,000 conversations allocates %d bytes, among none %d", many, few)
	}
}
