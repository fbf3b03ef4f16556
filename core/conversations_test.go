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
			Plugin:      "claude",
			Workdir:     "/home/dev/src/project",
			ResumeToken: fmt.Sprintf("1ce8f0c3-3b99-4530-a951-%012d", i),
			Started:     now,
			LastUsed:    now,
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
				convs.Update(k, func(c *core.Conversation) { c.ResumeToken = "t" })
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
