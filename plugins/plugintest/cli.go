package plugintest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// ModuleRoot returns the repository's root directory (where go.mod is).
func ModuleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// CLIPath returns the path of a pinned CLI ("claude", "codex", "gemini")
// installed in testdata/clis. When it is missing the test is skipped with
// a message saying how to install it, or fails when JAKEBOT_REQUIRE_CLIS=1
// (as in CI).
func CLIPath(t testing.TB, name string) string {
	t.Helper()
	path := filepath.Join(ModuleRoot(), "testdata", "clis", "node_modules", ".bin", name)
	if _, err := os.Stat(path); err != nil {
		msg := fmt.Sprintf("pinned CLI %s not installed (%v); run: cd testdata/clis && npm ci", name, err)
		if os.Getenv("JAKEBOT_REQUIRE_CLIS") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return path
}

// Home creates a private home directory for one test and returns it, so
// that a CLI never reads or writes a developer's own history.
func Home(t testing.TB) string {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	return home
}

var markers atomic.Int64

// ProcessMarker returns an environment entry to give every process a test
// starts, and a function that lists the processes still running with it.
// Children inherit the environment, so this finds grandchildren too.
func ProcessMarker(t testing.TB) (env string, alive func() []Process) {
	t.Helper()
	value := fmt.Sprintf("%d-%d-%s", os.Getpid(), markers.Add(1), t.Name())
	env = "JAKEBOT_TEST_MARK=" + value
	needle := []byte(env + "\x00")
	return env, func() []Process {
		var found []Process
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
			if err != nil {
				continue
			}
			if bytes.Contains(append(data, 0), needle) && !isZombie(pid) {
				found = append(found, describe(pid))
			}
		}
		return found
	}
}

// Process is a process a test left running, described for the failure
// message: which program, in which state, whose child, in which group.
type Process struct {
	PID  int
	Stat string // "(comm) state ppid pgrp", from /proc/PID/stat
	Cmd  string
}

func (p Process) String() string { return fmt.Sprintf("%d %s %q", p.PID, p.Stat, p.Cmd) }

func describe(pid int) Process {
	p := Process{PID: pid}
	if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		if i := bytes.IndexByte(data, '('); i >= 0 {
			f := strings.Fields(string(data[i:]))
			p.Stat = strings.Join(f[:min(len(f), 4)], " ")
		}
	}
	if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil {
		p.Cmd = strings.TrimSpace(strings.ReplaceAll(string(data), "\x00", " "))
	}
	return p
}

// isZombie reports whether pid has exited but not been reaped; such a
// process runs nothing.
func isZombie(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the parenthesised command name.
	if i := bytes.LastIndexByte(data, ')'); i >= 0 && i+2 < len(data) {
		return data[i+2] == 'Z'
	}
	return false
}
