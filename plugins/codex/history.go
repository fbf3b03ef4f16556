package codex

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/internal/history"
	"github.com/jake-bot/jake-bot/plugins/internal/jsonscan"
)

// sessionsDir is the folder Codex records its threads in: sessions in its
// state folder (StateDir). It fails when nothing says where that is.
func (p *Plugin) sessionsDir() (string, error) {
	home, err := p.cfg.StateDir(os.Getenv)
	if err != nil {
		return "", fmt.Errorf("find codex home: %w", err)
	}
	return filepath.Join(home, "sessions"), nil
}

// Conversations lists Codex's threads recorded in workdir, newest first,
// from the rollout files under $CODEX_HOME/sessions/YYYY/MM/DD. Codex has
// no listing command for scripts (`codex resume` is a TUI), and its SQLite
// index is internal, so the rollouts are the stable source. Only each
// file's head is read, by a few goroutines at once.
func (p *Plugin) Conversations(ctx context.Context, workdir string) ([]core.ConversationInfo, error) {
	sessions, err := p.sessionsDir()
	if err != nil {
		return nil, err
	}
	files, err := rolloutFiles(sessions)
	if err != nil {
		return nil, err
	}
	workdir = filepath.Clean(workdir)
	out, err := history.Scan(ctx, files, func(path string, buf []byte) (core.ConversationInfo, bool) {
		return readRollout(path, workdir, buf)
	})
	history.SortNewest(out)
	return out, err
}

// rolloutFiles returns the paths of sessions/YYYY/MM/DD/rollout-*.jsonl.
// A missing sessions folder means no history.
func rolloutFiles(root string) ([]string, error) {
	var files []string
	days, err := filepath.Glob(filepath.Join(root, "[0-9]*", "[0-9]*", "[0-9]*"))
	if err != nil {
		return nil, fmt.Errorf("list codex sessions: %w", err)
	}
	for _, day := range days {
		entries, err := os.ReadDir(day)
		if err != nil {
			continue
		}
		for _, e := range entries {
			name := e.Name()
			if strings.HasPrefix(name, "rollout-") && strings.HasSuffix(name, ".jsonl") && !e.IsDir() {
				files = append(files, filepath.Join(day, name))
			}
		}
	}
	return files, nil
}

// readRollout reads a rollout's head: the session_meta line (id and cwd)
// and the first prompt, which is the title. ok is false for a file of
// another workdir or one that is not a rollout. The first prompt comes
// after the session's instructions and context, about 40 KB into a file
// of codex 0.169.
func readRollout(path, workdir string, buf []byte) (info core.ConversationInfo, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return info, false
	}
	defer f.Close()
	history.ReadHead(f, buf, func(data []byte, end bool) bool {
		line, rest, complete := cutLine(data)
		if !ok {
			// A first line cut short still holds the id and cwd, which
			// come before the long instructions.
			id, cwd, meta := sessionMeta(line)
			switch {
			case !meta && !complete && !end:
				return false
			case !meta || filepath.Clean(cwd) != workdir:
				return true
			}
			fi, err := f.Stat()
			if err != nil {
				return true
			}
			info, ok = core.ConversationInfo{SessionID: id, Updated: fi.ModTime()}, true
		}
		title, found := firstPrompt(rest)
		if found {
			info.Title = core.Shorten(title, 200)
		}
		return found
	})
	return info, ok
}

// cutLine returns data's first line and whether its newline was seen.
func cutLine(data []byte) (line, rest []byte, complete bool) {
	i := bytes.IndexByte(data, '\n')
	if i < 0 {
		return data, nil, false
	}
	return data[:i], data[i+1:], true
}

// sessionMeta reads the id and cwd of a rollout's first line,
// {"timestamp":…,"type":"session_meta","payload":{"id":…,"cwd":…,…}},
// stopping at cwd: the long base instructions after it are never read.
func sessionMeta(line []byte) (id, cwd string, ok bool) {
	if jsonscan.StringField(line, "type") != "session_meta" {
		return "", "", false
	}
	jsonscan.Walk(jsonscan.Field(line, "payload"), func(key, rest []byte) bool {
		switch string(key) {
		case "id":
			id = jsonscan.Str(jsonscan.Value(rest))
		case "cwd":
			cwd = jsonscan.Str(jsonscan.Value(rest))
		}
		return id == "" || cwd == ""
	})
	return id, cwd, id != "" && cwd != ""
}

// firstPrompt finds the first user message among data's complete lines.
// Codex 0.169 records it as an item_completed event of a UserMessage;
// older builds as a user_message event. Lines are told apart by their
// first bytes, so the long context lines are never decoded.
func firstPrompt(data []byte) (string, bool) {
	for {
		line, rest, complete := cutLine(data)
		if !complete {
			return "", false
		}
		data = rest
		if !bytes.Contains(line[:min(len(line), 120)], []byte(`"event_msg"`)) {
			continue
		}
		payload := jsonscan.Field(line, "payload")
		switch jsonscan.StringField(payload, "type") {
		case "item_completed":
			item := jsonscan.Field(payload, "item")
			if jsonscan.StringField(item, "type") != "UserMessage" {
				continue
			}
			var parts []string
			for c := range jsonscan.Elements(jsonscan.Value(jsonscan.Field(item, "content"))) {
				parts = append(parts, jsonscan.StringField(c, "text"))
			}
			return strings.Join(parts, " "), true
		case "user_message":
			return jsonscan.StringField(payload, "message"), true
		}
	}
}
