//go:build !linux

package cliproc

import "os/exec"

// HideFromChildren does nothing outside Linux.
func HideFromChildren() error { return nil }

func start(cmd *exec.Cmd) error { return cmd.Start() }
