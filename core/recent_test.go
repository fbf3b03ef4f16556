package core_test

import (
	"testing"

	"github.com/jake-bot/jake-bot/core"
)

func TestRecentForgetsTheOldest(t *testing.T) {
	t.Parallel()
	r := core.NewRecent[int, string](3)
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
