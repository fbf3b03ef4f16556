package metrics_test

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/bot/metrics"
	"github.com/jake-bot/jake-bot/core"
)

func TestMetricsExposition(t *testing.T) {
	t.Parallel()
	m := metrics.New(func() core.Stats { return core.Stats{Conversations: 7, Running: 2, Warm: 4, Queued: 3} }, func() int64 { return 2 }, func() int64 { return 600 << 20 })
	m.Record(core.Record{Kind: core.RecordTurn, Plugin: "claude", Outcome: core.OutcomeOK, Duration: 4 * time.Second,
		CostUSD: 0.25, InputTokens: 1200, OutputTokens: 30})
	m.Record(core.Record{Kind: core.RecordTurn, Plugin: "claude", Outcome: core.OutcomeIdleTimeout, Duration: time.Minute,
		CostUSD: 0.5, InputTokens: 800, OutputTokens: 20})
	m.Record(core.Record{Kind: core.RecordTurn, Plugin: "codex", Outcome: core.OutcomeOK, Duration: time.Second,
		InputTokens: 5000, OutputTokens: 100})
	m.Record(core.Record{Kind: core.RecordCommand, Outcome: core.OutcomeOK})
	m.Record(core.Record{Kind: core.RecordLimited})
	for range 5 {
		m.Delivery("discord", core.DeliveryEdit)
	}
	m.Delivery("discord", core.DeliverySend)
	m.Delivery("discord", core.DeliveryRateLimited)

	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{
		`jakebot_turns_total{outcome="ok",plugin="claude"} 1`,
		`jakebot_turns_total{outcome="idle_timeout",plugin="claude"} 1`,
		`jakebot_turn_duration_seconds_bucket{plugin="claude",le="5"} 1`,
		`jakebot_turn_duration_seconds_count{plugin="claude"} 2`,
		`jakebot_spend_usd_total{plugin="claude"} 0.75`,
		`jakebot_spend_usd_total{plugin="codex"} 0`,
		`jakebot_tokens_total{direction="input",plugin="claude"} 2000`,
		`jakebot_tokens_total{direction="output",plugin="claude"} 50`,
		`jakebot_tokens_total{direction="input",plugin="codex"} 5000`,
		`jakebot_tokens_total{direction="output",plugin="codex"} 100`,
		`jakebot_commands_total{outcome="ok"} 1`,
		`jakebot_messages_refused_total{reason="rate_limited"} 1`,
		`jakebot_edits_sent_total{platform="discord"} 5`,
		`jakebot_messages_sent_total{platform="discord"} 1`,
		`jakebot_rate_limit_waits_total{platform="discord"} 1`,
		`jakebot_conversations_active 7`,
		`jakebot_turns_running 2`,
		`jakebot_messages_queued 3`,
		`jakebot_cli_warm 4`,
		`jakebot_cli_warm_memory_bytes 6.291456e+08`,
		`jakebot_cli_processes_running 2`,
		`go_goroutines `,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}
