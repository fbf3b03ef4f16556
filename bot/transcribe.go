package bot

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
)

// transcribeTimeout bounds one TRANSCRIBE_CMD run: a voice note is
// short, and a hung command must not hold the conversation.
const transcribeTimeout = 5 * time.Minute

// maxTranscript bounds what a transcriber's output may add to a prompt.
const maxTranscript = 64 << 10

// transcriber runs TRANSCRIBE_CMD with {file} replaced by the voice
// note's path (appended when no word names it) and returns what it
// printed. It runs as the CLIs do: in its own process group, with the
// children's environment, killed when the turn is cancelled. Nil when
// no command is configured.
func transcriber(tmpl cliproc.Args, environ []string) core.Transcriber {
	if len(tmpl) == 0 {
		return nil
	}
	return func(ctx context.Context, file string) (string, error) {
		ctx, cancel := context.WithTimeout(ctx, transcribeTimeout)
		defer cancel()
		args := make([]string, len(tmpl))
		named := false
		for i, w := range tmpl {
			args[i] = strings.ReplaceAll(w, "{file}", file)
			named = named || args[i] != w
		}
		if !named {
			args = append(args, file)
		}
		p, err := cliproc.Start(ctx, cliproc.Spec{Bin: args[0], Args: args[1:], Dir: filepath.Dir(file), Environ: environ})
		if err != nil {
			return "", fmt.Errorf("TRANSCRIBE_CMD: %w", err)
		}
		out, readErr := io.ReadAll(io.LimitReader(p.Stdout, maxTranscript))
		_, _ = io.Copy(io.Discard, p.Stdout)
		res, err := p.Wait()
		switch {
		case ctx.Err() != nil:
			return "", fmt.Errorf("TRANSCRIBE_CMD: %w", context.Cause(ctx))
		case err != nil || res.ExitCode != 0:
			return "", fmt.Errorf("TRANSCRIBE_CMD %s exited with status %d: %s", args[0], res.ExitCode,
				cliproc.StderrTail(res.Stderr, 3))
		case readErr != nil:
			return "", fmt.Errorf("TRANSCRIBE_CMD: read: %w", readErr)
		}
		return string(out), nil
	}
}
