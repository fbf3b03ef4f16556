package core

import (
	"context"
	"testing"
)

func TestHolds(t *testing.T) {
	var h Holds
	hold, end := h.Begin()
	hold("opening:c")
	hold("c/t")
	hold("c/t") // once is enough
	held := h.Of("c/t")
	if len(held) != 1 || len(h.Of("opening:c")) != 1 || len(h.Of("c")) != 0 {
		t.Fatalf("held: c/t %d, opening:c %d, c %d; want 1, 1, 0", len(held), len(h.Of("opening:c")), len(h.Of("c")))
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if held.Wait(cancelled) {
		t.Error("Wait reported the work ended while it runs")
	}
	end()
	end() // twice is harmless
	if !held.Wait(context.Background()) {
		t.Error("Wait after the end reported false")
	}
	if n := len(h.Of("c/t")) + len(h.Of("opening:c")); n != 0 || len(h.places) != 0 {
		t.Errorf("%d holds left after the end, places %v", n, h.places)
	}
}
