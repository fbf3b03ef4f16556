package cliproc

import (
	"context"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The CLIs Start started and has not yet waited for. The reaper must never
// reap one of them: os/exec's Wait would then fail and the CLI's exit
// status would be lost. Start holds startMu's read side from before the
// fork until the pid is recorded; the reaper holds the write side.
var (
	startMu sync.RWMutex
	oursMu  sync.Mutex
	ours    = map[int]bool{}
)

func recordCLI(pid int) {
	oursMu.Lock()
	defer oursMu.Unlock()
	ours[pid] = true
}

func forgetCLI(pid int) {
	oursMu.Lock()
	defer oursMu.Unlock()
	delete(ours, pid)
}

// ReapOrphans reaps, until ctx ends, the exited processes that become
// this process's children without being CLIs it started: when jakebot
// runs as PID 1 (a container without an init), every orphan on the
// system is reparented to it, and nobody else would wait for them, so
// zombies would pile up. Anywhere else the real init reaps them, and
// ReapOrphans does nothing.
func ReapOrphans(ctx context.Context) {
	if os.Getpid() != 1 {
		return
	}
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)
	go func() {
		defer signal.Stop(chld)
		// SIGCHLD signals coalesce: a slow sweep catches what they miss.
		tick := time.NewTicker(30 * time.Second)
		defer tick.Stop()
		for {
			reapOrphans()
			select {
			case <-ctx.Done():
				return
			case <-chld:
			case <-tick.C:
			}
		}
	}()
}

// reapOrphans waits for every zombie child that is not one of ours.
func reapOrphans() {
	startMu.Lock()
	defer startMu.Unlock()
	for _, pid := range zombieChildren() {
		oursMu.Lock()
		mine := ours[pid]
		oursMu.Unlock()
		if mine {
			continue
		}
		var ws unix.WaitStatus
		unix.Wait4(pid, &ws, unix.WNOHANG, nil)
	}
}

// zombieChildren lists this process's children that have exited and wait
// to be reaped.
func zombieChildren() []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := strconv.Itoa(os.Getpid())
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// After "pid (comm) ": state, ppid.
		i := strings.LastIndexByte(string(data), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(data[i+1:]))
		if len(f) >= 2 && f[0] == "Z" && f[1] == self {
			pids = append(pids, pid)
		}
	}
	return pids
}
