package bot

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
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

// transcriber runs TRANSCRIBE_CMD with {file} replaced by the path of a
// copy of the voice note (appended when no word names it) and returns
// what it printed. It runs as the CLIs do: in its own process group, with
// the children's environment, killed when the turn is cancelled. Nil when
// no command is configured.
func transcriber(tmpl cliproc.Args, environ []string) core.Transcriber {
	if len(tmpl) == 0 {
		return nil
	}
	return func(ctx context.Context, note string) (string, error) {
		ctx, cancel := context.WithTimeout(ctx, transcribeTimeout)
		defer cancel()
		dir, file, err := stageNote(note)
		if err != nil {
			return "", fmt.Errorf("TRANSCRIBE_CMD: %w", err)
		}
		defer os.RemoveAll(dir)
		args := make([]string, len(tmpl))
		named := false
		for i, w := range tmpl {
			args[i] = strings.ReplaceAll(w, "{file}", file)
			named = named || args[i] != w
		}
		if !named {
			args = append(args, file)
		}
		p, err := cliproc.Start(ctx, cliproc.Spec{Bin: args[0], Args: args[1:], Dir: dir, Environ: environ})
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

// safeExt is an extension a shell reads as plain text.
var safeExt = regexp.MustCompile(`^\.[a-z0-9]{1,8}$`)

// stageNote copies the voice note to voice.<ext> in a fresh temporary
// folder, which the caller removes. The command's {file} is then a name
// the bot chose: the note's own path holds the workdir's name and the
// sender's file name, and a template that puts {file} in `sh -c "…"`
// would run whatever they spell.
func stageNote(note string) (dir, file string, err error) {
	ext := strings.ToLower(filepath.Ext(note))
	if !safeExt.MatchString(ext) {
		ext = ""
	}
	src, err := os.Open(note)
	if err != nil {
		return "", "", err
	}
	defer src.Close()
	dir, err = os.MkdirTemp("", "jakebot-voice-")
	if err != nil {
		return "", "", err
	}
	file = filepath.Join(dir, "voice"+ext)
	dst, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		_, err = io.Copy(dst, src)
		if cerr := dst.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", "", fmt.Errorf("copy the voice note: %w", err)
	}
	return dir, file, nil
}
