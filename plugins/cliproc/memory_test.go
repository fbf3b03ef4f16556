package cliproc_test

import (
	"os"
	"os/exec"
	"testing"

	"github.com/jake-bot/jake-bot/plugins/cliproc"
)

// A process tree's memory counts its children's: a warm CLI is a Node
// process and what it started.
func TestTreeRSS(t *testing.T) {
	self := cliproc.TreeRSS([]int{os.Getpid()})
	if self <= 0 {
		t.Fatalf("TreeRSS of this process = %d, want its resident memory", self)
	}
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Skip("no sleep here:", err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	tree := cliproc.TreeRSS([]int{os.Getpid()})
	alone := cliproc.TreeRSS([]int{child.Process.Pid})
	if alone <= 0 || tree < alone {
		t.Errorf("TreeRSS: child %d bytes, this process with it %d (alone %d)", alone, tree, self)
	}
	if got := cliproc.TreeRSS(nil); got != 0 {
		t.Errorf("TreeRSS(nil) = %d", got)
	}
}
