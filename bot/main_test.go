package bot_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
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
// recorded stream and exits; with JAKEBOT_FAKE_CLAUDE it behaves as that
// mode of fakeClaude says; with JAKEBOT_HELPER=echo it plays a configured
// CLI (plugins_test.go).
func TestMain(m *testing.M) {
	if os.Getenv("JAKEBOT_HELPER") == "echo" {
		fmt.Printf("echo: %s\n", strings.Join(os.Args[1:], " "))
		os.Exit(0)
	}
	if stream := os.Getenv("JAKEBOT_FAKE_STREAM"); stream != "" {
		f, err := os.Open(stream)
		if err != nil {
			os.Exit(2)
		}
		io.Copy(os.Stdout, f)
		os.Exit(0)
	}
	if name := os.Getenv(loadRunnerEnv); name != "" {
		os.Exit(runLoadRunner(name))
	}
	if mode := os.Getenv("JAKEBOT_FAKE_CLAUDE"); mode != "" {
		os.Exit(fakeClaude(mode))
	}
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}
