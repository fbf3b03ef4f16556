package matrixtest

import (
	"net"
	"os"
	"testing"
)

// listensOn tells this process's listener from one another process
// holds: what keeps a test from taking another test binary's Dendrite,
// on a port both were given, for its own.
func TestListensOn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		t.Skip("no /proc/net/tcp")
	}
	for _, tt := range []struct {
		pid  int
		port string
		want bool
	}{
		{os.Getpid(), port, true},
		{os.Getppid(), port, false},
		{os.Getpid(), freePort(t), false},
	} {
		if got := listensOn(tt.pid, tt.port); got != tt.want {
			t.Errorf("listensOn(%d, %s) = %v, want %v", tt.pid, tt.port, got, tt.want)
		}
	}
}
