package bot_test

import (
	"io"
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

// TestMain also lets the test binary stand in for a CLI (the os/exec
// helper process pattern): with JAKEBOT_FAKE_STREAM set it prints that
// recorded stream and exits.
func TestMain(m *testing.M) {
	if stream := os.Getenv("JAKEBOT_FAKE_STREAM"); stream != "" {
		f, err := os.Open(stream)
		if err != nil {
			os.Exit(2)
		}
		io.Copy(os.Stdout, f)
		os.Exit(0)
	}
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}
