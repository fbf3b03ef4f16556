package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/jake-bot/jake-bot/bot"
	"github.com/jake-bot/jake-bot/bot/doctor"
	"github.com/jake-bot/jake-bot/bot/replay"
)

// flags returns a flag set that prints its errors and usage to stderr.
func flags(name string, stdio bot.Stdio) *flag.FlagSet {
	fs := flag.NewFlagSet("jakebot "+name, flag.ContinueOnError)
	fs.SetOutput(stdio.Err)
	return fs
}

// runDoctor prints the checks' table; a failed required check exits 1.
func runDoctor(ctx context.Context, args, environ []string, stdio bot.Stdio) error {
	fs := flags("doctor", stdio)
	online := fs.Bool("online", false, "also ask each chat platform whether it accepts its token")
	timeout := fs.Duration("timeout", 10*time.Second, "bound on each CLI's --version and each online request")
	if err := fs.Parse(args); err != nil {
		return exitCode(2)
	}
	cfg, err := bot.LoadConfig(environ, ".env")
	if err != nil {
		return err
	}
	r := doctor.Run(ctx, cfg, doctor.Options{Online: *online, Timeout: *timeout, Getenv: getenv(environ)})
	if err := r.Write(stdio.Out); err != nil {
		return err
	}
	if r.Failed() {
		return exitCode(1)
	}
	return nil
}

// runWebURL prints the web page's sign-in URL, which the bot prints at
// start only on a terminal: under systemd or Docker its stderr is a log,
// and the URL holds WEB_TOKEN.
func runWebURL(args, environ []string, stdio bot.Stdio) error {
	fs := flags("web-url", stdio)
	if err := fs.Parse(args); err != nil || fs.NArg() != 0 {
		fmt.Fprintln(stdio.Err, "usage: jakebot web-url")
		return exitCode(2)
	}
	cfg, err := bot.LoadConfig(environ, ".env")
	if err != nil {
		return err
	}
	if !cfg.Web.Enabled() {
		return errors.New("WEB_ADDR is not set: the web page is off")
	}
	if err := cfg.Web.Validate(); err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdio.Out, cfg.Web.SignInURL())
	return err
}

// runReplay prints what a recorded stream becomes on a platform.
func runReplay(ctx context.Context, args, environ []string, stdio bot.Stdio) error {
	fs := flags("replay", stdio)
	plugin := fs.String("plugin", "claude", "the plugin whose parser reads the stream")
	platform := fs.String("platform", "discord", "the platform whose formatter renders it: "+strings.Join(replay.Platforms(), ", "))
	pluginsFile := fs.String("plugins-file", getenv(environ)("PLUGINS_FILE"), "a plugins file, to replay a configured plugin")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: jakebot replay [flags] FILE.jsonl (- reads stdin)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitCode(2)
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitCode(2)
	}
	specs, err := bot.Config{PluginsFile: *pluginsFile}.PluginSpecs(true)
	if err != nil {
		return err
	}
	parser, err := replay.Parser(*plugin, specs)
	if err != nil {
		return err
	}
	p, err := replay.PlatformNamed(*platform)
	if err != nil {
		return err
	}
	var in io.Reader = stdio.In
	if name := fs.Arg(0); name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	return replay.Run(ctx, parser, p, in, stdio.Out)
}

// getenv reads environ as os.Getenv reads the process's environment.
func getenv(environ []string) func(string) string {
	vars := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	return func(k string) string { return vars[k] }
}

// runHealth asks the running bot's HEALTH_ADDR for /healthz and exits 1
// unless it answers 200: a container's HEALTHCHECK, since the distroless
// image has no HTTP client of its own. An unspecified host (":9090",
// "0.0.0.0:9090") is asked on loopback.
func runHealth(ctx context.Context, args, environ []string, stdio bot.Stdio) error {
	fs := flags("health", stdio)
	timeout := fs.Duration("timeout", 5*time.Second, "bound on the request")
	if err := fs.Parse(args); err != nil || fs.NArg() != 0 {
		fmt.Fprintln(stdio.Err, "usage: jakebot health [--timeout 5s]")
		return exitCode(2)
	}
	cfg, err := bot.LoadConfig(environ, ".env")
	if err != nil {
		return err
	}
	if cfg.HealthAddr == "" {
		return errors.New("HEALTH_ADDR is not set: the bot serves no /healthz")
	}
	host, port, err := net.SplitHostPort(cfg.HealthAddr)
	if err != nil {
		return fmt.Errorf("HEALTH_ADDR: %w", err)
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+net.JoinHostPort(host, port)+"/healthz", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("health: %w", err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(stdio.Out, io.LimitReader(resp.Body, 64<<10)); err != nil {
		return fmt.Errorf("health: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintln(stdio.Err, "jakebot health:", resp.Status)
		return exitCode(1)
	}
	return nil
}
