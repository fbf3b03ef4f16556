package cliproc

import (
	"os/exec"
	"runtime"

	"golang.org/x/sys/unix"
)

// HideFromChildren makes this process's memory and /proc files, environ
// among them, unreadable to the CLIs it starts: a process that is not
// dumpable passes the kernel's ptrace access check only for a caller with
// CAP_SYS_PTRACE, which start withholds. The bot's tokens stay its own
// even though the agents run as the same user.
func HideFromChildren() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}

// start starts cmd from a thread of its own whose capability bounding set
// lacks CAP_SYS_PTRACE, so that a CLI running as root cannot read the bot
// either. The bounding set belongs to a thread and passes to its
// children, hence the locked thread, which ends with its goroutine.
// Without CAP_SETPCAP (not root) there is nothing to drop.
func start(cmd *exec.Cmd) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread is not reused
		_ = unix.Prctl(unix.PR_CAPBSET_DROP, unix.CAP_SYS_PTRACE, 0, 0, 0)
		errc <- cmd.Start()
	}()
	return <-errc
}
