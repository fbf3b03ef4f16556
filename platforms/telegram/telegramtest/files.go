package telegramtest

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/jake-bot/jake-bot/platforms/internal/fakeserver"
)

// This file holds the fake's files: getFile and the file download URL for
// what users send, sendDocument (multipart) for what the bot sends.

// File is a file a user sent, as the fake stores it.
type File struct {
	ID   string
	Path string
	Data []byte
	// Missing makes the download answer 404, as a file past its time.
	Missing bool
}

// Document is a document the bot sent.
type Document struct {
	ChatID   int64
	Thread   int
	Name     string
	Data     []byte
	Caption  string
	MimeType string
}

// UserSends queues an update: from sends a file in chat with caption.
// kind is "photo", "document" or "voice". It returns the update id and
// the file's id.
func (s *Server) UserSends(chat Chat, from User, kind, name string, data []byte, caption string) (int, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextFile++
	id := fmt.Sprintf("file-%d", s.nextFile)
	s.files[id] = &File{ID: id, Path: fmt.Sprintf("%ss/file_%d_%s", kind, s.nextFile, name), Data: data}
	size := len(data)
	msg := s.userMessage(chat, from)
	if caption != "" {
		msg["caption"] = caption
	}
	switch kind {
	case "photo":
		// Telegram sends every size; the largest last.
		msg["photo"] = []map[string]any{
			{"file_id": id + "-thumb", "file_unique_id": "u" + id + "t", "width": 90, "height": 60, "file_size": 100},
			{"file_id": id, "file_unique_id": "u" + id, "width": 1280, "height": 800, "file_size": size},
		}
	case "voice":
		msg["voice"] = map[string]any{"file_id": id, "file_unique_id": "u" + id, "duration": 3, "mime_type": "audio/ogg", "file_size": size}
	default:
		msg["document"] = map[string]any{"file_id": id, "file_unique_id": "u" + id, "file_name": name, "mime_type": "application/octet-stream", "file_size": size}
	}
	return s.queue(map[string]any{"message": msg}), id
}

// File returns a file users sent, so a test can change it.
func (s *Server) File(id string) *File {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.files[id]
}

// Documents returns the documents the bot sent to chat.
func (s *Server) Documents(chat int64) []Document {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fakeserver.Keep(s.documents, func(d Document) bool { return d.ChatID == chat })
}

func (s *Server) getFile(id string) (any, *Failure) {
	f, ok := s.files[id]
	if !ok {
		return nil, failure(400, "Bad Request: invalid file_id")
	}
	return map[string]any{"file_id": f.ID, "file_unique_id": "u" + f.ID, "file_size": len(f.Data), "file_path": f.Path}, nil
}

// serveFile answers GET /file/bot<token>/<path>.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, "/file/bot")
	token, path, _ := strings.Cut(rest, "/")
	if token != Token {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	s.mu.Lock()
	var found *File
	for _, f := range s.files {
		if f.Path == path {
			found = f
		}
	}
	s.mu.Unlock()
	if found == nil || found.Missing {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(found.Data)))
	_, _ = w.Write(found.Data)
}

// sendDocument stores an uploaded document; the fake's serve has parsed
// the multipart form.
func (s *Server) sendDocument(chat int64, r *http.Request) (any, *Failure) {
	c, ok := s.chats[chat]
	if !ok {
		return nil, failure(400, "Bad Request: chat not found")
	}
	thread, _ := strconv.Atoi(r.PostForm.Get("message_thread_id"))
	if thread != 0 && (!c.IsForum || s.topics[chat][thread] == "") {
		return nil, failure(400, "Bad Request: message thread not found")
	}
	file, header, err := r.FormFile("document")
	if err != nil {
		return nil, failure(400, "Bad Request: there is no document in the request")
	}
	defer file.Close()
	data, err := io.ReadAll(file)
	if err != nil {
		return nil, failure(400, "Bad Request: "+err.Error())
	}
	s.documents = append(s.documents, Document{ChatID: chat, Thread: thread, Name: header.Filename, Data: data,
		Caption: r.PostForm.Get("caption"), MimeType: header.Header.Get("Content-Type")})
	m := &Message{ID: s.nextMsg, ChatID: chat, Thread: thread, Text: r.PostForm.Get("caption")}
	s.nextMsg++
	s.messages[chat] = append(s.messages[chat], m)
	out := s.messageJSON(*m)
	out["document"] = map[string]any{"file_id": "sent-" + header.Filename, "file_unique_id": "s" + header.Filename, "file_name": header.Filename, "file_size": len(data)}
	return out, nil
}
