//go:build !linux

package cliproc

import (
	"errors"
	"syscall"
)

func landlockABI() (int, error) { return 0, errors.New("no Landlock outside Linux") }

// SandboxExec fails outside Linux, which has no Landlock.
func SandboxExec([]string) error { return errors.New("no Landlock outside Linux") }

func stopInside(pgid int) error { return syscall.Kill(-pgid, syscall.SIGTERM) }
