//go:build !linux

package cliproc

import (
	"errors"
	"syscall"
)

func landlockABI() (int, error) { return 0, errors.New("Landlock is Linux's") }

// SandboxExec fails outside Linux, which has no Landlock.
func SandboxExec([]string) error { return errors.New("Landlock is Linux's") }

func stopInside(pgid int) error { return syscall.Kill(-pgid, syscall.SIGTERM) }
