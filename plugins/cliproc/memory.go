package cliproc

import (
	"os"
	"strconv"
	"strings"
)

// TreeRSS returns the resident memory (VmRSS), in bytes, of the processes
// pids and all their descendants: what warm CLIs waiting for their turn
// hold, a Node CLI with the helpers it started (issue 33).
func TreeRSS(pids []int) int64 {
	if len(pids) == 0 {
		return 0
	}
	children := map[int][]int{}
	eachProcess(func(st procStat) bool {
		children[st.ppid] = append(children[st.ppid], st.pid)
		return true
	})
	var total int64
	seen := map[int]bool{}
	stack := append([]int(nil), pids...)
	for len(stack) > 0 {
		pid := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		total += processRSS(pid)
		stack = append(stack, children[pid]...)
	}
	return total
}

// processRSS returns process pid's resident memory in bytes, 0 when it
// is gone.
func processRSS(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}
