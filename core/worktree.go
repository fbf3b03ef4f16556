package core

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/jake-bot/jake-bot/core/gitrepo"
)

// maxPatchBytes bounds the patch /diff posts; past it the summary says
// how to see the rest.
const maxPatchBytes = 60_000

// worktreeOf returns conv's worktree, or nil for a plain workdir.
func worktreeOf(conv Conversation) *gitrepo.Worktree {
	if conv.Worktree == "" {
		return nil
	}
	return &gitrepo.Worktree{Path: conv.Worktree, Branch: conv.Branch, Main: conv.Repo}
}

// startArgs splits /start's argument into the workdir and the worktree
// flag: "~/app --worktree fix-1", "--worktree", "--no-worktree".
func startArgs(arg string) (workdir string, worktree *bool, name string) {
	fields := strings.Fields(arg)
	for i, f := range fields {
		flag, value, hasValue := strings.Cut(f, "=")
		switch flag {
		case "--worktree":
			on := true
			worktree = &on
			if hasValue {
				name = value
			} else if i+1 < len(fields) {
				name = fields[i+1]
			}
		case "--no-worktree":
			off := false
			worktree = &off
		default:
			continue
		}
		// A path may hold spaces: the workdir is the text before the flag.
		workdir = strings.TrimSpace(arg[:strings.Index(arg, f)])
		return workdir, worktree, name
	}
	return strings.TrimSpace(arg), nil, ""
}

// newWorktree creates conv's worktree from its workdir, here or on its
// runner. explicit says the user asked for it (--worktree); WORKTREES=always
// asks on everyone's behalf, and a workdir outside git then stays a plain
// one with a note.
func (c *call) newWorktree(ctx context.Context, conv *Conversation, name string, explicit bool) (note string, err error) {
	r, m := c.r, c.m
	if name == "" {
		name = conv.Plugin + "-" + randomHex(3)
	}
	wt, workdir, err := r.placeOf(*conv, r.cfg.Access.RightsOf(m)).NewWorktree(ctx, conv.Workdir, name)
	if errors.Is(err, gitrepo.ErrNotARepo) {
		if explicit {
			return "", Errorf("%s is not in a git repository: --worktree needs one (start without it, or git init there)", conv.Shown(conv.Workdir))
		}
		return " It is not in a git repository, so the conversation works there directly (no worktree).", nil
	}
	if err != nil {
		return "", err
	}
	conv.Workdir, conv.Worktree, conv.Branch, conv.Repo = workdir, wt.Path, wt.Branch, wt.Main
	return fmt.Sprintf(" It has its own worktree %s on branch %s (from %s's HEAD): /diff shows its changes, /merge merges them.", conv.Shown(conv.Worktree), wt.Branch, conv.Shown(conv.Repo)), nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// sharedWorkdir warns when another active conversation works directly in
// conv's workdir: both would edit the same files.
func (c *call) sharedWorkdir(k ConversationKey, conv Conversation) string {
	r := c.r
	e, ok := r.convs.Latest(func(e Entry) bool {
		return e.Key != k && e.Worktree == "" && e.Runner == conv.Runner && e.Workdir == conv.Workdir
	})
	if !ok {
		return ""
	}
	return fmt.Sprintf("\nAnother conversation (%s, %s) works in this directory too: you will both edit the same files. "+
		"To keep them apart, start with --worktree: /%s start %s --worktree", e.Key, e.Plugin, conv.Plugin, conv.Shown(conv.Workdir))
}

// cmdDiff shows what c's conversation changed.
func cmdDiff(c *call) (string, error) {
	ctx, conv := c.ctx, c.conv
	ch, err := c.changes(ctx, conv)
	if err != nil {
		return "", err
	}
	if ch.Patch == "" && ch.Stat == "" {
		return "No changes since " + ch.Since + ".", nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Changes since %s:\n```\n%s\n```", ch.Since, ch.Stat)
	if name, ok := c.attachPatch(ctx, conv, ch); ok {
		fmt.Fprintf(&b, "\nThe whole patch (%s) is attached as %s.", size(int64(len(ch.Patch))), name)
	} else if ch.Patch != "" {
		patch, whole := ch.Patch, max(ch.PatchSize, len(ch.Patch))
		if len(patch) > maxPatchBytes {
			patch = patch[:strings.LastIndexByte(patch[:maxPatchBytes], '\n')+1]
		}
		if len(patch) < whole {
			fmt.Fprintf(&b, "\nThe patch is %d KB; its first %d KB:", whole>>10, len(patch)>>10)
		}
		fmt.Fprintf(&b, "\n```diff\n%s```", patch)
	}
	return b.String(), nil
}

// changes is what conv changed: on this machine, or on its runner, which
// checks the workdir against the author's roots there.
func (c *call) changes(ctx context.Context, conv Conversation) (gitrepo.Changes, error) {
	ch, err := c.r.placeOf(conv, c.who).Diff(ctx, conv.Workdir, worktreeOf(conv))
	return ch, WorkError(err)
}

// inlinePatchBytes is the longest patch /diff shows in its message where
// the platform can attach it as a file instead.
const inlinePatchBytes = 1500

// attachPatch sends a long patch as a .diff file, secrets blanked, where
// the platform sends files; ok is false when it was not sent. A patch cut
// short is not sent as if it were whole.
func (c *call) attachPatch(ctx context.Context, conv Conversation, ch gitrepo.Changes) (name string, ok bool) {
	r, a, m := c.r, c.a, c.m
	patch := ch.Patch
	fs, can := a.p.(FileSender)
	if !can || ch.Cut() || len(patch) <= inlinePatchBytes || int64(len(patch)) > r.files.maxAttachment() {
		return "", false
	}
	name = cmp.Or(conv.Shown(conv.Worktree), filepath.Base(conv.Workdir), "changes") + ".diff"
	if _, err := fs.SendFile(ctx, m.Target(), name, []byte(r.cfg.Redactor.Redact(patch)), ""); err != nil {
		r.logger.Warn("attach the patch", "err", err)
		return "", false
	}
	return name, true
}

// cmdMerge commits and merges c's worktree conversation's branch, here
// or on its runner.
func cmdMerge(c *call) (string, error) {
	ctx, conv := c.ctx, c.conv
	wt := worktreeOf(conv)
	if wt == nil {
		return "", Errorf("this conversation works directly in %s, not in a worktree: there is no branch to merge. /%s start --worktree starts one that has", conv.Shown(conv.Workdir), conv.Plugin)
	}
	return c.place().Merge(ctx, *wt, c.conversationTitle(ctx, conv))
}

// conversationTitle is the CLI's title for conv's session, for a commit
// message; the branch when the CLI has none.
func (c *call) conversationTitle(ctx context.Context, conv Conversation) string {
	r, m := c.r, c.m
	p, err := r.placeOf(conv, r.cfg.Access.RightsOf(m)).Plugin(conv.Plugin, m)
	if err == nil && conv.SessionID != "" {
		if infos, err := p.Conversations(ctx, conv.Workdir); err == nil {
			for _, info := range infos {
				if info.SessionID == conv.SessionID && strings.TrimSpace(info.Title) != "" {
					return Shorten(strings.Join(strings.Fields(info.Title), " "), 72)
				}
			}
		}
	}
	return "Changes from the jakebot conversation on " + conv.Branch
}

// endWorktree removes an ended conversation's worktree, here or on its
// runner, if nothing in it is unmerged, and says what became of it.
func (r *Router) endWorktree(ctx context.Context, conv Conversation) string {
	wt := worktreeOf(conv)
	if wt == nil {
		return ""
	}
	// Whoever ends the conversation removes its worktree: an admin's, in
	// a thread others write in, included.
	if err := r.placeOf(conv, Rights{Admin: true}).RemoveWorktree(ctx, *wt); err != nil {
		var ref *gitrepo.Refusal
		var ue *UserError
		switch {
		case errors.As(err, &ref):
			return "\n" + ref.Msg
		case errors.As(err, &ue):
			return "\n" + UserMessage(err)
		}
		r.logger.Warn("remove a worktree", "worktree", conv.Shown(conv.Worktree), "err", err)
		return fmt.Sprintf("\nThe worktree %s could not be removed: %v", conv.Shown(conv.Worktree), err)
	}
	return fmt.Sprintf("\nIts worktree %s and branch %s had nothing unmerged and are removed.", conv.Shown(conv.Worktree), wt.Branch)
}
