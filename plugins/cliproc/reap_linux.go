package cliproc

import (
	"context"
	"os"
	"os/signal"
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
	self := os.Getpid()
	var pids []int
	eachProcess(func(st procStat) bool {
		if st.state == "Z" && st.ppid == self {
			pids = append(pids, st.pid)
		}
		return true
	})
	return pids
}
