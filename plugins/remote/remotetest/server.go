package remotetest

import (
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// NATS runs a real NATS server with JetStream in the test process, on
// loopback, until the test ends, and returns its client URL.
func NATS(t testing.TB) string {
	t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true,
		JetStream: true, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server did not start")
	}
	t.Cleanup(s.Shutdown)
	return s.ClientURL()
}
