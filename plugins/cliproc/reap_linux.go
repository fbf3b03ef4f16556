package cliproc

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The CLIs Start started and has not yet waited for, each with its run's
// mark. Neither the reaper nor killEscaped may touch one of them: os/exec's
// Wait would then fail and the CLI's exit status would be lost. Start
// holds startMu's read side from before the fork until the pid is
// recorded; the reaper and killEscaped hold the write side.
var (
	startMu sync.RWMutex
	oursMu  sync.Mutex
	ours    = map[int]string{}
	// adopting is set once AdoptOrphans made this process the parent of
	// its CLIs' orphans.
	adopting atomic.Bool
)

func recordCLI(pid int, mark string) {
	oursMu.Lock()
	defer oursMu.Unlock()
	ours[pid] = mark
}

// forgetCLI forgets the CLI of that pid and mark: not a later one that
// reused the pid.
func forgetCLI(pid int, mark string) {
	oursMu.Lock()
	defer oursMu.Unlock()
	if ours[pid] == mark {
		delete(ours, pid)
	}
}

// AdoptOrphans makes this process the parent of every orphan its CLIs
// leave (a Linux child subreaper; PID 1 is one already), so that what
// escaped a CLI's process group and dropped its run's mark is still
// found, by parentage, and killed when the CLI exits; and it reaps them,
// until ctx ends. Call it once, at start-up, before any CLI starts.
//
// Every other child this process starts (git, say) must stay in its
// process group: that is how they are told from the orphans, whose exit
// statuses nobody else waits for.
func AdoptOrphans(ctx context.Context) error {
	if os.Getpid() != 1 {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("become a child subreaper: %w", err)
		}
	}
	adopting.Store(true)
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
	return nil
}

// reapOrphans waits for every exited orphan.
func reapOrphans() {
	startMu.Lock()
	defer startMu.Unlock()
	for _, st := range orphans() {
		if st.state == "Z" {
			var ws unix.WaitStatus
			unix.Wait4(st.pid, &ws, unix.WNOHANG, nil)
		}
	}
}

// orphans lists this process's children that it did not start itself:
// neither a CLI it has yet to wait for, nor a process in its own process
// group (what os/exec starts without a group of its own). Call it with
// startMu held for writing.
func orphans() []procStat {
	self, group := os.Getpid(), syscall.Getpgrp()
	oursMu.Lock()
	defer oursMu.Unlock()
	var out []procStat
	eachProcess(func(st procStat) bool {
		if _, mine := ours[st.pid]; st.ppid == self && !mine && st.pgrp != group {
			out = append(out, st)
		}
		return true
	})
	return out
}

// killEscaped kills the orphans this process adopted, except those that
// carry the mark of a CLI still running (they are that turn's, killed when
// it ends), and waits, up to groupGoneWait, until none runs. Killing one
// hands its own children to this process: they go in the next round.
func killEscaped() {
	if !adopting.Load() {
		return
	}
	defer reapOrphans()
	deadline := time.Now().Add(groupGoneWait)
	for time.Now().Before(deadline) && killOrphans() > 0 {
		time.Sleep(2 * time.Millisecond)
	}
}

// killOrphans sends SIGKILL to every running orphan not marked by a
// running CLI and returns how many still ran. A zombie orphan holds its
// pid until reaped, and only reapOrphans reaps it, under the same lock:
// the pid cannot be another process's by the time it is signalled.
func killOrphans() int {
	startMu.Lock()
	defer startMu.Unlock()
	live := liveMarks()
	n := 0
	for _, st := range orphans() {
		if st.state == "Z" || live[runMark(st.pid)] {
			continue
		}
		syscall.Kill(st.pid, syscall.SIGKILL)
		n++
	}
	return n
}

// liveMarks returns the marks of the CLIs still running.
func liveMarks() map[string]bool {
	oursMu.Lock()
	defer oursMu.Unlock()
	live := make(map[string]bool, len(ours))
	for _, mark := range ours {
		live[mark] = true
	}
	return live
}

// KillAll kills every CLI still running, with everything it started, and
// waits, up to groupGoneWait each, until none runs: the last thing jakebot
// does, so that a turn that would not end does not outlive it.
func KillAll() {
	oursMu.Lock()
	running := make(map[int]string, len(ours))
	for pid, mark := range ours {
		running[pid] = mark
	}
	oursMu.Unlock()
	for pid, mark := range running {
		killGroup(pid)
		killMarked(mark)
	}
	killEscaped()
}
