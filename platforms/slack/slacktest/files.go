package slacktest

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/platforms/internal/fakeserver"
)

// This file holds the fake's files: the private URLs of what users share
// (files.slack.com's /files-pri/), and the external upload flow for what
// the bot shares (files.getUploadURLExternal, the upload URL,
// files.completeUploadExternal).

// File is a file in the fake workspace: one a user shared, or one
// the bot uploaded.
type File struct {
	// ID is set by the fake when empty.
	ID, Name, Mimetype string
	// Subtype is Slack's kind of file, "slack_audio" for a voice clip
	// recorded in Slack; "" for an ordinary upload.
	Subtype string
	// Size is the size the event declares; len(Data) when 0.
	Size int
	Data []byte
}

// Upload is a file the bot shared, with where it went.
type Upload struct {
	Channel, ThreadTS string
	File              File
	Comment           string
}

// Download is one request for a shared file's private URL.
type Download struct {
	FileID        string
	Authorization string
}

// PostFiles posts a message with files from user in channel (in thread
// unless ""), as Slack sends a file share: a message event of subtype
// file_share, and an app_mention first when text mentions the bot, both
// listing the files. Their private URLs serve the bytes to the bot token
// only.
func (s *Server) PostFiles(t testing.TB, user, channel, thread, text string, files ...File) Posted {
	t.Helper()
	return s.post(t, user, channel, thread, text, files)
}

// FileURL returns the url_private_download of a file a user shared, ""
// for an unknown id.
func (s *Server) FileURL(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.sharedFiles[id]
	if !ok {
		return ""
	}
	return s.fileLink(f, true)
}

// Downloads returns every request for a shared file, in order.
func (s *Server) Downloads() []Download {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Download(nil), s.downloads...)
}

// Uploads returns the files the bot shared in channel, in order.
func (s *Server) Uploads(channel string) []Upload {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fakeserver.Keep(s.uploads, func(u Upload) bool { return u.Channel == channel })
}

// shareLocked stores the files of the message at ts and returns their
// file objects for its events, nil when there are none; s.mu is held.
func (s *Server) shareLocked(ts string, files []File) []map[string]any {
	var out []map[string]any
	for i, f := range files {
		if f.ID == "" {
			f.ID = fmt.Sprintf("F%s%d", strings.ReplaceAll(ts, ".", ""), i)
		}
		if f.Size == 0 {
			f.Size = len(f.Data)
		}
		s.sharedFiles[f.ID] = f
		obj := map[string]any{"id": f.ID, "name": f.Name, "title": f.Name, "mimetype": f.Mimetype, "size": f.Size,
			"mode": "hosted", "is_external": false, "url_private": s.fileLink(f, false), "url_private_download": s.fileLink(f, true)}
		if f.Subtype != "" {
			obj["subtype"] = f.Subtype
		}
		out = append(out, obj)
	}
	return out
}

// fileLink is a shared file's private URL, shaped like files.slack.com's:
// /files-pri/<team>-<file>/[download/]<name>.
func (s *Server) fileLink(f File, download bool) string {
	link := s.srv.URL + "/files-pri/" + Team + "-" + f.ID + "/"
	if download {
		link += "download/"
	}
	return link + url.PathEscape(f.Name)
}

// serveFile answers a shared file's private URL. As files.slack.com does,
// it redirects a request without the bot token to the sign-in page, with
// redir naming the file's path (slack-go reports that as an error).
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, "/files-pri/"+Team+"-")
	id, _, _ := strings.Cut(rest, "/")
	auth := r.Header.Get("Authorization")
	var f File
	var ok bool
	s.update(func() {
		f, ok = s.sharedFiles[id]
		s.downloads = append(s.downloads, Download{FileID: id, Authorization: auth})
	})
	switch {
	case auth != "Bearer "+BotToken:
		http.Redirect(w, r, "/?redir="+url.QueryEscape(r.URL.Path), http.StatusFound)
	case !ok:
		http.NotFound(w, r)
	default:
		w.Header().Set("Content-Type", f.Mimetype)
		w.Write(f.Data)
	}
}

// serveSignIn is the workspace's sign-in page.
func (s *Server) serveSignIn(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write([]byte("<!DOCTYPE html><html><body>Sign in to Fake</body></html>"))
}

// filesMethod answers the external upload flow's two Web API methods, nil
// for any other method; s.mu is held.
func (s *Server) filesMethod(method string, f url.Values) map[string]any {
	switch method {
	case "files.getUploadURLExternal":
		if f.Get("filename") == "" || f.Get("length") == "" {
			return map[string]any{"ok": false, "error": "invalid_arguments"}
		}
		s.seq++
		id := fmt.Sprintf("FUP%04d", s.seq)
		s.pendingUploads[id] = File{ID: id, Name: f.Get("filename")}
		return map[string]any{"ok": true, "upload_url": s.srv.URL + "/upload/v1/" + id, "file_id": id}
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
			s.uploads = append(s.uploads, Upload{Channel: f.Get("channel_id"), ThreadTS: f.Get("thread_ts"), File: up,
				Comment: f.Get("initial_comment")})
			done = append(done, map[string]any{"id": fs.ID, "title": fs.Title})
		}
		return map[string]any{"ok": true, "files": done}
	}
	return nil
}

// serveUpload takes the bytes of an external upload, as a multipart
// "file" field (slack-go's way) or as the raw body. Like Slack's, the
// upload URL needs no token: it names the pending file.
func (s *Server) serveUpload(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, "/upload/v1/")
	var body io.Reader = r.Body
	mediaType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mediaType == "multipart/form-data" {
		file, _, err := r.FormFile("file")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		defer file.Close()
		body = file
	}
	data, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var ok bool
	s.update(func() {
		var up File
		if up, ok = s.pendingUploads[id]; ok {
			up.Data, up.Size = data, len(data)
			s.pendingUploads[id] = up
		}
	})
	if !ok {
		http.NotFound(w, r)
		return
	}
	fmt.Fprintf(w, "OK - %d", len(data))
}
