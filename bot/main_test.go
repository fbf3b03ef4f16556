package bot_test

import (
	"fmt"
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

func TestMain(m *testing.M) {
	// The test binary also plays a configured CLI (plugins_test.go).
	switch os.Getenv("JAKEBOT_HELPER") {
	case "":
	case "echo":
		fmt.Printf("echo: %s\n", strings.Join(os.Args[1:], " "))
		os.Exit(0)
	default:
		os.Exit(2)
	}
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}
