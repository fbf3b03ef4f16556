package codex_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/codex"
)

// bigStream repeats the recorded streams to about 50 MB.
func bigStream(b *testing.B) []byte {
	b.Helper()
	var one bytes.Buffer
	for _, f := range streams(b) {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		one.Write(bytes.TrimSpace(data))
		one.WriteByte('\n')
	}
	return bytes.Repeat(one.Bytes(), 50<<20/one.Len()+1)
}

// BenchmarkParse is the plugin's parser over a 50 MB stream, read as Run
// reads it.
func BenchmarkParse(b *testing.B) {
	data := bigStream(b)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		p := codex.NewParser(func(core.Event) {})
		if err := codex.ReadStream(bytes.NewReader(data), p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseBaseline only splits lines and decodes each into a map:
// the least any parser of this stream must do.
func BenchmarkParseBaseline(b *testing.B) {
	data := bigStream(b)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for sc.Scan() {
			var m map[string]any
			_ = json.Unmarshal(sc.Bytes(), &m)
		}
	}
}
