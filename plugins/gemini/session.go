package gemini

import (
	"bytes"
	"os"
	"path/filepath"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/internal/history"
)

// The session files' names: the CLI names a session's chat file
// session-<UTC minute of its start>-<first 8 characters of its id>.jsonl
// in <state>/tmp/<project>/chats, and finds a session by the id inside.
const chatMinute = "2006-01-02T15-04"

func chatName(minute time.Time, id string) string {
	return "session-" + minute.UTC().Format(chatMinute) + "-" + id[:8] + ".jsonl"
}

// sessionStamp is how much of a session's history its files held: its
// messages, not the metadata records the CLI appends when it merely loads
// the session. A session resumed elsewhere since has more.
type sessionStamp struct{ messages, size int }

// stampSession stamps t's session; a new session has none.
func (p *Plugin) stampSession(t core.Turn) sessionStamp {
	var st sessionStamp
	if len(t.SessionID) < 8 {
		return st
	}
	dirs, _ := p.chatDirs(t.Workdir) // none without a state folder
	for _, chats := range dirs {
		files, _ := filepath.Glob(filepath.Join(chats, "session-*"+t.SessionID[:8]+".jsonl"))
		for _, f := range files {
			data, _ := os.ReadFile(f)
			for line := range bytes.Lines(data) {
				if bytes.HasPrefix(line, []byte(`{"id":`)) {
					st.messages++
					st.size += len(line)
				}
			}
		}
	}
	return st
}

// guardLoad makes t's session safe to load through ACP now, and reports
// whether it is. The pinned CLI (0.61) answers session/load by first
// setting up a new session of that id, whose chat recorder appends its
// opening records to session-<this minute>-<id[:8]>.jsonl: within the
// minute the session started, that is the session's own file, and the
// records end with a "$set" of its messages to the session context alone.
// The CLI then finds no resumable session ("No previous sessions found
// for this project"), and from then on neither does `gemini --resume`:
// the history is lost to it. So a session whose own file bears this
// minute's name is renamed to the minute before, a name the CLI finds it
// by as well (it reads the id inside); the load then writes a file of its
// own. When that name is taken the turn runs one-shot instead, which
// resumes without the new session's records.
func (p *Plugin) guardLoad(t core.Turn) bool {
	if len(t.SessionID) < 8 {
		return true
	}
	p.dropLoadLeftovers(t)
	now := p.cfg.Clock.Now()
	buf := make([]byte, history.HeadSize)
	dirs, _ := p.chatDirs(t.Workdir) // none without a state folder
	for _, chats := range dirs {
		own := filepath.Join(chats, chatName(now, t.SessionID))
		info, ok := readSession(own, buf)
		if !ok || info.SessionID != t.SessionID || info.Title == "" {
			continue // none, or an earlier load's file without history
		}
		// Link then remove: a rename would replace a file of that name.
		earlier := filepath.Join(chats, chatName(now.Add(-time.Minute), t.SessionID))
		if os.Link(own, earlier) != nil {
			return false
		}
		if err := os.Remove(own); err != nil {
			os.Remove(earlier)
			return false
		}
	}
	return true
}

// dropLoadLeftovers removes the chat files of t's session that hold none
// of its history: the ones a session/load leaves behind (see guardLoad).
// Each start of the pinned CLI cleans up its project's chats, deleting a
// file without history together with every file of the same id[:8] (the
// session's own among them) unless the session is the starting process's
// own: left alone, such a file would take the session with it at the next
// start of any CLI in the workdir.
func (p *Plugin) dropLoadLeftovers(t core.Turn) {
	if len(t.SessionID) < 8 {
		return
	}
	buf := make([]byte, history.HeadSize)
	dirs, _ := p.chatDirs(t.Workdir) // none without a state folder
	for _, chats := range dirs {
		files, _ := filepath.Glob(filepath.Join(chats, "session-*-"+t.SessionID[:8]+".jsonl"))
		for _, f := range files {
			if info, ok := readSession(f, buf); ok && info.SessionID == t.SessionID && info.Title == "" {
				os.Remove(f)
			}
		}
	}
}
