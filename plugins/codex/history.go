package codex

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/jake-bot/jake-bot/core"
)

// home returns Codex's state directory.
func (p *Plugin) home() (string, error) {
	if p.cfg.Home != "" {
		return p.cfg.Home, nil
	}
	if d := os.Getenv("CODEX_HOME"); d != "" {
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".codex"), nil
}

// Conversations lists Codex's threads recorded in workdir, newest first,
// from the rollout files under $CODEX_HOME/sessions/YYYY/MM/DD. Codex has
// no listing command for scripts (`codex resume` is a TUI), and its SQLite
// index is internal, so the rollouts are the stable source. Only each
// file's head is read.
func (p *Plugin) Conversations(ctx context.Context, workdir string) ([]core.ConversationInfo, error) {
	home, err := p.home()
	if err != nil {
		return nil, fmt.Errorf("find codex home: %w", err)
	}
	files, err := rolloutFiles(filepath.Join(home, "sessions"))
	if err != nil {
		return nil, err
	}
	workdir = filepath.Clean(workdir)
	var out []core.ConversationInfo
	buf := make([]byte, headSize)
	for _, path := range files {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		info, ok := readRollout(path, workdir, buf)
		if ok {
			out = append(out, info)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Updated.After(out[j].Updated) })
	return out, nil
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

// headSize is the most of a rollout that is read. The first prompt comes
// after the session's instructions and context, about 40 KB into a file
// of codex 0.169; a bigger AGENTS.md pushes it further.
const headSize = 256 << 10

// readRollout reads a rollout's head: the session_meta line (id and cwd)
// and the first prompt, which is the title. It reads 64 KB, then more
// while the prompt is not found, up to len(buf). ok is false for a file
// of another workdir or one that is not a rollout.
func readRollout(path, workdir string, buf []byte) (core.ConversationInfo, bool) {
	f, err := os.Open(path)
	if err != nil {
		return core.ConversationInfo{}, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return core.ConversationInfo{}, false
	}
	filled := 0
	for size := min(64<<10, len(buf)); ; size = min(2*size, len(buf)) {
		n, err := io.ReadFull(f, buf[filled:size])
		filled += n
		done := err != nil || size == len(buf)
		line, rest, complete := cutLine(buf[:filled])
		if !complete && !done {
			continue
		}
		// A first line cut short still holds the id and cwd, which
		// come before the long instructions.
		id, cwd, ok := sessionMeta(line)
		if !ok || filepath.Clean(cwd) != workdir {
			return core.ConversationInfo{}, false
		}
		title, found := firstPrompt(rest)
		if found || done {
			return core.ConversationInfo{ID: id, Title: core.Shorten(title, 200), Updated: fi.ModTime()}, true
		}
	}
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
// {"timestamp":…,"type":"session_meta","payload":{"id":…,"cwd":…,…}}. It
// walks the JSON tokens and stops at cwd, so the session's long base
// instructions that follow are never decoded.
func sessionMeta(line []byte) (id, cwd string, ok bool) {
	if !bytes.Contains(line[:min(len(line), 200)], []byte(`"session_meta"`)) {
		return "", "", false
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	if !delim(dec, '{') {
		return "", "", false
	}
	for dec.More() {
		key, _ := dec.Token()
		if key != "payload" {
			if skip(dec) != nil {
				return "", "", false
			}
			continue
		}
		if !delim(dec, '{') {
			return "", "", false
		}
		for dec.More() && (id == "" || cwd == "") {
			k, _ := dec.Token()
			switch k {
			case "id", "cwd":
				v, err := dec.Token()
				s, isStr := v.(string)
				if err != nil || !isStr {
					return "", "", false
				}
				if k == "id" {
					id = s
				} else {
					cwd = s
				}
			default:
				if skip(dec) != nil {
					return "", "", false
				}
			}
		}
		return id, cwd, id != "" && cwd != ""
	}
	return "", "", false
}

func delim(dec *json.Decoder, d json.Delim) bool {
	t, err := dec.Token()
	return err == nil && t == d
}

// skip consumes one JSON value.
func skip(dec *json.Decoder) error {
	var v json.RawMessage
	return dec.Decode(&v)
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
		head := line[:min(len(line), 200)]
		if !bytes.Contains(head, []byte(`"event_msg"`)) {
			continue
		}
		switch {
		case bytes.Contains(head, []byte(`"item_completed"`)) && bytes.Contains(line, []byte(`"UserMessage"`)):
			var rec struct {
				Payload struct {
					Item struct {
						Type    string `json:"type"`
						Content []struct {
							Text string `json:"text"`
						} `json:"content"`
					} `json:"item"`
				} `json:"payload"`
			}
			if json.Unmarshal(line, &rec) == nil && rec.Payload.Item.Type == "UserMessage" {
				var parts []string
				for _, c := range rec.Payload.Item.Content {
					parts = append(parts, c.Text)
				}
				return strings.Join(parts, " "), true
			}
		case bytes.Contains(head, []byte(`"user_message"`)):
			var rec struct {
				Payload struct {
					Message string `json:"message"`
				} `json:"payload"`
			}
			if json.Unmarshal(line, &rec) == nil {
				return rec.Payload.Message, true
			}
		}
	}
}
