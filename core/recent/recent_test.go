package recent_test

import (
	"testing"

	"github.com/jake-bot/jake-bot/core/recent"
)

func TestRecentForgetsTheOldest(t *testing.T) {
	t.Parallel()
	r := recent.New[int, string](3)
	for i := range 5 {
		if !r.Add(i, "v") {
			t.Fatalf("Add(%d) of a new key = false", i)
		}
	}
	if r.Add(4, "again") || r.Len() != 3 {
		t.Fatalf("a key seen lately was added again, or %d keys kept, want 3", r.Len())
	}
	for i, want := range []bool{false, false, true, true, true} {
		if _, ok := r.Get(i); ok != want {
			t.Errorf("Get(%d) found = %v, want %v", i, ok, want)
		}
	}
	r.Set(4, "new")
	if v, _ := r.Get(4); v != "new" {
		t.Errorf("Set did not replace: %q", v)
	}
	r.Delete(3)
	if _, ok := r.Get(3); ok || !r.Add(3, "back") {
		t.Error("a deleted key is still there, or cannot be added again")
	}
}

// A key deleted and added again keeps its place among the last n: the
// slot it had before holds it no longer.
func TestRecentKeepsAKeyAddedAgainAfterDelete(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		before  []int // added first
		deleted int   // deleted, then added again
		after   []int // added last
	}{
		{"ring not yet full", []int{1, 2}, 1, []int{3}},
		{"ring full", []int{1, 2, 3}, 2, []int{4}},
		{"stale slot comes round last", []int{1, 2, 3}, 3, []int{4, 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := recent.New[int, string](3)
			for _, k := range tc.before {
				r.Add(k, "v")
			}
			r.Delete(tc.deleted)
			r.Add(tc.deleted, "back")
			for _, k := range tc.after {
				r.Add(k, "v")
			}
			// The re-added key is among the last three added.
			if v, ok := r.Get(tc.deleted); !ok || v != "back" {
				t.Errorf("Get(%d) = %q, %v, want back, true", tc.deleted, v, ok)
			}
			if r.Len() > 3 {
				t.Errorf("Len() = %d, want at most 3", r.Len())
			}
		})
	}
}
