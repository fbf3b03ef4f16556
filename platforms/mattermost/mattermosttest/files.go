package mattermosttest

import (
	"mime"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func fileJSON(f *File) map[string]any {
	return map[string]any{"id": f.ID, "name": f.Name, "size": len(f.Data), "mime_type": f.MimeType,
		"extension": strings.TrimPrefix(filepath.Ext(f.Name), "."), "user_id": f.User}
}

// uploadFiles stores the multipart form's files (POST /files), for a
// post to name in its file_ids.
func (s *Server) uploadFiles(r *http.Request, c *Call) (int, any) {
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		return appError(http.StatusBadRequest, "api.file.upload_file.read_request.app_error", "Unable to upload file(s). Error reading or parsing request data.")
	}
	channelID := r.FormValue("channel_id")
	if _, ok := s.channels[channelID]; !ok {
		return appError(http.StatusForbidden, "api.context.permissions.app_error", "You do not have the appropriate permissions.")
	}
	var infos []map[string]any
	for _, fh := range r.MultipartForm.File["files"] {
		f, err := fh.Open()
		if err != nil {
			return appError(http.StatusBadRequest, "api.file.upload_file.read_request.app_error", err.Error())
		}
		data := make([]byte, fh.Size)
		_, err = f.Read(data)
		f.Close()
		if err != nil && fh.Size > 0 {
			return appError(http.StatusBadRequest, "api.file.upload_file.read_request.app_error", err.Error())
		}
		file := s.storeLocked(s.Bot, channelID, fh.Filename, data)
		infos = append(infos, fileJSON(file))
		c.Body += fh.Filename + " "
	}
	if len(infos) == 0 {
		return appError(http.StatusBadRequest, "api.file.upload_file.no_files.app_error", "No files in the request.")
	}
	return http.StatusCreated, map[string]any{"file_infos": infos, "client_ids": []string{}}
}

func (s *Server) storeLocked(u User, channel, name string, data []byte) *File {
	typ := mime.TypeByExtension(filepath.Ext(name))
	if typ == "" {
		typ = "application/octet-stream"
	}
	f := &File{ID: s.nextID('f'), Name: name, MimeType: typ, Channel: channel, User: u.ID, Data: slices.Clone(data)}
	s.files[f.ID] = f
	return f
}

func (s *Server) getFile(r *http.Request, c *Call) (int, any) {
	id := r.PathValue("file_id")
	if !idRE.MatchString(id) {
		return badID("file_id")
	}
	f, ok := s.files[id]
	if !ok || f.Post == "" {
		return appError(http.StatusNotFound, "app.file_info.get.app_error", "Unable to get the file info.")
	}
	s.downloads = append(s.downloads, id)
	return http.StatusOK, slices.Clone(f.Data)
}

// Upload stores a file u uploads to channel, for Say to post, and
// returns its id.
func (s *Server) Upload(t testing.TB, u User, channel, name string, data []byte) string {
	t.Helper()
	var id string
	s.update(func() { id = s.storeLocked(u, channel, name, data).ID })
	return id
}
