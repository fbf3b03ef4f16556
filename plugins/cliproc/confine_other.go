//go:build !linux

package cliproc

import (
	"context"
	"os/exec"
	"sync"
)

// HideFromChildren does nothing outside Linux.
func HideFromChildren() error { return nil }

func start(cmd *exec.Cmd) error { return cmd.Start() }

// AdoptOrphans does nothing outside Linux: orphans go to init.
func AdoptOrphans(context.Context) error { return nil }

// KillAll does nothing outside Linux.
func KillAll() {}

func killEscaped() {}

func recordCLI(int, string) {}

func forgetCLI(int, string) {}

var startMu sync.RWMutex
