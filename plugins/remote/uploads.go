package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/workspace"
)

// An upload not heard of for uploadIdle is dropped, its partial files
// removed: its gateway gave up on it. A runner takes at most maxUploads at
// once, of at most maxUploadFiles files each, and holds one file of each
// open.
const (
	uploadIdle     = time.Minute
	maxUploads     = 32
	maxUploadFiles = 64
)

// upload is the files of one message on their way to a workdir here, each
// under a temporary name in the day's uploads folder until the commit.
type upload struct {
	dir     *workspace.Folder
	temps   []string // the files' temporary names
	names   []string
	cur     *os.File // the last file, being written
	written int64    // its bytes so far
	total   int64    // every file's
	touched time.Time
}

// drop removes the partial files, and closes the folder.
func (u *upload) drop() {
	if u.cur != nil {
		u.cur.Close()
	}
	for _, t := range u.temps {
		u.dir.Remove(t)
	}
	u.dir.Close()
}

// commit gives every file its name: all, or none.
func (u *upload) commit() ([]string, error) {
	defer u.drop() // the temporary names; the files keep theirs
	var err error
	if u.cur != nil {
		err, u.cur = u.cur.Close(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("save %s: %w", u.names[len(u.names)-1], err)
	}
	var paths []string
	for i, tmp := range u.temps {
		path, err := u.dir.Place(tmp, u.names[i])
		if err != nil {
			for _, p := range paths {
				u.dir.Remove(filepath.Base(p))
			}
			return nil, fmt.Errorf("save %s: %w", u.names[i], err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// upload takes a part of the files sent with a message for a conversation
// here.
func (r *Runner) upload(ctx context.Context, m *nats.Msg) {
	var req uploadRequest
	if err := json.Unmarshal(m.Data, &req); err != nil || !validName(req.ID) {
		r.respond(m, uploadReply{Error: &wireError{Message: "malformed upload"}})
		return
	}
	paths, err := r.uploadPart(ctx, req)
	r.respond(m, uploadReply{Paths: paths, Error: r.wireError(err)})
}

func (r *Runner) uploadPart(ctx context.Context, req uploadRequest) ([]string, error) {
	r.upMu.Lock()
	defer r.upMu.Unlock()
	r.dropUploads(uploadIdle)
	u := r.uploads[req.ID]
	if req.Abort || u == nil && (req.File != 0 || req.Offset != 0 || req.Commit) {
		if u != nil {
			u.drop()
			delete(r.uploads, req.ID)
		}
		if req.Abort {
			return nil, nil
		}
		return nil, fmt.Errorf("upload %s: no such upload here (it was idle over %s?)", req.ID, uploadIdle)
	}
	if u == nil {
		var err error
		if u, err = r.newUpload(ctx, req); err != nil {
			return nil, err
		}
		r.uploads[req.ID] = u
	}
	u.touched = time.Now()
	if req.Commit {
		delete(r.uploads, req.ID)
		return u.commit()
	}
	if err := r.write(u, req); err != nil {
		u.drop()
		delete(r.uploads, req.ID)
		return nil, err
	}
	return nil, nil
}

// newUpload checks the workdir, for the user, and prepares its uploads
// folder.
func (r *Runner) newUpload(ctx context.Context, req uploadRequest) (*upload, error) {
	if r.uploadsClosed {
		return nil, core.Errorf("%s is stopping; send the files again once it is back", r.cfg.Name)
	}
	if len(r.uploads) >= maxUploads {
		return nil, core.Errorf("%s is taking %d uploads already; try again", r.cfg.Name, maxUploads)
	}
	wd, err := r.workdir(req.Workdir, req.Admin)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	dir, err := r.space(req.Admin).PrepareUploads(ctx, wd, core.Day(now), now, r.logger)
	if err != nil {
		return nil, r.workError(err)
	}
	return &upload{dir: dir}, nil
}

// write adds a part: the next of the last file, or the first of the next.
func (r *Runner) write(u *upload, req uploadRequest) error {
	switch {
	case req.File == len(u.temps) && req.Offset == 0:
		if len(u.temps) == maxUploadFiles {
			return core.Errorf("%s takes at most %d files with one message", r.cfg.Name, maxUploadFiles)
		}
		if u.cur != nil {
			if err := u.cur.Close(); err != nil {
				u.cur = nil
				return fmt.Errorf("save %s: %w", u.names[len(u.names)-1], err)
			}
		}
		f, tmp, err := u.dir.CreateTemp()
		u.cur = f
		if err != nil {
			return fmt.Errorf("save %s: %w", req.Name, err)
		}
		u.temps, u.names, u.written = append(u.temps, tmp), append(u.names, workspace.CleanFileName(req.Name)), 0
	case req.File == len(u.temps)-1 && req.Offset == u.written:
	default:
		return fmt.Errorf("upload %s: part %d at %d out of order", req.ID, req.File, req.Offset)
	}
	if u.total += int64(len(req.Data)); u.total > r.cfg.AttachmentMaxBytes {
		return core.Errorf("the files are over %s's limit of %d bytes (its ATTACHMENT_MAX_BYTES): nothing was saved, and your message was not sent", r.cfg.Name, r.cfg.AttachmentMaxBytes)
	}
	n, err := u.cur.Write(req.Data)
	u.written += int64(n)
	if err != nil {
		return fmt.Errorf("save %s: %w", req.Name, err)
	}
	return nil
}

// dropIdleUploads drops the uploads not heard of for uploadIdle, unless
// an upload is being written: it runs between the runner's announcements,
// which must never wait for a disk or git (a runner silent for
// OfflineAfter is offline), and the next round sweeps instead.
func (r *Runner) dropIdleUploads() {
	if r.upMu.TryLock() {
		defer r.upMu.Unlock()
		r.dropUploads(uploadIdle)
	}
}

// closeUploads drops every upload, and refuses those that come after: a
// handler still running when Run ends may yet ask for one.
func (r *Runner) closeUploads() {
	r.upMu.Lock()
	defer r.upMu.Unlock()
	r.uploadsClosed = true
	r.dropUploads(0)
}

// dropUploads drops the uploads not heard of for idle (all, with 0).
// Call it with upMu held.
func (r *Runner) dropUploads(idle time.Duration) {
	for id, u := range r.uploads {
		if time.Since(u.touched) >= idle {
			u.drop()
			delete(r.uploads, id)
		}
	}
}

// uploadedImages keeps, of a turn's images, those in workdir's uploads
// folder, their symlinks resolved: a gateway names only files it
// uploaded, and a turn's images are read by the CLI as they are.
func (r *Runner) uploadedImages(workdir string, images []string) []string {
	uploads := filepath.Join(workdir, ".jakebot", "uploads") + string(filepath.Separator)
	var kept []string
	for _, img := range images {
		real, err := filepath.EvalSymlinks(img)
		if err != nil || !strings.HasPrefix(real, uploads) {
			r.logger.Warn("a turn's image is not an upload of its workdir: left out", "image", img, "workdir", workdir)
			continue
		}
		kept = append(kept, real)
	}
	return kept
}

// Upload sends files to the runner, part after part, to save in workdir
// there.
func (p runnerPlace) Upload(ctx context.Context, workdir string, files []core.UploadFile) ([]string, error) {
	g, runner := p.g, p.runner
	id := newID()
	send := func(req uploadRequest) ([]string, error) {
		var rep uploadReply
		if err := g.request(ctx, runnerSubject(runner, "upload"), req, &rep); err != nil {
			return nil, fmt.Errorf("runner %s: %w", runner, err)
		}
		return rep.Paths, rep.Error.err()
	}
	for i, f := range files {
		if err := g.uploadFile(send, uploadRequest{ID: id, Workdir: workdir, Admin: p.admin, File: i, Name: f.Name}, f.Path); err != nil {
			// Dropped there at once, rather than when it has been idle.
			send(uploadRequest{ID: id, Abort: true})
			return nil, err
		}
	}
	return send(uploadRequest{ID: id, Commit: true})
}

// uploadFile sends the file at path in parts of req's file.
func (g *Gateway) uploadFile(send func(uploadRequest) ([]string, error), req uploadRequest, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, dataRoom(g.nc))
	for {
		n, err := io.ReadFull(f, buf)
		if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
			return fmt.Errorf("read %s: %w", req.Name, err)
		}
		if n > 0 || req.Offset == 0 {
			req.Data = buf[:n]
			if _, err := send(req); err != nil {
				return err
			}
			req.Offset += int64(n)
		}
		if n < len(buf) {
			return nil
		}
	}
}
