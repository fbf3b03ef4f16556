package gemini

import (
	"bytes"
	"os"
	"path/filepath"

	"github.com/jake-bot/jake-bot/core"
)

// sessionStamp is how much of a session's history its files held: its
// messages, not the metadata records the CLI appends when it merely loads
// the session. A session resumed elsewhere since has more.
type sessionStamp struct{ messages, size int }

// stampSession stamps t's session; a new session has none.
func (p *Plugin) stampSession(t core.Turn) sessionStamp {
	var st sessionStamp
	if len(t.ResumeToken) < 8 {
		return st
	}
	for _, chats := range p.chatDirs(t.Workdir) {
		files, _ := filepath.Glob(filepath.Join(chats, "session-*"+t.ResumeToken[:8]+".jsonl"))
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

// chatDirs are the folders that may hold workdir's chat files.
func (p *Plugin) chatDirs(workdir string) []string {
	dir, err := StateDir(p.cfg, os.Getenv, os.UserHomeDir)
	if err != nil {
		return nil
	}
	var out []string
	for _, project := range projectDirs(dir, filepath.Clean(workdir)) {
		out = append(out, filepath.Join(project, "chats"))
	}
	return out
}
