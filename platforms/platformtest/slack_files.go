package platformtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// SlackFile is a file in the fake workspace: one a user shared, or one
// the bot uploaded.
type SlackFile struct {
	ID, Name, Mimetype string
	Data               []byte
}

// SlackUpload is a file the bot shared, with where it went.
type SlackUpload struct {
	Channel, ThreadTS string
	File              SlackFile
	Comment           string
}

// PostFiles posts a message with files from user in channel (in thread
// unless ""), as Slack sends a file share: a message event of subtype
// file_share whose files' private URLs serve the bytes to the bot token
// only.
func (s *Slack) PostFiles(t testing.TB, user, channel, thread, text string, files ...SlackFile) Posted {
	t.Helper()
	var env map[string]any
	var m *SlackMessage
	s.update(func() {
		m = &SlackMessage{Channel: channel, TS: s.nextTS(), ThreadTS: thread, User: user, Text: text}
		s.messages[channel+"/"+m.TS] = m
		s.order = append(s.order, channel+"/"+m.TS)
		parent := ""
		if p, ok := s.messages[channel+"/"+thread]; ok {
			parent = p.User
		}
		ev := s.messageEvent(m, parent)
		ev["subtype"] = "file_share"
		var list []map[string]any
		for i, f := range files {
			if f.ID == "" {
				f.ID = fmt.Sprintf("F%s%d", strings.ReplaceAll(m.TS, ".", ""), i)
			}
			s.sharedFiles[f.ID] = f
			link := s.srv.URL + "/files-pri/" + f.ID + "/" + url.PathEscape(f.Name)
			list = append(list, map[string]any{"id": f.ID, "name": f.Name, "title": f.Name, "mimetype": f.Mimetype,
				"size": len(f.Data), "url_private": link, "url_private_download": link + "?download=1"})
		}
		ev["files"] = list
		env = s.eventEnvelope(ev)
	})
	return Posted{TS: m.TS, Envelopes: []string{s.send(t, env)}}
}

// serveFile answers a download of a shared file: with the bot token only.
func (s *Slack) serveFile(w http.ResponseWriter, r *http.Request) {
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/files-pri/"), "/", 2)
	s.mu.Lock()
	f, ok := s.sharedFiles[parts[0]]
	s.downloads = append(s.downloads, r.Header.Get("Authorization"))
	s.mu.Unlock()
	switch {
	case r.Header.Get("Authorization") != "Bearer "+SlackBotToken:
		// Slack answers a login page, not the file.
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html>sign in</html>"))
	case !ok:
		http.NotFound(w, r)
	default:
		w.Header().Set("Content-Type", f.Mimetype)
		w.Write(f.Data)
	}
}

// Downloads returns the Authorization header of every file download.
func (s *Slack) Downloads() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.downloads...)
}

// Uploads returns the files the bot shared in channel, in order.
func (s *Slack) Uploads(channel string) []SlackUpload {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []SlackUpload
	for _, u := range s.uploads {
		if u.Channel == channel {
			out = append(out, u)
		}
	}
	return out
}

// filesMethod answers the external upload flow's two Web API methods;
// s.mu is held.
func (s *Slack) filesMethod(method string, f url.Values) map[string]any {
	switch method {
	case "files.getUploadURLExternal":
		if f.Get("filename") == "" || f.Get("length") == "" {
			return map[string]any{"ok": false, "error": "invalid_arguments"}
		}
		s.seq++
		id := fmt.Sprintf("FUP%04d", s.seq)
		s.pendingUploads[id] = SlackFile{ID: id, Name: f.Get("filename")}
		return map[string]any{"ok": true, "upload_url": s.srv.URL + "/upload/" + id, "file_id": id}
	case "files.completeUploadExternal":
		var files []struct{ ID, Title string }
		if err := json.Unmarshal([]byte(f.Get("files")), &files); err != nil || len(files) == 0 {
			return map[string]any{"ok": false, "error": "invalid_arguments"}
		}
		var done []map[string]any
		for _, fs := range files {
			up, ok := s.pendingUploads[fs.ID]
			if !ok || up.Data == nil {
				return map[string]any{"ok": false, "error": "file_not_found"}
			}
			delete(s.pendingUploads, fs.ID)
			s.uploads = append(s.uploads, SlackUpload{Channel: f.Get("channel_id"), ThreadTS: f.Get("thread_ts"), File: up,
				Comment: f.Get("initial_comment")})
			done = append(done, map[string]any{"id": fs.ID, "title": fs.Title})
		}
		return map[string]any{"ok": true, "files": done}
	}
	return nil
}

// serveUpload takes the bytes of an external upload (a multipart "file"
// field), to the bot token only.
func (s *Slack) serveUpload(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, "/upload/")
	if r.Header.Get("Authorization") != "Bearer "+SlackBotToken {
		http.Error(w, "invalid_auth", http.StatusUnauthorized)
		return
	}
	file, _, err := r.FormFile("file")
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	data, err := io.ReadAll(file)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.update(func() {
		up, ok := s.pendingUploads[id]
		if ok {
			up.Data = data
			s.pendingUploads[id] = up
		}
	})
	w.Write([]byte("OK - " + fmt.Sprint(len(data))))
}
