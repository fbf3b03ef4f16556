// Package doctor checks what would and would not work before jakebot runs:
// each plugin's CLI (found, and its --version), hints that it can reach its
// model (an API key or a login file, never printed), each configured chat
// platform's tokens (well formed and, online, accepted), the allowed roots,
// the allow-lists, the plugins file and the sandbox the CLIs would run in. It is `jakebot doctor`.
package doctor

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jake-bot/jake-bot/bot"
)

// Status is a check's outcome.
type Status int

const (
	// OK works.
	OK Status = iota
	// Warn may not work; jakebot still starts.
	Warn
	// Fail is broken and required: doctor exits non-zero.
	Fail
	// Skip was not checked (an online check without --online).
	Skip
)

func (s Status) String() string {
	return [...]string{"ok", "warn", "FAIL", "skip"}[s]
}

// Check is one line of the report.
type Check struct {
	Area   string // "plugin", "platform", "config"
	Name   string
	Status Status
	Detail string
}

// Report is every check, in order.
type Report struct {
	Checks []Check
}

func (r *Report) add(area, name string, s Status, format string, args ...any) {
	detail := fmt.Sprintf(format, args...)
	r.Checks = append(r.Checks, Check{Area: area, Name: name, Status: s, Detail: strings.Join(strings.Fields(detail), " ")})
}

// Failed reports whether a required check failed.
func (r Report) Failed() bool {
	for _, c := range r.Checks {
		if c.Status == Fail {
			return true
		}
	}
	return false
}

// Write prints the report as a table and a closing line.
func (r Report) Write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "AREA\tCHECK\tSTATUS\tDETAIL")
	counts := map[Status]int{}
	for _, c := range r.Checks {
		counts[c.Status]++
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Area, c.Name, c.Status, c.Detail)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	verdict := "jakebot can start"
	if r.Failed() {
		verdict = "something required is broken"
	}
	_, err := fmt.Fprintf(w, "\n%d ok, %d warnings, %d failed, %d skipped: %s.\n",
		counts[OK], counts[Warn], counts[Fail], counts[Skip], verdict)
	return err
}

// Options tune how doctor checks.
type Options struct {
	// Online also asks each platform whether it accepts its token.
	Online bool
	// Timeout bounds each CLI's --version and each online request;
	// zero means 10 seconds.
	Timeout time.Duration
	// Getenv reads the environment for auth hints; nil is os.Getenv.
	Getenv func(string) string
	// Home is where login files are looked for; empty is the user's home.
	Home string
	// HTTP makes the online requests; nil is a plain client.
	HTTP *http.Client
	// NATSDialer, when set, makes the connection to NATS_URL (tests reach
	// a server named as another host on loopback).
	NATSDialer nats.CustomDialer
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Home == "" {
		o.Home, _ = os.UserHomeDir()
	}
	if o.HTTP == nil {
		o.HTTP = &http.Client{}
	}
	return o
}

// Run checks cfg and returns the report. It never changes anything.
func Run(ctx context.Context, cfg bot.Config, opts Options) Report {
	opts = opts.withDefaults()
	var r Report
	checkRoots(&r, cfg)
	checkPlugins(ctx, &r, cfg, opts)
	checkPlatforms(ctx, &r, cfg, opts)
	checkNATS(&r, cfg, opts)
	checkGit(ctx, &r, cfg)
	checkSandbox(ctx, &r, cfg)
	checkTranscribe(&r, cfg)
	if cfg.StateFile != "off" {
		checkWritable(&r, "STATE_FILE", cfg.StateFile, true)
	}
	checkWritable(&r, "AUDIT_LOG", cfg.AuditLog, false)
	return r
}
