package codex_test

import (
	"context"
	"io"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/codex"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// BenchmarkParse is the plugin's parser over a 50 MB stream, read as Run
// reads it, beside the split-and-decode baseline.
func BenchmarkParse(b *testing.B) {
	plugintest.BenchParse(b, streams(b), func(r io.Reader) error {
		return codex.ReadStream(r, codex.NewParser(func(core.Event) {}))
	})
}

// BenchmarkTurnStart is message → model request for a Codex turn through
// the app-server started cold (spawned with the message) and warm
// (spawned before, its thread resumed); the medians are reported.
func BenchmarkTurnStart(b *testing.B) {
	model := plugintest.NewOpenAI(b)
	home := plugintest.Home(b)
	workdir, _ := filepath.EvalSymlinks(b.TempDir())
	p := codex.New(codex.Config{Bin: plugintest.CLIPath(b, "codex"), Args: plugintest.CodexArgs(model), Model: "gpt-5.5",
		Home: filepath.Join(home, ".codex"), Env: plugintest.CodexEnv(b, home)}, nil)
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
	model.Push(plugintest.Reply{Text: []string{"ok"}})
	res, err := p.Run(ctx, core.Turn{Workdir: workdir, Prompt: "start", Ask: true}, func(core.Event) {})
	if err != nil {
		b.Fatal(err)
	}
	token := res.ResumeToken
	var cold, warm []time.Duration
	for b.Loop() {
		model.Push(plugintest.Reply{Text: []string{"ok"}})
		cold = append(cold, untilRequest(func() {
			res, err = p.Run(ctx, core.Turn{Workdir: workdir, Prompt: "cold", ResumeToken: token, Ask: true}, func(core.Event) {})
		}))
		if err != nil {
			b.Fatal(err)
		}
		w, err := p.Warm(ctx, core.Turn{Workdir: workdir, ResumeToken: token, Ask: true})
		if err != nil {
			b.Fatal(err)
		}
		time.Sleep(3 * time.Second) // the server has started, as between two messages of a person
		model.Push(plugintest.Reply{Text: []string{"ok"}})
		warm = append(warm, untilRequest(func() {
			res, err = w.Run(ctx, core.Turn{Workdir: workdir, ResumeToken: token, Ask: true, Prompt: "warm"}, func(core.Event) {})
		}))
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
