// Package metrics exports jake-bot's metrics in the Prometheus format. It
// is the only package that imports the Prometheus client: core reports
// through core.Observer and Router.Stats, and this package turns that into
// counters, gauges and a histogram on its own registry.
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/jake-bot/jake-bot/core"
)

// Metrics is a core.Observer that counts what it is told. It is safe for
// concurrent use.
type Metrics struct {
	reg       *prometheus.Registry
	turns     *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	commands  *prometheus.CounterVec
	refused   *prometheus.CounterVec
	sends     *prometheus.CounterVec
	edits     *prometheus.CounterVec
	rateWaits *prometheus.CounterVec
	failures  *prometheus.CounterVec
	spend     *prometheus.CounterVec
	tokens    *prometheus.CounterVec
}

var _ core.Observer = (*Metrics)(nil)

// New returns metrics on a fresh registry. stats is read at each scrape for
// the active conversations, running turns and queued messages; children
// for the CLI processes running (plugins/cliproc.Running); warmMemory for
// the resident memory of the warm CLIs' process trees, in bytes.
func New(stats func() core.Stats, children, warmMemory func() int64) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		turns: counter("jakebot_turns_total",
			"Turns run, by plugin and outcome (ok, error, stopped, timeout, idle_timeout, shutdown, panic).", "plugin", "outcome"),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "jakebot_turn_duration_seconds", Help: "How long turns took, by plugin.",
			Buckets: []float64{1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800},
		}, []string{"plugin"}),
		spend: counter("jakebot_spend_usd_total",
			"What turns cost, in US dollars, as the CLIs reported it (Claude Code does; Codex and Gemini CLI report tokens only), by plugin.", "plugin"),
		tokens: counter("jakebot_tokens_total",
			"Model tokens turns used, as the CLIs reported them, by plugin and direction (input, output).", "plugin", "direction"),
		commands: counter("jakebot_commands_total",
			"Slash commands handled, by outcome.", "outcome"),
		refused: counter("jakebot_messages_refused_total",
			"Messages refused: not allowed, rate_limited by USER_RATE, or rejected (too long, NUL bytes, shutting down).", "reason"),
		sends: counter("jakebot_messages_sent_total",
			"New messages posted to platforms.", "platform"),
		edits: counter("jakebot_edits_sent_total",
			"Message edits sent to platforms.", "platform"),
		rateWaits: counter("jakebot_rate_limit_waits_total",
			"Writes a platform refused with a rate limit; the bot waited and retried.", "platform"),
		failures: counter("jakebot_write_failures_total",
			"Writes to a platform that failed for another reason.", "platform"),
	}
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f)
	}
	m.reg.MustRegister(m.turns, m.duration, m.spend, m.tokens, m.commands, m.refused, m.sends, m.edits, m.rateWaits, m.failures,
		gauge("jakebot_conversations_active", "Active conversations.", func() float64 { return float64(stats().Conversations) }),
		gauge("jakebot_turns_running", "Turns running now.", func() float64 { return float64(stats().Running) }),
		gauge("jakebot_messages_queued", "Messages waiting behind running turns.", func() float64 { return float64(stats().Queued) }),
		gauge("jakebot_cli_warm", "CLIs started for a next turn, waiting for its message.", func() float64 { return float64(stats().Warm) }),
		gauge("jakebot_cli_warm_ready", "Warm CLIs that have started (their protocol's handshake done), waiting for nothing but the message.",
			func() float64 { return float64(stats().WarmReady) }),
		gauge("jakebot_cli_warm_memory_bytes", "Resident memory (VmRSS) of the warm CLIs' processes and their descendants.",
			func() float64 { return float64(warmMemory()) }),
		gauge("jakebot_cli_processes_running", "Coding CLI processes running now.", func() float64 { return float64(children()) }),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// counter is a counter by labels.
func counter(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

// Record counts a command, turn or refusal.
func (m *Metrics) Record(r core.Record) {
	switch r.Kind {
	case core.RecordTurn:
		plugin := r.Plugin
		if plugin == "" {
			plugin = "unknown"
		}
		m.turns.WithLabelValues(plugin, r.Outcome).Inc()
		if r.Duration > 0 {
			m.duration.WithLabelValues(plugin).Observe(r.Duration.Seconds())
		}
		m.spend.WithLabelValues(plugin).Add(r.CostUSD)
		m.tokens.WithLabelValues(plugin, "input").Add(float64(r.InputTokens))
		m.tokens.WithLabelValues(plugin, "output").Add(float64(r.OutputTokens))
	case core.RecordCommand:
		m.commands.WithLabelValues(r.Outcome).Inc()
	case core.RecordRefused:
		m.refused.WithLabelValues("not_allowed").Inc()
	case core.RecordLimited:
		m.refused.WithLabelValues("rate_limited").Inc()
	case core.RecordRejected:
		m.refused.WithLabelValues("rejected").Inc()
	}
}

// Delivery counts one write to a platform.
func (m *Metrics) Delivery(platform string, op core.DeliveryOp) {
	switch op {
	case core.DeliverySend:
		m.sends.WithLabelValues(platform).Inc()
	case core.DeliveryEdit:
		m.edits.WithLabelValues(platform).Inc()
	case core.DeliveryRateLimited:
		m.rateWaits.WithLabelValues(platform).Inc()
	case core.DeliveryFailed:
		m.failures.WithLabelValues(platform).Inc()
	}
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Active says which gateway is active, for the gauges of the lease: this
// gateway or another, its name, and since when it holds the lease (zero
// when no holder is known).
type Active func() (self bool, holder string, since time.Time)

// Gateway adds the lease's gauges to m: jakebot_gateway_active, 1 while
// this gateway (name) is the active one, and
// jakebot_gateway_active_since_seconds, when the active gateway took the
// lease.
func (m *Metrics) Gateway(name string, active Active) {
	m.reg.MustRegister(gatewayGauges(name, active)...)
}

// Standby serves the lease's gauges alone, for a gateway that stands by
// and has no other metrics to give.
func Standby(name string, active Active) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(gatewayGauges(name, active)...)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}

func gatewayGauges(name string, active Active) []prometheus.Collector {
	self := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "jakebot_gateway_active",
		Help: "1 while this gateway holds the lease and serves the chats, 0 while it stands by.", ConstLabels: prometheus.Labels{"gateway": name}},
		func() float64 {
			if is, _, _ := active(); is {
				return 1
			}
			return 0
		})
	since := gaugeByHolder{active: active, desc: prometheus.NewDesc("jakebot_gateway_active_since_seconds",
		"When the active gateway (by name) took the lease, in seconds since the epoch.", []string{"active"}, nil)}
	return []prometheus.Collector{self, since}
}

// gaugeByHolder is jakebot_gateway_active_since_seconds, labelled with
// the active gateway's name, which changes.
type gaugeByHolder struct {
	active Active
	desc   *prometheus.Desc
}

func (g gaugeByHolder) Describe(ch chan<- *prometheus.Desc) { ch <- g.desc }

func (g gaugeByHolder) Collect(ch chan<- prometheus.Metric) {
	_, holder, since := g.active()
	if since.IsZero() {
		return
	}
	ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, float64(since.UnixMilli())/1000, holder)
}
