package gitrepo

import (
	"context"
	"testing"
)

func TestAtLeast(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		text string
		want bool
	}{
		{"git version 2.39.5", true},
		{"git version 2.38.0", true},
		{"git version 2.37.7 (Apple Git-1)", false},
		{"git version 3.0.0", true},
		{"git version 1.99", false},
		{"no version here", false},
	} {
		if got := atLeast(tt.text, MinVersion); got != tt.want {
			t.Errorf("atLeast(%q, %v) = %v, want %v", tt.text, MinVersion, got, tt.want)
		}
	}
}

func TestCheckGit(t *testing.T) {
	t.Parallel()
	// The tests of this package need git anyway.
	if v, err := CheckGit(context.Background()); err != nil {
		t.Fatalf("CheckGit() = %q, %v; want this machine's git", v, err)
	}
}

func TestCheckGitMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // not parallel: it changes the process's PATH
	if v, err := CheckGit(context.Background()); err == nil {
		t.Errorf("CheckGit() with no git on PATH = %q, nil; want an error", v)
	}
}
