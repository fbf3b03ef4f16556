package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/jake-bot/jake-bot/core/gitrepo"
)

func (w wireWorktree) worktree() gitrepo.Worktree {
	return gitrepo.Worktree{Path: w.Path, Branch: w.Branch, Main: w.Main}
}

func toWireWorktree(wt gitrepo.Worktree) wireWorktree {
	return wireWorktree{Path: wt.Path, Branch: wt.Branch, Main: wt.Main}
}

// worktree makes, merges or removes a conversation's worktree here.
func (r *Runner) worktree(ctx context.Context, m *nats.Msg) {
	var req worktreeRequest
	if err := json.Unmarshal(m.Data, &req); err != nil {
		r.respond(m, worktreeReply{Error: toWire(err)})
		return
	}
	rep, err := r.worktreeOp(ctx, req)
	rep.Error = r.wireError(err)
	rep.Message = r.cfg.Redactor.Redact(rep.Message)
	r.respond(m, rep)
}

func (r *Runner) worktreeOp(ctx context.Context, req worktreeRequest) (worktreeReply, error) {
	s := r.space(req.Admin)
	switch req.Op {
	case "create":
		wd, err := r.workdir(req.Workdir, req.Admin)
		if err != nil {
			return worktreeReply{}, err
		}
		wt, workdir, err := s.NewWorktree(ctx, wd, req.Name)
		if errors.Is(err, gitrepo.ErrNotARepo) {
			return worktreeReply{}, err
		}
		return worktreeReply{Worktree: toWireWorktree(wt), Workdir: workdir}, r.workError(err)
	case "merge":
		msg, err := s.Merge(ctx, req.Worktree.worktree(), req.Title)
		return worktreeReply{Message: msg}, r.workError(err)
	case "remove":
		return worktreeReply{}, r.workError(s.RemoveWorktree(ctx, req.Worktree.worktree()))
	}
	return worktreeReply{}, fmt.Errorf("no worktree operation %q", req.Op)
}

// NewWorktree asks the runner for a worktree of workdir's repository
// there.
func (p runnerPlace) NewWorktree(ctx context.Context, workdir, name string) (gitrepo.Worktree, string, error) {
	rep, err := p.g.worktreeRequest(ctx, p.runner, worktreeRequest{Op: "create", Workdir: workdir, Name: name, Admin: p.admin})
	return rep.Worktree.worktree(), rep.Workdir, err
}

// Merge asks the runner to merge wt there.
func (p runnerPlace) Merge(ctx context.Context, wt gitrepo.Worktree, title string) (string, error) {
	title = p.g.cfg.Redactor.Redact(title)
	rep, err := p.g.worktreeRequest(ctx, p.runner, worktreeRequest{Op: "merge", Worktree: toWireWorktree(wt), Title: title, Admin: p.admin})
	return rep.Message, err
}

// RemoveWorktree asks the runner to remove wt there.
func (p runnerPlace) RemoveWorktree(ctx context.Context, wt gitrepo.Worktree) error {
	_, err := p.g.worktreeRequest(ctx, p.runner, worktreeRequest{Op: "remove", Worktree: toWireWorktree(wt), Admin: p.admin})
	return err
}

func (g *Gateway) worktreeRequest(ctx context.Context, runner string, req worktreeRequest) (worktreeReply, error) {
	var rep worktreeReply
	if err := g.request(ctx, runnerSubject(runner, "worktree"), req, &rep); err != nil {
		return worktreeReply{}, fmt.Errorf("runner %s: %w", runner, err)
	}
	return rep, rep.Error.err()
}
