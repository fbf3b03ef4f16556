package doctor

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/jake-bot/jake-bot/bot"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/configured"
)

// cli is what doctor checks of one plugin.
type cli struct {
	id, name    string
	bin         string
	versionArgs []string
	// install says how to get the CLI when it is missing.
	install string
	// required: a plugin from PLUGINS_FILE was asked for explicitly, so
	// its CLI missing is a failure; a built-in one missing is a warning.
	required bool
	auth     *authHint
	// acp is the entry of an ACP agent, whose initialize is checked.
	acp *configured.Spec
}

// authHint says how a CLI finds its credentials: any of the environment
// variables set, or any of the files present.
type authHint struct {
	env   []string
	files []string // absolute
	login string   // what to do when neither is there
}

// builtinCLIs lists the built-in plugins' CLIs (bot.BuiltinPlugins), as
// the plugins run them (name, binary, how to install it), with their auth
// hints from authHints.
func builtinCLIs(cfg bot.Config, opts Options) []cli {
	var out []cli
	for _, b := range bot.BuiltinPlugins {
		p, ok := b.New(cfg, nil).(interface{ CLI() cliproc.CLI })
		if !ok {
			continue
		}
		c := p.CLI()
		out = append(out, cli{id: b.ID, name: c.Name, bin: c.Bin, versionArgs: []string{"--version"},
			install: c.Install, auth: authHints(b.ID, cfg, opts)})
	}
	return out
}

// authHints returns where the CLI of plugin id looks for credentials:
// Claude Code, Codex and Gemini CLI, in its state folder as the plugin
// finds it; nil for a plugin doctor knows no credentials of.
func authHints(id string, cfg bot.Config, opts Options) *authHint {
	// getenv is the CLIs' environment, their home Options.Home.
	getenv := func(name string) string {
		if name == "HOME" {
			return opts.Home
		}
		return opts.Getenv(name)
	}
	switch id {
	case "claude":
		d, _ := cfg.Claude.StateDir(getenv)
		return &authHint{env: []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"},
			files: []string{filepath.Join(d, ".credentials.json")},
			login: "set ANTHROPIC_API_KEY, or run `claude` once and log in"}
	case "codex":
		d, _ := cfg.Codex.StateDir(getenv)
		return &authHint{env: []string{"OPENAI_API_KEY", "CODEX_API_KEY"},
			files: []string{filepath.Join(d, "auth.json")},
			login: "set OPENAI_API_KEY, or run `codex login`"}
	case "gemini":
		d, _ := cfg.Gemini.StateDir(getenv)
		return &authHint{env: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"},
			files: []string{filepath.Join(d, "oauth_creds.json"), filepath.Join(d, "settings.json")},
			login: "set GEMINI_API_KEY, or run `gemini` once and log in"}
	}
	return nil
}

func checkPlugins(ctx context.Context, r *Report, cfg bot.Config, opts Options) {
	clis := builtinCLIs(cfg, opts)
	if cfg.PluginsFile != "" {
		specs, err := cfg.PluginSpecs(true)
		if err != nil {
			r.add("config", "PLUGINS_FILE", Fail, "%s", strings.ReplaceAll(err.Error(), "\n", "; "))
		} else {
			var ids []string
			for _, s := range specs {
				ids = append(ids, s.ID)
				c := cli{id: s.ID, name: s.Name, bin: s.Bin, versionArgs: s.VersionArgs, required: true,
					install: "Install it, or fix its bin in " + s.Source}
				if s.Mode == configured.ModeACP {
					c.acp = &s
				}
				clis = append(clis, c)
			}
			r.add("config", "PLUGINS_FILE", OK, "%s: %d plugins (%s)", cfg.PluginsFile, len(specs), strings.Join(ids, ", "))
		}
	}
	found := 0
	for _, c := range clis {
		if checkCLI(ctx, r, c, opts) {
			found++
			if c.acp != nil {
				checkACP(ctx, r, cfg, *c.acp)
			}
		}
		if c.auth != nil {
			checkAuth(r, c, opts)
		}
	}
	if found == 0 {
		r.add("plugin", "any CLI", Fail, "no plugin's CLI is installed: no turn could run")
	}
}

// checkCLI reports whether c's CLI is on PATH and what --version says.
func checkCLI(ctx context.Context, r *Report, c cli, opts Options) bool {
	name := c.id + " CLI"
	path, err := exec.LookPath(c.bin)
	if err != nil {
		s := Warn
		if c.required {
			s = Fail
		}
		r.add("plugin", name, s, "%s not found. %s", c.bin, c.install)
		return false
	}
	v, err := version(ctx, path, c.versionArgs, opts.Timeout)
	if err != nil {
		r.add("plugin", name, Warn, "%s, but `%s` failed: %v", path, strings.Join(append([]string{filepath.Base(path)}, c.versionArgs...), " "), err)
		return true
	}
	r.add("plugin", name, OK, "%s (%s)", path, v)
	return true
}

// version runs the CLI with args, in its own process group and under a
// timeout, and returns the first line it printed.
func version(ctx context.Context, path string, args []string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	proc, err := cliproc.Start(ctx, cliproc.Spec{Bin: path, Args: args, Grace: time.Second})
	if err != nil {
		return "", err
	}
	out, _ := io.ReadAll(io.LimitReader(proc.Stdout, 64<<10))
	io.Copy(io.Discard, proc.Stdout)
	res, err := proc.Wait()
	switch {
	case ctx.Err() != nil:
		return "", fmt.Errorf("no answer within %s", timeout)
	case err != nil:
		return "", err
	case res.ExitCode != 0:
		return "", fmt.Errorf("exit code %d: %s", res.ExitCode, firstLine([]byte(res.Stderr)))
	}
	if v := firstLine(out); v != "" {
		return v, nil
	}
	return firstLine([]byte(res.Stderr)), nil
}

func firstLine(b []byte) string {
	for _, l := range bytes.Split(b, []byte("\n")) {
		if s := strings.TrimSpace(string(l)); s != "" {
			return s
		}
	}
	return ""
}

// checkAuth looks for an API key or a login file, naming what it found but
// never printing a value.
func checkAuth(r *Report, c cli, opts Options) {
	name := c.id + " auth"
	for _, e := range c.auth.env {
		if opts.Getenv(e) != "" {
			r.add("plugin", name, OK, "%s is set", e)
			return
		}
	}
	for _, f := range c.auth.files {
		if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() {
			r.add("plugin", name, OK, "login file %s exists", f)
			return
		}
	}
	r.add("plugin", name, Warn, "no API key (%s) or login file (%s): %s",
		strings.Join(c.auth.env, ", "), strings.Join(c.auth.files, ", "), c.auth.login)
}
