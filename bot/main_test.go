package bot_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// TestMain lets the test binary act as a fake Claude Code CLI (the os/exec
// helper-process pattern) when JAKEBOT_FAKE_CLAUDE names a behaviour; see
// fakeClaude.
func TestMain(m *testing.M) {
	if mode := os.Getenv("JAKEBOT_FAKE_CLAUDE"); mode != "" {
		os.Exit(fakeClaude(mode))
	}
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}
