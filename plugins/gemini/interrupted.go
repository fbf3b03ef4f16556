package gemini

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/internal/history"
)

// An interrupted turn, as the pinned CLI (0.61) leaves it: it records the
// user's message in the session's chat file before asking the model, and
// each model answer once it is complete; a turn cancelled while the model
// answers (session/cancel, before its first word or in the middle) is then
// rolled back whole, the file's last record setting the session's messages
// to what they were before the turn. The turn's message, its partial
// answer and any tool calls it made are gone from the session, and a
// session whose first turn that was holds no history: the next CLI started
// in the workdir deletes its file (see dropLoadLeftovers), and the session
// can no longer be loaded. A turn cancelled while a tool call waits for
// permission is kept as it is, the model's answer so far included. So
// once an interrupted turn's CLI has ended, the records it rolled back are
// written again, followed by the answer as far as it had streamed and the
// CLI's own note of an interrupted answer: the session continues the turn,
// as Claude Code's and Codex's do.

// interruptedNote is what the CLI itself puts in a session for an answer
// that never completed.
const interruptedNote = "[The previous response was interrupted before it completed.]"

// chatMark is where a session's chat file ended when a turn's message was
// sent: whatever the CLI wrote for the turn follows it.
type chatMark struct {
	path string
	size int64
}

// markChat finds the chat file the CLI records session id of workdir in:
// the newest of the session's files.
func (p *Plugin) markChat(workdir, id string) chatMark {
	var mark chatMark
	if len(id) < 8 {
		return mark
	}
	var newest time.Time
	buf := make([]byte, history.HeadSize)
	dirs, _ := p.chatDirs(workdir) // none without a state folder
	for _, chats := range dirs {
		files, _ := filepath.Glob(filepath.Join(chats, "session-*-"+id[:8]+".jsonl"))
		for _, f := range files {
			fi, err := os.Stat(f)
			if err != nil || fi.ModTime().Before(newest) {
				continue
			}
			if info, ok := readSession(f, buf); ok && info.SessionID == id {
				mark, newest = chatMark{path: f, size: fi.Size()}, fi.ModTime()
			}
		}
	}
	return mark
}

// keepInterrupted writes back into m's chat file what the CLI dropped of
// an interrupted turn: the records it wrote after m and rolled back, then
// a model message with partial, the answer's text as far as it had
// streamed, and the CLI's note. If the CLI recorded nothing of the turn,
// the turn's message is recorded in their place. A turn the CLI kept is
// left alone.
func (p *Plugin) keepInterrupted(m chatMark, t core.Turn, partial string) error {
	if m.path == "" {
		return nil
	}
	data, err := os.ReadFile(m.path)
	if err != nil {
		return fmt.Errorf("keep the interrupted turn: %w", err)
	}
	kept, turn := readChat(data, m.size)
	var lines [][]byte
	for _, r := range turn {
		if !kept[r.id] {
			lines = append(lines, r.line)
		}
	}
	now := p.cfg.Clock.Now().UTC()
	switch {
	case len(turn) == 0 && strings.TrimSpace(t.Prompt) != "":
		lines = append(lines, chatMessage(now, "user", []map[string]string{{"text": t.Prompt}}))
	case len(lines) == 0:
		return nil // the CLI kept the turn
	}
	note := interruptedNote
	if partial = strings.TrimSpace(partial); partial != "" {
		note = partial + "\n\n" + interruptedNote
	}
	lines = append(lines, chatMessage(now, "gemini", note))
	f, err := os.OpenFile(m.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("keep the interrupted turn: %w", err)
	}
	_, err = f.Write(bytes.Join(lines, nil))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("keep the interrupted turn: %w", err)
	}
	return nil
}

// chatRecord is a chat file's record of a message: its id and its line,
// newline included.
type chatRecord struct {
	id   string
	line []byte
}

// readChat reads a chat file as the CLI loads it: kept are the ids of the
// session's messages once every record is applied (messages appended or
// replaced by id, "$set" of the messages, "$rewindTo" a message), and
// turn the message records written from offset on, each id once, in the
// order first written, with its last version.
func readChat(data []byte, offset int64) (kept map[string]bool, turn []chatRecord) {
	var order []string
	at := map[string]int{}
	var pos int64
	for line := range bytes.Lines(data) {
		start := pos
		pos += int64(len(line))
		var r struct {
			ID       *string `json:"id"`
			RewindTo *string `json:"$rewindTo"`
			Set      *struct {
				Messages *[]struct {
					ID string `json:"id"`
				} `json:"messages"`
			} `json:"$set"`
		}
		if json.Unmarshal(line, &r) != nil {
			continue
		}
		switch {
		case r.RewindTo != nil:
			// From the message on; all of them if it is not there.
			order = order[:max(slices.Index(order, *r.RewindTo), 0)]
		case r.ID != nil:
			if !slices.Contains(order, *r.ID) {
				order = append(order, *r.ID)
			}
			if start >= offset {
				if i, ok := at[*r.ID]; ok {
					turn[i].line = line
				} else {
					at[*r.ID] = len(turn)
					turn = append(turn, chatRecord{id: *r.ID, line: line})
				}
			}
		case r.Set != nil && r.Set.Messages != nil:
			order = order[:0]
			for _, m := range *r.Set.Messages {
				order = append(order, m.ID)
			}
		}
	}
	kept = make(map[string]bool, len(order))
	for _, id := range order {
		kept[id] = true
	}
	return kept, turn
}

// chatMessage is a message record as the CLI writes one, its id first
// (see stampSession), newline included.
func chatMessage(now time.Time, kind string, content any) []byte {
	b, _ := json.Marshal(struct {
		ID        string `json:"id"`
		Timestamp string `json:"timestamp"`
		Type      string `json:"type"`
		Content   any    `json:"content"`
	}{randomID(), now.Format("2006-01-02T15:04:05.000Z"), kind, content})
	return append(b, '\n')
}

// randomID is a random UUID, as the CLI gives its messages.
func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
