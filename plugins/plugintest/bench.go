package plugintest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
)

// BenchParse measures a plugin's parser over the recorded streams in
// files, repeated to about 50 MB, as sub-benchmark "plugin", beside
// "baseline": only splitting lines and decoding each into a
// map[string]any, the least any parser of such a stream must do. read
// reads the whole stream as the plugin's Run reads its CLI's output.
func BenchParse(b *testing.B, files []string, read ReadFunc) {
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
			if _, err := read(bytes.NewReader(data), func(core.Event) {}); err != nil {
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

// BenchTurnStart measures what a warm CLI saves: the time from handing a
// message to the fixture's CLI until its model gets the request, for a
// turn started cold (the CLI spawned with the message) and warm (spawned
// before, waiting resumed on the session, as between two messages of a
// person). Each op is one cold and one warm turn of the same conversation
// in the fixture's workdir; the medians are reported.
func BenchTurnStart(b *testing.B, f *Fixture) {
	model, p, workdir := f.Model, f.Plugin, f.Workdir
	warmer, ok := p.(core.Warmer)
	if !ok {
		b.Fatal("the plugin cannot start a turn warm")
	}
	untilRequest := func(run func()) time.Duration {
		for len(model.Arrived()) > 0 {
			<-model.Arrived()
		}
		start := time.Now()
		took := make(chan time.Duration, 1)
		go func() { <-model.Arrived(); took <- time.Since(start) }()
		run()
		return <-took
	}
	ctx := context.Background()
	turn := func(prompt, token string) core.Turn {
		return core.Turn{Workdir: workdir, Prompt: prompt, SessionID: token, Ask: true}
	}
	model.Push(Reply{Text: []string{"ok"}})
	res, err := p.Run(ctx, turn("start", ""), func(core.Event) {})
	if err != nil {
		b.Fatal(err)
	}
	var cold, warm []time.Duration
	for b.Loop() {
		model.Push(Reply{Text: []string{"ok"}})
		cold = append(cold, untilRequest(func() { res, err = p.Run(ctx, turn("cold", res.SessionID), func(core.Event) {}) }))
		if err != nil {
			b.Fatal(err)
		}
		w, err := warmer.Warm(ctx, turn("", res.SessionID))
		if err != nil {
			b.Fatal(err)
		}
		time.Sleep(3 * time.Second) // the CLI has started, as between two messages of a person
		model.Push(Reply{Text: []string{"ok"}})
		warm = append(warm, untilRequest(func() { res, err = w.Run(ctx, turn("warm", res.SessionID), func(core.Event) {}) }))
		if err != nil {
			b.Fatal(err)
		}
	}
	median := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2].Microseconds()) / 1000
	}
	b.ReportMetric(median(cold), "cold-ms")
	b.ReportMetric(median(warm), "warm-ms")
}

// BenchConversations measures p's listing of workdir, which holds n
// sessions titled "prompt 0" to "prompt <n-1>", the last the newest.
func BenchConversations(b *testing.B, p core.Plugin, workdir string, n int) {
	b.ResetTimer()
	for b.Loop() {
		infos, err := p.Conversations(context.Background(), workdir)
		if err != nil || len(infos) != n || infos[0].Title != fmt.Sprintf("prompt %d", n-1) {
			b.Fatalf("Conversations = %d sessions, %v", len(infos), err)
		}
	}
}
