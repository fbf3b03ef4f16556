package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nats-io/nats.go"

	"github.com/jake-bot/jake-bot/core"
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
	if req.Op == "create" {
		wd, err := r.workdir(req.Workdir, req.Admin)
		if err != nil {
			return worktreeReply{}, err
		}
		wt, workdir, err := core.CreateWorktree(ctx, wd, req.Name, r.cfg.WorktreeDir, r.userRoots(req.Admin))
		return worktreeReply{Worktree: toWireWorktree(wt), Workdir: workdir}, err
	}
	wt := req.Worktree.worktree()
	if err := r.checkWorktree(ctx, wt, req.Admin); err != nil {
		return worktreeReply{}, err
	}
	switch req.Op {
	case "merge":
		msg, err := gitrepo.Merge(ctx, wt, req.Title)
		if err != nil {
			return worktreeReply{}, core.GitError(err)
		}
		return worktreeReply{Message: msg}, nil
	case "remove":
		return worktreeReply{}, core.GitError(gitrepo.Remove(ctx, wt))
	}
	return worktreeReply{}, fmt.Errorf("no worktree operation %q", req.Op)
}

// checkWorktree refuses a worktree that is not one of the bot's inside the
// user's roots here: its repository inside them, and the worktree (if it
// is still there) a worktree of that repository with the branch its name
// gives checked out, as CreateWorktree made it. A forged request cannot merge or
// remove anything else.
func (r *Runner) checkWorktree(ctx context.Context, wt gitrepo.Worktree, admin bool) error {
	main, err := r.workdir(wt.Main, admin)
	if err != nil {
		return err
	}
	if wt.Branch != gitrepo.BranchPrefix+filepath.Base(wt.Path) || main != wt.Main {
		return core.Errorf("on %s: %s is not a worktree of the bot's", r.cfg.Name, wt.Path)
	}
	if _, err := os.Lstat(wt.Path); os.IsNotExist(err) {
		return nil // removed already: Remove only prunes what git remembers
	}
	path, err := r.workdir(wt.Path, admin)
	if err != nil {
		return err
	}
	if top, of, err := gitrepo.Top(ctx, path); err != nil || path != wt.Path || top != path || of != main || path == main {
		return core.Errorf("on %s: %s is not a worktree of %s", r.cfg.Name, wt.Path, main)
	}
	if branch, err := gitrepo.Branch(ctx, path); err != nil || branch != wt.Branch {
		return core.Errorf("on %s: %s is not on branch %s", r.cfg.Name, wt.Path, wt.Branch)
	}
	return nil
}

// NewWorktree asks runner for a worktree of workdir's repository there.
func (g *Gateway) NewWorktree(ctx context.Context, runner, workdir, name string, admin bool) (gitrepo.Worktree, string, error) {
	rep, err := g.worktreeRequest(ctx, runner, worktreeRequest{Op: "create", Workdir: workdir, Name: name, Admin: admin})
	return rep.Worktree.worktree(), rep.Workdir, err
}

// Merge asks runner to merge wt there.
func (g *Gateway) Merge(ctx context.Context, runner string, wt gitrepo.Worktree, title string, admin bool) (string, error) {
	title = g.cfg.Redactor.Redact(title)
	rep, err := g.worktreeRequest(ctx, runner, worktreeRequest{Op: "merge", Worktree: toWireWorktree(wt), Title: title, Admin: admin})
	return rep.Message, err
}

// RemoveWorktree asks runner to remove wt there.
func (g *Gateway) RemoveWorktree(ctx context.Context, runner string, wt gitrepo.Worktree, admin bool) error {
	_, err := g.worktreeRequest(ctx, runner, worktreeRequest{Op: "remove", Worktree: toWireWorktree(wt), Admin: admin})
	return err
}

func (g *Gateway) worktreeRequest(ctx context.Context, runner string, req worktreeRequest) (worktreeReply, error) {
	var rep worktreeReply
	if err := g.request(ctx, runnerSubject(runner, "worktree"), req, &rep); err != nil {
		return worktreeReply{}, fmt.Errorf("runner %s: %w", runner, err)
	}
	return rep, rep.Error.err()
}

var _ core.RunnerWorktrees = (*Gateway)(nil)
