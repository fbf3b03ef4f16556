package discordtest

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
)

// File is a file attached to a message: one a user sent, or one
// the bot uploaded.
type File struct {
	Name, ContentType string
	Data              []byte
	// Voice marks a voice message (a user's only: flag 1<<13).
	Voice bool
}

// voiceFlag is the message flag of a voice message.
const voiceFlag = 1 << 13

// SayWithFiles dispatches MESSAGE_CREATE: u writes content in channel
// with files attached. Each file is served at its attachment URL on the
// fake's own host, as Discord's CDN serves them: without the bot token.
func (d *Server) SayWithFiles(u User, channel, content string, files ...File) string {
	d.mu.Lock()
	m := d.addMessage(channel, u.ID, "")
	m.Content = content
	m.Files = files
	guild := d.guildOf(channel)
	var attachments []any
	flags := 0
	for i, f := range files {
		path := fmt.Sprintf("/attachments/%s/%s/%d/%s", channel, m.ID, i, f.Name)
		d.attachments[path] = f
		attachments = append(attachments, map[string]any{"id": d.newID(), "filename": f.Name, "size": len(f.Data),
			"content_type": f.ContentType, "url": d.srv.URL + path, "proxy_url": d.srv.URL + path})
		if f.Voice {
			flags |= voiceFlag
		}
	}
	d.notify()
	d.mu.Unlock()
	ev := d.userMessage(m.ID, u, channel, guild, content)
	ev["attachments"] = attachments
	ev["flags"] = flags
	d.Dispatch("MESSAGE_CREATE", ev)
	return m.ID
}

// serveAttachment answers a download of a file a user sent.
func (d *Server) serveAttachment(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	f, ok := d.attachments[r.URL.Path]
	d.downloads = append(d.downloads, Call{Method: r.Method, Path: r.URL.Path, At: d.Now(),
		Authorization: r.Header.Get("Authorization")})
	d.mu.Unlock()
	if !ok || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", f.ContentType)
	w.Write(f.Data)
}

// Downloads returns the attachment downloads the fake served.
func (d *Server) Downloads() []Call {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Call(nil), d.downloads...)
}

// messageBody returns a message call's JSON body and its files: a
// multipart body (payload_json and files[n]) when files are sent, as
// Discord takes them, or the plain JSON body.
func messageBody(c Call) ([]byte, []File, error) {
	mt, params, err := mime.ParseMediaType(c.ContentType)
	if err != nil || !strings.HasPrefix(mt, "multipart/") {
		return c.Body, nil, nil
	}
	var payload []byte
	var files []File
	mr := multipart.NewReader(bytes.NewReader(c.Body), params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return payload, files, nil
		}
		if err != nil {
			return nil, nil, err
		}
		data, err := io.ReadAll(p)
		if err != nil {
			return nil, nil, err
		}
		switch name := p.FormName(); {
		case name == "payload_json":
			payload = data
		case strings.HasPrefix(name, "files["):
			files = append(files, File{Name: p.FileName(), ContentType: p.Header.Get("Content-Type"), Data: data})
		default:
			return nil, nil, fmt.Errorf("unknown form field %q", name)
		}
	}
}
