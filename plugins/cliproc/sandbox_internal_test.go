package cliproc

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// What of a CLI's install its sandbox shows: the whole node_modules that
// holds it, a Python virtual environment, else the binary alone (never a
// folder that may hold the bot's .env); nothing for what /usr shows.
func TestInstallDir(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	file := func(path string) string {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	npm := file(filepath.Join(dir, "clis", "node_modules", "@openai", "codex", "bin", "codex.js"))
	venv := file(filepath.Join(dir, "venvs", "aider", "bin", "aider"))
	file(filepath.Join(dir, "venvs", "aider", "pyvenv.cfg"))
	loose := file(filepath.Join(dir, "bot", "claude"))
	file(filepath.Join(dir, "bot", ".env"))
	link := filepath.Join(dir, "bin-link")
	if err := os.Symlink(loose, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ bin, want string }{
		{npm, filepath.Join(dir, "clis", "node_modules")},
		{venv, filepath.Join(dir, "venvs", "aider")},
		{loose, loose},
		{link, loose},
		{"/usr/bin/env", ""},
	} {
		if got := installDir(tc.bin); got != tc.want {
			t.Errorf("installDir(%s) = %q, want %q", tc.bin, got, tc.want)
		}
	}
}

// SANDBOX_READ and SANDBOX_WRITE's paths: "~/" is the bot's home, and
// what does not exist is left out.
func TestExistingPaths(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got := existing([]string{"~/.gitconfig", " ", "~/.missing", "/usr"})
	if want := []string{filepath.Join(home, ".gitconfig"), "/usr"}; !slices.Equal(got, want) {
		t.Errorf("existing = %q, want %q", got, want)
	}
}

// A state file the sandbox creates holds its seed: Claude Code refuses an
// empty ~/.claude.json behind Landlock (JSON Parse error: Unexpected
// EOF), which a first turn in a new container hit. One that exists is
// left as it is.
func TestPrepareSeedsAMissingFile(t *testing.T) {
	dir := t.TempDir()
	missing, existing := filepath.Join(dir, "home", ".claude.json"), filepath.Join(dir, "kept.json")
	if err := os.WriteFile(existing, []byte(`{"kept":true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	got := prepare([]StatePath{{Path: missing, File: true, Seed: "{}"}, {Path: existing, File: true, Seed: "{}"}})
	if len(got) != 2 {
		t.Fatalf("prepare kept %d paths, want 2: %+v", len(got), got)
	}
	for path, want := range map[string]string{missing: "{}", existing: `{"kept":true}`} {
		if b, err := os.ReadFile(path); err != nil || string(b) != want {
			t.Errorf("%s holds %q (%v), want %q", path, b, err, want)
		}
	}
}
