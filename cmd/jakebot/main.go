// Command jakebot runs jake-bot: coding CLIs (Claude Code, Codex, Gemini
// CLI) driven from chat. With no platform configured it runs on the
// console: type commands and messages on stdin.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/jake-bot/jake-bot/bot"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "jakebot:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	cfg, err := bot.LoadConfig(os.Environ(), ".env")
	if err != nil {
		return err
	}
	return bot.Run(ctx, cfg, bot.Stdio{
		In:  os.Stdin,
		Out: os.Stdout,
		Err: os.Stderr,
		TTY: isTerminal(os.Stdin) && isTerminal(os.Stdout),
	})
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
