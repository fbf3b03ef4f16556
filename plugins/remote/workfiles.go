package remote

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/gitrepo"
)

// room is how much of a message on nc its data may take: the server's
// max_payload, less a quarter of it (16 KiB at most) for the rest.
func room(nc *nats.Conn) int {
	max := int(nc.MaxPayload())
	return max - min(16<<10, max/4)
}

// dataRoom is a message's room for bytes that travel as base64.
func dataRoom(nc *nats.Conn) int { return room(nc) * 3 / 4 }

// diff answers /diff for a conversation here: what changed in its
// workdir, checked against the user's roots here, with the runner's
// secrets blanked.
func (r *Runner) diff(ctx context.Context, m *nats.Msg) {
	var req diffRequest
	if err := json.Unmarshal(m.Data, &req); err != nil {
		r.respond(m, diffReply{Error: toWire(err)})
		return
	}
	wd, err := r.workdir(req.Workdir, req.Admin)
	if err != nil {
		r.respond(m, diffReply{Error: r.wireError(err)})
		return
	}
	var wt *gitrepo.Worktree
	if req.Worktree != nil {
		w := req.Worktree.worktree()
		wt = &w
	}
	c, err := r.space(req.Admin).Diff(ctx, wd, wt)
	if err != nil {
		r.respond(m, diffReply{Error: r.wireError(r.workError(err))})
		return
	}
	// The summary gets a quarter of the room at most, the patch the rest.
	room := dataRoom(r.nc)
	stat := []byte(r.cfg.Redactor.Redact(c.Stat))
	patch := []byte(r.cfg.Redactor.Redact(c.Patch))
	rep := diffReply{Since: c.Since, Stat: stat[:min(len(stat), room/4)], Patch: patch}
	if room -= len(rep.Stat); len(patch) > room {
		rep.Patch, rep.PatchSize = patch[:room], len(patch)
	}
	r.respond(m, rep)
}

// file answers a part of /file for a conversation here: the file checked
// as the gateway checks its own (workspace.Space.OpenFile) against the user's
// roots here, and refused whole if it holds one of the runner's secrets.
func (r *Runner) file(m *nats.Msg) {
	var req fileRequest
	if err := json.Unmarshal(m.Data, &req); err != nil {
		r.respond(m, fileReply{Error: toWire(err)})
		return
	}
	rep, err := r.filePart(req)
	rep.Error = r.wireError(err)
	r.respond(m, rep)
}

func (r *Runner) filePart(req fileRequest) (fileReply, error) {
	wd, err := r.workdir(req.Workdir, req.Admin)
	if err != nil {
		return fileReply{}, err
	}
	// The runner's own limit bounds what a request may ask for.
	f, fi, err := r.space(req.Admin).OpenFile(req.Path, wd, min(req.Max, r.cfg.AttachmentMaxBytes))
	if err != nil {
		return fileReply{}, core.WorkError(err)
	}
	defer f.Close()
	rep := fileReply{Path: f.Name(), Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}
	if req.Offset > 0 && (req.Size != rep.Size || req.ModTime != rep.ModTime) {
		return fileReply{}, core.Errorf("%s changed while it was being sent; try again", req.Path)
	}
	n := min(int64(dataRoom(r.nc)), rep.Size-req.Offset)
	if req.Offset < 0 || n <= 0 {
		return fileReply{}, core.Errorf("%s: no part at %d of its %d bytes", req.Path, req.Offset, rep.Size)
	}
	// Each part is checked for the runner's secrets with as much of its
	// neighbours as a secret is long, so that one cut in two is seen too,
	// whichever parts a request asks for.
	edge := int64(max(0, r.cfg.Redactor.Longest()-1))
	from, to := max(0, req.Offset-edge), min(rep.Size, req.Offset+n+edge)
	window := make([]byte, to-from)
	if _, err := f.ReadAt(window, from); err != nil {
		return fileReply{}, core.Errorf("%s changed while it was being sent; try again", req.Path)
	}
	if r.cfg.Redactor.Redact(string(window)) != string(window) {
		return fileReply{}, core.Errorf("%s holds one of %s's secrets: it is not sent", req.Path, r.cfg.Name)
	}
	rep.Data = window[req.Offset-from : req.Offset-from+n]
	return rep, nil
}

// Diff asks the runner what changed in workdir there, in worktree wt
// when not nil.
func (p runnerPlace) Diff(ctx context.Context, workdir string, wt *gitrepo.Worktree) (gitrepo.Changes, error) {
	g, runner := p.g, p.runner
	req := diffRequest{Workdir: workdir, Admin: p.admin}
	if wt != nil {
		w := toWireWorktree(*wt)
		req.Worktree = &w
	}
	var rep diffReply
	if err := g.request(ctx, runnerSubject(runner, "diff"), req, &rep); err != nil {
		return gitrepo.Changes{}, fmt.Errorf("runner %s: %w", runner, err)
	}
	return gitrepo.Changes{Stat: string(rep.Stat), Patch: string(rep.Patch), Since: rep.Since, PatchSize: rep.PatchSize}, rep.Error.err()
}

// ReadFile reads path in workdir on the runner, part after part.
func (p runnerPlace) ReadFile(ctx context.Context, workdir, path string, max int64) (core.WorkFile, error) {
	g, runner := p.g, p.runner
	req := fileRequest{Workdir: workdir, Path: path, Admin: p.admin, Max: max}
	var f core.WorkFile
	for {
		var rep fileReply
		if err := g.request(ctx, runnerSubject(runner, "file"), req, &rep); err != nil {
			return core.WorkFile{}, fmt.Errorf("runner %s: %w", runner, err)
		}
		if err := rep.Error.err(); err != nil {
			return core.WorkFile{}, err
		}
		if req.Offset == 0 {
			if rep.Size > max {
				return core.WorkFile{}, fmt.Errorf("runner %s: %s is %d bytes, over the %d asked for", runner, path, rep.Size, max)
			}
			f = core.WorkFile{Path: rep.Path, Size: rep.Size, Data: make([]byte, 0, rep.Size)}
			req.Size, req.ModTime = rep.Size, rep.ModTime
		}
		if len(rep.Data) == 0 || int64(len(f.Data)+len(rep.Data)) > f.Size {
			return core.WorkFile{}, fmt.Errorf("runner %s: %s: a part of %d bytes at %d of %d", runner, path, len(rep.Data), req.Offset, f.Size)
		}
		f.Data = append(f.Data, rep.Data...)
		req.Offset = int64(len(f.Data))
		if req.Offset == f.Size {
			return f, nil
		}
	}
}
