package plugintest

import (
	"bytes"
	"testing"

	"github.com/jake-bot/jake-bot/core"
)

// Recordings are what a CLI wrote, recorded for its plugin's golden
// tests, fuzz target and parser benchmark: one-shot streams and the
// sessions of the protocol it speaks on stdin, each read as the plugin's
// turn reads its CLI's output.
type Recordings struct {
	// Streams and Sessions are glob patterns (Streams); each session's
	// golden file is named with SessionPrefix.
	Streams, Sessions []string
	SessionPrefix     string
	Read              ReadFunc
}

// Goldens checks every recording against its golden file (Goldens).
func (r Recordings) Goldens(t *testing.T, update bool) {
	Goldens(t, Streams(t, r.Streams...), "", update, r.Read)
	if len(r.Sessions) > 0 {
		Goldens(t, Streams(t, r.Sessions...), r.SessionPrefix, update, r.Read)
	}
}

// Fuzz reads whatever the fuzzer makes of the recordings and of seeds,
// twice over, which must never fail (a CLI's output is read, not
// trusted).
func (r Recordings) Fuzz(f *testing.F, seeds ...[]byte) {
	FuzzSeeds(f, Streams(f, append(r.Streams, r.Sessions...)...))
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := r.Read(bytes.NewReader(append(data, data...)), func(core.Event) {}); err != nil {
			t.Fatal(err)
		}
	})
}

// BenchParse measures the plugin's parser over the one-shot streams
// (BenchParse).
func (r Recordings) BenchParse(b *testing.B) {
	BenchParse(b, Streams(b, r.Streams...), r.Read)
}
