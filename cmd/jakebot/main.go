// Command jakebot runs jake-bot: coding CLIs (Claude Code, Codex, Gemini
// CLI, and any CLI described in PLUGINS_FILE) driven from chat. With no
// platform configured it runs on the console: type commands and messages
// on stdin.
//
//	jakebot                 run the bot
//	jakebot doctor          check what would and would not work
//	jakebot health          ask the running bot's HEALTH_ADDR whether it is healthy
//	jakebot replay FILE     show what a recorded CLI stream looks like in chat
//	jakebot runner          serve turns from the bot over NATS_URL, on this machine
//	jakebot web-url         print the web page's sign-in URL
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/jake-bot/jake-bot/bot"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
)

func main() {
	// `jakebot sandbox-exec` is how a CLI starts behind Landlock
	// (SANDBOX=landlock): it restricts itself, then becomes the CLI.
	if len(os.Args) > 1 && os.Args[1] == cliproc.SandboxExecCommand {
		fmt.Fprintln(os.Stderr, "jakebot sandbox-exec:", cliproc.SandboxExec(os.Args[2:]))
		os.Exit(126)
	}
	// The agents run as this user: without these, any of them could read
	// the bot's tokens from /proc/<pid>/environ or its memory.
	environ := scrubEnviron()
	if err := cliproc.HideFromChildren(); err != nil {
		fmt.Fprintln(os.Stderr, "jakebot: cannot hide its memory from the CLIs it runs:", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// What an agent starts and detaches (setsid, a daemon) becomes
	// jakebot's child when its parent exits, so that the turn's end finds
	// and kills it; as PID 1 (a container without an init) jakebot
	// inherits every orphan anyway. Either way it reaps them.
	if err := cliproc.AdoptOrphans(context.WithoutCancel(ctx)); err != nil {
		fmt.Fprintln(os.Stderr, "jakebot: detached processes of the CLIs may outlive their turns:", err)
	}
	err := run(ctx, os.Args[1:], environ, bot.Stdio{
		In:     os.Stdin,
		Out:    os.Stdout,
		Err:    os.Stderr,
		TTY:    isTerminal(os.Stdin) && isTerminal(os.Stdout),
		ErrTTY: isTerminal(os.Stderr),
		Typed:  isTerminal(os.Stdin),
	})
	stop()
	// A turn still running past the shutdown deadline (a CLI deaf to
	// SIGTERM, with a long grace) must not outlive jakebot.
	cliproc.KillAll()
	var code exitCode
	switch {
	case errors.As(err, &code):
		os.Exit(int(code))
	case err != nil:
		fmt.Fprintln(os.Stderr, "jakebot:", err)
		os.Exit(1)
	}
}

// exitCode ends jakebot with a status and no further message: what went
// wrong is already printed.
type exitCode int

func (c exitCode) Error() string { return fmt.Sprintf("exit status %d", int(c)) }

const usage = `usage:
  jakebot                   run the bot (configuration: environment and .env)
  jakebot doctor [--online] check what would and would not work
  jakebot health            ask the running bot's /healthz on HEALTH_ADDR (a container's HEALTHCHECK)
  jakebot runner            run this machine's CLIs for the bot reached through NATS_URL
  jakebot web-url           print the web page's sign-in URL (it holds WEB_TOKEN)
  jakebot replay [--plugin claude] [--platform discord] [--plugins-file F] FILE.jsonl
                            print the messages and edits a recorded stream becomes`

// run runs the subcommand in args with the given environment.
func run(ctx context.Context, args, environ []string, stdio bot.Stdio) error {
	if len(args) == 0 {
		cfg, err := bot.LoadConfig(environ, ".env")
		if err != nil {
			return err
		}
		return bot.Run(ctx, cfg, stdio)
	}
	switch args[0] {
	case "doctor":
		return runDoctor(ctx, args[1:], environ, stdio)
	case "replay":
		return runReplay(ctx, args[1:], environ, stdio)
	case "health":
		return runHealth(ctx, args[1:], environ, stdio)
	case "web-url":
		return runWebURL(args[1:], environ, stdio)
	case "runner":
		cfg, err := bot.LoadConfig(environ, ".env")
		if err != nil {
			return err
		}
		return bot.RunRunner(ctx, cfg, stdio)
	case "help", "-h", "-help", "--help":
		fmt.Fprintln(stdio.Out, usage)
		return nil
	}
	fmt.Fprintf(stdio.Err, "jakebot: unknown command %q\n%s\n", args[0], usage)
	return exitCode(2)
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
