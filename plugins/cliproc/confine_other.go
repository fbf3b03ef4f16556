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

// ReapOrphans does nothing outside Linux.
func ReapOrphans(context.Context) {}

func recordCLI(int) {}

func forgetCLI(int) {}

var startMu sync.RWMutex
