package gemini

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/internal/history"
	"github.com/jake-bot/jake-bot/plugins/internal/jsonscan"
)

// chatDirs are the folders that may hold workdir's chat files. It fails
// when nothing says where the CLI's state folder is (StateDir).
func (p *Plugin) chatDirs(workdir string) ([]string, error) {
	dir, err := p.cfg.StateDir(os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("find gemini home: %w", err)
	}
	var out []string
	for _, project := range projectDirs(dir, filepath.Clean(workdir)) {
		out = append(out, filepath.Join(project, "chats"))
	}
	return out, nil
}

// Conversations lists the CLI's sessions for workdir, newest first, from
// the chat files under ~/.gemini/tmp/<project>/chats. The CLI's own
// --list-sessions may first ask the model to summarise, so the files are
// read directly: only their heads, by a few goroutines at once.
func (p *Plugin) Conversations(ctx context.Context, workdir string) ([]core.ConversationInfo, error) {
	dirs, err := p.chatDirs(workdir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, chats := range dirs {
		m, _ := filepath.Glob(filepath.Join(chats, "session-*.json*"))
		files = append(files, m...)
	}
	infos, err := history.Scan(ctx, files, readSession)
	if err != nil {
		return nil, err
	}
	// A resumed legacy session can leave two files with one id; the
	// newest is the one to list.
	byID := map[string]int{}
	var out []core.ConversationInfo
	for _, info := range infos {
		if info.Title == "" {
			// No prompt in it (a CLI started and stopped unused, as a
			// warm one may be): nothing to resume.
			continue
		}
		j, dup := byID[info.SessionID]
		switch {
		case !dup:
			byID[info.SessionID] = len(out)
			out = append(out, info)
		case info.Updated.After(out[j].Updated):
			if info.Title == "" {
				info.Title = out[j].Title
			}
			out[j] = info
		}
	}
	history.SortNewest(out)
	return out, nil
}

// projectDirs returns the folders under tmp that may hold workdir's chats:
// the slug projects.json names (v0.29+), any folder whose .project_root
// marker names workdir, and the legacy sha256(workdir) folder.
func projectDirs(geminiDir, workdir string) []string {
	tmp := filepath.Join(geminiDir, "tmp")
	seen := map[string]bool{}
	var dirs []string
	add := func(d string) {
		if !seen[d] {
			seen[d] = true
			if fi, err := os.Stat(d); err == nil && fi.IsDir() {
				dirs = append(dirs, d)
			}
		}
	}
	var registry struct {
		Projects map[string]string `json:"projects"`
	}
	if data, err := os.ReadFile(filepath.Join(geminiDir, "projects.json")); err == nil && json.Unmarshal(data, &registry) == nil {
		if slug := registry.Projects[workdir]; slug != "" && !strings.ContainsAny(slug, `/\`) && ownedBy(filepath.Join(tmp, slug), workdir) {
			add(filepath.Join(tmp, slug))
		}
	}
	if len(dirs) == 0 {
		// The registry is missing or stale: look for the marker.
		markers, _ := filepath.Glob(filepath.Join(tmp, "*", ".project_root"))
		for _, m := range markers {
			if ownedBy(filepath.Dir(m), workdir) {
				add(filepath.Dir(m))
			}
		}
	}
	sum := sha256.Sum256([]byte(workdir))
	add(filepath.Join(tmp, hex.EncodeToString(sum[:])))
	return dirs
}

// ownedBy reports whether a project folder's .project_root marker names
// workdir; a folder without one is accepted.
func ownedBy(project, workdir string) bool {
	data, err := os.ReadFile(filepath.Join(project, ".project_root"))
	if os.IsNotExist(err) {
		return true
	}
	return err == nil && filepath.Clean(strings.TrimSpace(string(data))) == workdir
}

// readSession reads a chat file's head: the session id from its metadata
// and the first prompt as the title. ok is false for a subagent's file or
// one that is not a session. The first prompt follows the metadata line
// and the session's context (a few KB, more for a big workspace tree).
func readSession(path string, buf []byte) (info core.ConversationInfo, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return info, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return info, false
	}
	if strings.HasSuffix(path, ".json") {
		n, _ := io.ReadFull(f, buf) // one JSON object: read it whole
		return legacySession(buf[:n], fi)
	}
	history.ReadHead(f, buf, func(data []byte, end bool) bool {
		line, rest, complete := bytes.Cut(data, []byte("\n"))
		if !ok {
			if !complete && !end {
				return false
			}
			id := jsonscan.StringField(line, "sessionId")
			if id == "" || jsonscan.StringField(line, "kind") == "subagent" {
				return true
			}
			info, ok = core.ConversationInfo{SessionID: id, Updated: fi.ModTime()}, true
		}
		title, found := firstPrompt(rest)
		if found || end {
			info.Title = core.Shorten(title, 200)
		}
		return found
	})
	return info, ok
}

// firstPrompt finds the first prompt among data's complete lines. Message
// records start with their id; the "$set" patches that repeat the context
// are skipped without decoding.
func firstPrompt(data []byte) (string, bool) {
	for {
		line, rest, complete := bytes.Cut(data, []byte("\n"))
		if !complete {
			return "", false
		}
		data = rest
		head := line[:min(len(line), 160)]
		if !bytes.HasPrefix(head, []byte(`{"id":`)) || !bytes.Contains(head, []byte(`"type":"user"`)) {
			continue
		}
		if title := promptText(line); title != "" {
			return title, true
		}
	}
}

// promptText is a user message record's text, unless it is the session
// context the CLI sends first.
func promptText(line []byte) string {
	if jsonscan.StringField(line, "type") != "user" {
		return ""
	}
	text := contentText(jsonscan.Value(jsonscan.Field(line, "content")))
	if strings.HasPrefix(strings.TrimSpace(text), "<session_context>") {
		return ""
	}
	return text
}

// contentText reads a message's content: a string or a list of parts.
func contentText(raw []byte) string {
	if s, ok := jsonscan.String(raw); ok {
		return s
	}
	var texts []string
	for part := range jsonscan.Elements(raw) {
		if t := jsonscan.StringField(part, "text"); t != "" {
			texts = append(texts, t)
		}
	}
	return strings.Join(texts, " ")
}

// legacySession reads a session saved before v0.39 as one JSON object.
func legacySession(data []byte, fi os.FileInfo) (core.ConversationInfo, bool) {
	var s struct {
		SessionID string `json:"sessionId"`
		Kind      string `json:"kind"`
		Messages  []struct {
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(data, &s) != nil || s.SessionID == "" || s.Kind == "subagent" {
		return core.ConversationInfo{}, false
	}
	info := core.ConversationInfo{SessionID: s.SessionID, Updated: fi.ModTime()}
	for _, m := range s.Messages {
		if m.Type != "user" {
			continue
		}
		if t := contentText(m.Content); t != "" && !strings.HasPrefix(strings.TrimSpace(t), "<session_context>") {
			info.Title = core.Shorten(t, 200)
			break
		}
	}
	return info, true
}
