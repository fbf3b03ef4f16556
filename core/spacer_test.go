package core

import (
	"testing"
	"time"
)

func TestSpacer(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := NewSpacer(2, time.Minute, func() time.Time { return now })
	steps := []struct {
		advance time.Duration
		key     string
		want    bool
	}{
		{0, "a", true},
		{0, "a", false},
		{59 * time.Second, "a", false},
		{0, "b", true}, // each key has its own window
		{time.Second, "a", true},
		{0, "a", false},
	}
	for i, st := range steps {
		now = now.Add(st.advance)
		if due := s.Due(st.key); due != st.want {
			t.Errorf("step %d: Due(%q) = %v, want %v", i, st.key, due, st.want)
		}
		if got := s.Take(st.key); got != st.want {
			t.Errorf("step %d: Take(%q) = %v, want %v", i, st.key, got, st.want)
		}
	}
}
