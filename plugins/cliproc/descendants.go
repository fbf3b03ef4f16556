package cliproc

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// markVar names the variable that marks every process of one CLI run:
// descendants inherit it even when they leave the CLI's process group
// (setsid, tmux new -d, daemons), so the bot can still find and kill them.
const markVar = "JAKEBOT_RUN"

// newMark returns a fresh "JAKEBOT_RUN=<random>" entry.
func newMark() string {
	var b [8]byte
	rand.Read(b[:])
	return markVar + "=" + hex.EncodeToString(b[:])
}

// markedPIDs returns the running processes whose environment holds mark,
// except this one. Processes it may not read are skipped.
func markedPIDs(mark string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	needle := []byte(mark + "\x00")
	self := os.Getpid()
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(append(env, 0), needle) {
			continue
		}
		if state(pid) != "Z" {
			pids = append(pids, pid)
		}
	}
	return pids
}

// runMark returns the run mark ("JAKEBOT_RUN=<random>") in process pid's
// environment, or "" when it has none or cannot be read.
func runMark(pid int) string {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return ""
	}
	for kv := range bytes.SplitSeq(env, []byte{0}) {
		if bytes.HasPrefix(kv, []byte(markVar+"=")) {
			return string(kv)
		}
	}
	return ""
}

// procStat is what /proc/PID/stat says of a process.
type procStat struct {
	pid, ppid, pgrp int
	state           string // "R", "S", "Z"...
}

// readStat reads process pid's stat; false when it is gone.
func readStat(pid int) (procStat, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	// After "pid (comm) ": state, ppid, pgrp. The command may hold
	// spaces and parentheses: the last ")" ends it.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 3 {
		return procStat{}, false
	}
	st := procStat{pid: pid, state: f[0]}
	st.ppid, _ = strconv.Atoi(f[1])
	st.pgrp, _ = strconv.Atoi(f[2])
	return st, true
}

// eachProcess calls f with every process's stat until f returns false.
// It reports false when /proc cannot be read.
func eachProcess(f func(procStat) bool) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readStat(pid); ok && !f(st) {
			break
		}
	}
	return true
}

// state returns the state letter of process pid, or "" when it is gone.
func state(pid int) string {
	st, _ := readStat(pid)
	return st.state
}

// killMarked kills every process that carries mark and waits, up to
// groupGoneWait, until none runs: what a CLI started outside its process
// group must not outlive the turn, nor hold its output open.
func killMarked(mark string) {
	pids := markedPIDs(mark)
	if len(pids) == 0 {
		return
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			continue
		}
	}
	deadline := time.Now().Add(groupGoneWait)
	for time.Now().Before(deadline) && len(markedPIDs(mark)) > 0 {
		time.Sleep(2 * time.Millisecond)
	}
}
