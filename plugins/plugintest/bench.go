package plugintest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"testing"
)

// BenchParse measures a plugin's parser over the recorded streams in
// files, repeated to about 50 MB, as sub-benchmark "plugin", beside
// "baseline": only splitting lines and decoding each into a
// map[string]any, the least any parser of such a stream must do. parse
// reads the whole stream as the plugin's Run reads its CLI's output.
func BenchParse(b *testing.B, files []string, parse func(io.Reader) error) {
	var one bytes.Buffer
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		one.Write(bytes.TrimSpace(data))
		one.WriteByte('\n')
	}
	if one.Len() <= 1 {
		b.Fatal("no recorded streams to parse")
	}
	data := bytes.Repeat(one.Bytes(), 50<<20/one.Len()+1)
	b.Run("plugin", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if err := parse(bytes.NewReader(data)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("baseline", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			sc := bufio.NewScanner(bytes.NewReader(data))
			sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
			for sc.Scan() {
				var m map[string]any
				_ = json.Unmarshal(sc.Bytes(), &m)
			}
		}
	})
}
