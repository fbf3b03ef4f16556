package cliproc

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// landlockABI returns the kernel's Landlock ABI version, or why there is
// none to use.
func landlockABI() (int, error) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	switch {
	case errno == unix.ENOSYS:
		return 0, errors.New("this kernel has no Landlock")
	case errno == unix.EOPNOTSUPP:
		return 0, errors.New("this kernel has Landlock disabled (add landlock to lsm=)")
	case errno != 0:
		return 0, fmt.Errorf("landlock: %w", errno)
	}
	return int(v), nil
}

// Landlock's rights on files, by the ABI version that brought them.
const (
	llRead  = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	llABI1  = 1<<13 - 1 // execute to make_sym
	llFile  = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	llScope = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
)

// landlockHandled returns the file rights ABI abi knows, all of which the
// ruleset handles (denies unless a rule grants them).
func landlockHandled(abi int) uint64 {
	h := uint64(llABI1)
	if abi >= 2 {
		h |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		h |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		h |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return h
}

// rulesetAttr is struct landlock_ruleset_attr up to its scoped field
// (ABI 6); older kernels are given its first 8 or 16 bytes.
type rulesetAttr struct {
	handledFS, handledNet, scoped uint64
}

var errSandboxExecUsage = errors.New("usage: jakebot " + SandboxExecCommand + " [--write PATH | --read PATH]… -- BIN [ARG…]")

// SandboxExec is `jakebot sandbox-exec --write PATH… --read PATH… -- BIN
// ARGS…`: it restricts itself with Landlock to reading and writing the
// --write paths and reading the --read ones, signalling no process
// outside, drops every capability (a root bot's CLI keeps its files but
// not root's powers), and executes BIN. It returns only on failure.
func SandboxExec(args []string) error {
	var write, read []string
	for len(args) > 0 && args[0] != "--" {
		if len(args) < 2 || (args[0] != "--write" && args[0] != "--read") {
			return errSandboxExecUsage
		}
		if args[0] == "--write" {
			write = append(write, args[1])
		} else {
			read = append(read, args[1])
		}
		args = args[2:]
	}
	if len(args) < 2 {
		return errSandboxExecUsage
	}
	bin, argv := args[1], args[1:]
	// Landlock, capabilities and no_new_privs are the thread's, and pass
	// to what it executes.
	runtime.LockOSThread()
	abi, err := landlockABI()
	if err != nil {
		return err
	}
	handled := landlockHandled(abi)
	attr := rulesetAttr{handledFS: handled}
	size := unsafe.Sizeof(uint64(0))
	switch {
	case abi >= 6:
		attr.scoped = llScope
		size = unsafe.Sizeof(attr)
	case abi >= 4:
		size = 2 * unsafe.Sizeof(uint64(0))
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return fmt.Errorf("landlock_create_ruleset: %w", errno)
	}
	for _, p := range write {
		if err := allow(int(fd), p, handled); err != nil {
			return err
		}
	}
	for _, p := range read {
		if err := allow(int(fd), p, llRead&handled); err != nil {
			return err
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if err := dropCapabilities(); err != nil {
		return err
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", errno)
	}
	unix.Close(int(fd))
	return fmt.Errorf("exec %s: %w", bin, syscall.Exec(bin, argv, os.Environ()))
}

// allow adds a rule granting rights beneath path (a file gets the rights
// a file can have).
func allow(ruleset int, path string, rights uint64) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil // gone since: nothing to grant
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		rights &= llFile
	}
	rule := unix.LandlockPathBeneathAttr{Allowed_access: rights, Parent_fd: int32(fd)}
	if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&rule)), 0, 0, 0); errno != 0 {
		return fmt.Errorf("landlock_add_rule %s: %w", path, errno)
	}
	return nil
}

// dropCapabilities empties this thread's capability sets, its bounding
// set and ambient set included, so that nothing it executes has one, even
// as root. Without CAP_SETPCAP there is no bounding set to drop from.
func dropCapabilities() error {
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		_ = unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
	}
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("drop capabilities: %w", err)
	}
	return nil
}

// stopInside asks the processes of a sandboxed CLI's group to stop,
// bwrap's outer process (the group's leader, pgid) aside: it would die of
// SIGTERM and take the CLI down with it at once (--die-with-parent),
// where the CLI must end its turn gracefully; it exits when the CLI does.
// With nothing inside yet (bwrap still setting up), bwrap itself is
// stopped.
func stopInside(pgid int) error {
	signalled := false
	eachProcess(func(st procStat) bool {
		if st.pgrp == pgid && st.pid != pgid && st.state != "Z" {
			if syscall.Kill(st.pid, syscall.SIGTERM) == nil {
				signalled = true
			}
		}
		return true
	})
	if !signalled {
		return syscall.Kill(pgid, syscall.SIGTERM)
	}
	return nil
}
