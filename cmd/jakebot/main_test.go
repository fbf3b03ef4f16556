package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/bot"
)

// runCmd runs jakebot's main with args and environ, returning its output.
func runCmd(t *testing.T, environ []string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut strings.Builder
	err = run(context.Background(), args, environ, bot.Stdio{In: strings.NewReader(""), Out: &out, Err: &errOut})
	return out.String(), errOut.String(), err
}

func TestReplayCommand(t *testing.T) {
	t.Parallel()
	out, _, err := runCmd(t, nil, "replay", "--platform", "console", filepath.Join("..", "..", "testdata", "claude", "text.jsonl"))
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	for _, want := range []string{"  send message 1 [text footer]\n    | Hello from the fake model.\n", "final messages on console (1):", "Hello from the fake model."} {
		if !strings.Contains(out, want) {
			t.Errorf("replay output lacks %q:\n%s", want, out)
		}
	}
}

func TestReplayCommandConfiguredPlugin(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "plugins.yaml")
	os.WriteFile(file, []byte(`plugins:
  - id: lines
    bin: no-need-to-install
    args: ["{message}"]
    mode: plain
`), 0o644)
	var out strings.Builder
	err := run(context.Background(), []string{"replay", "--plugin", "lines", "-"}, []string{"PLUGINS_FILE=" + file},
		bot.Stdio{In: strings.NewReader("one\ntwo\n"), Out: &out, Err: &out})
	if err != nil || !strings.Contains(out.String(), "    | one\n    | two\n") {
		t.Fatalf("replay of a configured plugin = %v:\n%s", err, out.String())
	}
}

func TestReplayCommandMistakes(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"replay"}, "usage: jakebot replay"},
		{[]string{"replay", "--plugin", "nope", "x.jsonl"}, `no plugin "nope" to replay`},
		{[]string{"replay", "--platform", "irc", "x.jsonl"}, `no platform "irc"`},
		{[]string{"replay", "missing.jsonl"}, "no such file"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
	} {
		_, stderr, err := runCmd(t, nil, tt.args...)
		if err == nil {
			t.Errorf("jakebot %q: no error", tt.args)
			continue
		}
		if msg := stderr + err.Error(); !strings.Contains(msg, tt.want) {
			t.Errorf("jakebot %q: %q, want it to mention %q", tt.args, msg, tt.want)
		}
	}
}

func TestDoctorCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cli := filepath.Join(dir, "claude")
	os.WriteFile(cli, []byte("#!/bin/sh\necho 2.0.0\n"), 0o755)

	out, _, err := runCmd(t, []string{"ALLOWED_ROOTS=" + dir, "CLAUDE_BIN=" + cli, "ANTHROPIC_API_KEY=sk-never-printed"}, "doctor")
	if err != nil {
		t.Fatalf("doctor with a working setup: %v\n%s", err, out)
	}
	if !strings.Contains(out, cli+" (2.0.0)") || strings.Contains(out, "sk-never-printed") {
		t.Errorf("doctor output:\n%s", out)
	}

	out, _, err = runCmd(t, []string{"ALLOWED_ROOTS=" + filepath.Join(dir, "gone"), "CLAUDE_BIN=" + cli}, "doctor")
	var code exitCode
	if !errors.As(err, &code) || code != 1 {
		t.Fatalf("doctor with a missing root = %v, want exit status 1\n%s", err, out)
	}
	if !strings.Contains(out, "something required is broken") {
		t.Errorf("doctor output:\n%s", out)
	}
}

// jakebot web-url prints the sign-in URL the bot prints at start only on
// a terminal, for a browser on this host.
func TestWebURLCommand(t *testing.T) {
	t.Parallel()
	const tok = "0123456789abcdef-web"
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		env     []string
		want    string
		wantErr string
	}{
		{name: "bare port", env: []string{"WEB_ADDR=:8080", "WEB_TOKEN=" + tok}, want: "http://127.0.0.1:8080/login?token=" + tok + "\n"},
		{name: "every address, TLS", env: []string{"WEB_ADDR=0.0.0.0:8443", "WEB_TOKEN=" + tok, "WEB_TLS_CERT=c.pem", "WEB_TLS_KEY=k.pem"},
			want: "https://127.0.0.1:8443/login?token=" + tok + "\n"},
		{name: "a host", env: []string{"WEB_ADDR=bot.example:80", "WEB_TOKEN=" + tok}, want: "http://bot.example:80/login?token=" + tok + "\n"},
		{name: "off", wantErr: "WEB_ADDR is not set"},
		{name: "short token", env: []string{"WEB_ADDR=:8080", "WEB_TOKEN=short"}, wantErr: "WEB_TOKEN must be set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := runCmd(t, append(tc.env, "ALLOWED_ROOTS="+dir), "web-url")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || out != "" {
					t.Errorf("web-url = %q, %v; want no URL and %q", out, err, tc.wantErr)
				}
				return
			}
			if err != nil || out != tc.want {
				t.Errorf("web-url = %q, %v; want %q", out, err, tc.want)
			}
		})
	}
}

// jakebot health, a container's HEALTHCHECK, asks the running bot's
// /healthz: on the address it logged, on loopback for a bare port, and
// fails where nothing answers.
func TestHealthCommand(t *testing.T) {
	dir := t.TempDir()
	cli := filepath.Join(dir, "claude")
	os.WriteFile(cli, []byte("#!/bin/sh\necho 2.0.0\n"), 0o755)
	ctx, cancel := context.WithCancel(context.Background())
	in, keepOpen := io.Pipe()
	logs, logw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, nil, []string{"ALLOWED_ROOTS=" + dir, "CLAUDE_BIN=" + cli, "STATE_FILE=off",
			"HEALTH_ADDR=127.0.0.1:0", "LOG_LEVEL=info"}, bot.Stdio{In: in, Out: io.Discard, Err: logw})
		logw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		keepOpen.Close()
		if err := <-done; err != nil {
			t.Errorf("the bot: %v", err)
		}
	})
	addr := ""
	lines := bufio.NewScanner(logs)
	for addr == "" && lines.Scan() {
		if m := regexp.MustCompile(`msg="health and metrics" addr=(\S+)`).FindStringSubmatch(lines.Text()); m != nil {
			addr = m[1]
		}
	}
	if addr == "" {
		t.Fatal("the bot never logged its health address")
	}
	go io.Copy(io.Discard, logs)
	_, port, _ := net.SplitHostPort(addr)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()

	for _, tc := range []struct {
		name, addr, wantErr string
	}{
		{name: "the logged address", addr: addr},
		{name: "a bare port", addr: ":" + port},
		{name: "every address", addr: "0.0.0.0:" + port},
		{name: "nothing listening", addr: closed.Addr().String(), wantErr: "connection refused"},
		{name: "unset", wantErr: "HEALTH_ADDR is not set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := runCmd(t, []string{"ALLOWED_ROOTS=" + dir, "HEALTH_ADDR=" + tc.addr}, "health")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("health = %q, %v; want %q", out, err, tc.wantErr)
				}
				return
			}
			if err != nil || !strings.Contains(out, `"status":"ok"`) {
				t.Errorf("health = %q, %v; want ok", out, err)
			}
		})
	}
}
