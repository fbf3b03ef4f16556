package claude

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/internal/history"
)

// ProjectDirName encodes a workdir the way Claude Code names its project
// folders: every character outside [A-Za-z0-9] becomes '-'. Paths whose
// name would exceed 200 characters get a hash suffix that differs between
// builds, so callers match those by the 200-character prefix.
func ProjectDirName(workdir string) string {
	var out strings.Builder
	for _, r := range workdir {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			out.WriteRune(r)
		} else {
			out.WriteByte('-')
		}
	}
	return out.String()
}

// maxNameLen is the length past which Claude Code shortens a project
// folder's name and adds a hash.
const maxNameLen = 200

// projectDirs returns the folders that may hold workdir's transcripts.
func (p *Plugin) projectDirs(workdir string) ([]string, error) {
	cfg, err := p.cfg.StateDir(os.Getenv)
	if err != nil {
		return nil, err
	}
	root := filepath.Join(cfg, "projects")
	name := ProjectDirName(workdir)
	if len(name) <= maxNameLen {
		return []string{filepath.Join(root, name)}, nil
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, nil
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), name[:maxNameLen]+"-") {
			dirs = append(dirs, filepath.Join(root, e.Name()))
		}
	}
	return dirs, nil
}

// Conversations lists Claude Code's transcripts for workdir, newest first.
func (p *Plugin) Conversations(ctx context.Context, workdir string) ([]core.ConversationInfo, error) {
	dirs, err := p.projectDirs(workdir)
	if err != nil {
		return nil, fmt.Errorf("find claude projects: %w", err)
	}
	var files []string
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue // no history yet
		}
		for _, e := range entries {
			if id, ok := strings.CutSuffix(e.Name(), ".jsonl"); ok && !e.IsDir() && cliproc.CheckUUID(id, "") == nil {
				files = append(files, filepath.Join(dir, e.Name()))
			}
		}
	}
	out, err := history.Scan(ctx, files, func(path string, _ []byte) (core.ConversationInfo, bool) {
		fi, err := os.Stat(path)
		if err != nil {
			return core.ConversationInfo{}, false
		}
		title, ok := transcriptTitle(path)
		return core.ConversationInfo{SessionID: strings.TrimSuffix(filepath.Base(path), ".jsonl"), Title: title, Updated: fi.ModTime()}, ok
	})
	history.SortNewest(out)
	return out, err
}

// headTailSize is how much of a transcript's start and end is read: enough
// for the first prompt and the latest title, without reading whole files.
const headTailSize = 64 << 10

// transcriptTitle reads a transcript's head and tail for its title: the
// last custom title, else the AI title, the last prompt, a summary, or the
// first real user prompt. ok is false for a subagent's (sidechain) file or
// one without any conversation in it.
func transcriptTitle(path string) (title string, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	head := make([]byte, headTailSize)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	var tail []byte
	if fi, err := f.Stat(); err == nil && fi.Size() > headTailSize {
		tail = make([]byte, headTailSize)
		m, _ := f.ReadAt(tail, fi.Size()-headTailSize)
		tail = tail[:m]
	}
	var t titles
	first := true
	for _, chunk := range [][]byte{head, tail} {
		sc := bufio.NewScanner(bytes.NewReader(chunk))
		sc.Buffer(make([]byte, 0, 64<<10), headTailSize)
		for sc.Scan() {
			var rec record
			if json.Unmarshal(sc.Bytes(), &rec) != nil {
				continue // a line cut by the head or tail window
			}
			if first && rec.IsSidechain {
				return "", false
			}
			first = false
			t.add(&rec)
		}
	}
	return t.best(), t.any
}

// record is the part of a transcript line the listing reads.
type record struct {
	Type        string `json:"type"`
	IsSidechain bool   `json:"isSidechain"`
	IsMeta      bool   `json:"isMeta"`
	IsCompact   bool   `json:"isCompactSummary"`
	CustomTitle string `json:"customTitle"`
	AITitle     string `json:"aiTitle"`
	LastPrompt  string `json:"lastPrompt"`
	Summary     string `json:"summary"`
	Message     *struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

type titles struct {
	custom, ai, lastPrompt, summary, firstPrompt string
	any                                          bool
}

func (t *titles) add(r *record) {
	switch r.Type {
	case "custom-title":
		t.custom = r.CustomTitle
	case "ai-title":
		t.ai = r.AITitle
	case "last-prompt":
		t.lastPrompt = r.LastPrompt
	case "summary":
		t.summary = r.Summary
	case "user":
		t.any = true
		if t.firstPrompt == "" && !r.IsMeta && !r.IsCompact && r.Message != nil {
			t.firstPrompt = promptText(r.Message.Content)
		}
	case "assistant":
		t.any = true
	}
}

func (t *titles) best() string {
	for _, s := range []string{t.custom, t.ai, t.lastPrompt, t.summary, t.firstPrompt} {
		if s != "" {
			return core.Shorten(s, 200)
		}
	}
	return ""
}

// promptText returns a user message's text unless it is a tool result or
// a slash command's bookkeeping.
func promptText(raw json.RawMessage) string {
	text := resultText(raw)
	var blocks []struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(raw, &blocks) == nil {
		for _, b := range blocks {
			if b.Type == "tool_result" {
				return ""
			}
		}
	}
	if strings.Contains(text, "<command-name>") || strings.Contains(text, "<local-command-stdout>") {
		return ""
	}
	return text
}
