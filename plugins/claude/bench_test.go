package claude_test

import (
	"context"
	"io"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/claude"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// BenchmarkParse is the plugin's parser over a 50 MB stream, read as Run
// reads it, beside the split-and-decode baseline.
func BenchmarkParse(b *testing.B) {
	plugintest.BenchParse(b, streams(b), func(r io.Reader) error {
		emit := func(core.Event) {}
		return claude.ReadStream(r, claude.NewParser(emit), emit)
	})
}

// BenchmarkTurnStart measures what a warm CLI saves: the time from handing
// a message to the CLI until the model gets the request, for a turn
// started cold (the CLI spawned with the message) and warm (spawned
// before, waiting resumed on the session). Each op is one cold and one
// warm turn of the same conversation; the medians are reported.
func BenchmarkTurnStart(b *testing.B) {
	model := plugintest.NewAnthropic(b)
	home := plugintest.Home(b)
	workdir, _ := filepath.EvalSymlinks(b.TempDir())
	p := claude.New(claude.Config{Bin: plugintest.CLIPath(b, "claude"), PermissionMode: "default",
		ConfigDir: filepath.Join(home, ".claude"), Env: plugintest.ClaudeEnv(b, model, home)}, nil)
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
		token = res.ResumeToken
		w, err := p.Warm(ctx, core.Turn{Workdir: workdir, ResumeToken: token, Ask: true})
		if err != nil {
			b.Fatal(err)
		}
		time.Sleep(3 * time.Second) // the CLI has started, as between two messages of a person
		model.Push(plugintest.Reply{Text: []string{"ok"}})
		warm = append(warm, untilRequest(func() {
			res, err = w.Run(ctx, core.Turn{Workdir: workdir, ResumeToken: token, Ask: true, Prompt: "warm"}, func(core.Event) {})
		}))
		if err != nil {
			b.Fatal(err)
		}
		token = res.ResumeToken
	}
	median := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2].Microseconds()) / 1000
	}
	b.ReportMetric(median(cold), "cold-ms")
	b.ReportMetric(median(warm), "warm-ms")
}
