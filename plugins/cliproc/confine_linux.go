package cliproc

import (
	"os/exec"
	"runtime"

	"golang.org/x/sys/unix"
)

// HideFromChildren makes this process's memory and /proc files, environ
// among them, unreadable to the CLIs it starts: a process that is not
// dumpable passes the kernel's ptrace access check only for a caller with
// one of withheldCaps, which start withholds. The bot's tokens stay its
// own even though the agents run as the same user.
func HideFromChildren() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}

// withheldCaps are the capabilities that read another process's memory
// or environment, or the kernel's: CAP_SYS_PTRACE, and CAP_SYS_ADMIN and
// CAP_PERFMON, which let a root CLI read a non-dumpable process's
// /proc/PID/environ (measured on Linux 6.18); CAP_BPF, CAP_SYS_MODULE
// and CAP_SYS_RAWIO reach any memory. A container's default set (Docker's)
// has none of them.
var withheldCaps = []uintptr{unix.CAP_SYS_PTRACE, unix.CAP_SYS_ADMIN, unix.CAP_PERFMON, unix.CAP_BPF, unix.CAP_SYS_MODULE, unix.CAP_SYS_RAWIO}

// start starts cmd from a thread of its own whose capability bounding set
// lacks withheldCaps, so that a CLI running as root cannot read the bot
// either. The bounding set belongs to a thread and passes to its
// children, hence the locked thread, which ends with its goroutine.
// Without CAP_SETPCAP (not root) there is nothing to drop, and a kernel
// that does not know a capability has nothing to drop either.
func start(cmd *exec.Cmd) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread is not reused
		for _, c := range withheldCaps {
			_ = unix.Prctl(unix.PR_CAPBSET_DROP, c, 0, 0, 0)
		}
		errc <- cmd.Start()
	}()
	return <-errc
}
