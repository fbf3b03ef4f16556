package doctor

import (
	"context"
	"os/exec"

	"github.com/jake-bot/jake-bot/bot"
	"github.com/jake-bot/jake-bot/core/gitrepo"
)

// checkGit checks the git that worktrees, /diff and /merge run. Without
// it jakebot still starts and runs turns, unless every conversation is
// to have a worktree (WORKTREES=always).
func checkGit(ctx context.Context, r *Report, cfg bot.Config) {
	v, err := gitrepo.CheckGit(ctx)
	switch {
	case err == nil:
		r.add("tool", "git", OK, "%s", v)
	case cfg.Worktrees == "always":
		r.add("tool", "git", Fail, "%v: WORKTREES=always gives every conversation a git worktree", err)
	default:
		r.add("tool", "git", Warn, "%v: worktrees, /diff and /merge need git %d.%d or later", err, gitrepo.MinVersion[0], gitrepo.MinVersion[1])
	}
}

// checkTranscribe checks that TRANSCRIBE_CMD's program can be found: a
// typo would otherwise show only at the first voice note.
func checkTranscribe(r *Report, cfg bot.Config) {
	if len(cfg.TranscribeCmd) == 0 {
		r.add("tool", "TRANSCRIBE_CMD", OK, "unset: a voice note gets a message saying how to enable it")
		return
	}
	path, err := exec.LookPath(cfg.TranscribeCmd[0])
	if err != nil {
		r.add("tool", "TRANSCRIBE_CMD", Fail, "%s not found: voice notes could not be heard", cfg.TranscribeCmd[0])
		return
	}
	r.add("tool", "TRANSCRIBE_CMD", OK, "%s", path)
}

// checkSandbox tries the sandbox SANDBOX asks for, as start-up does: which
// one the CLIs would run behind, a warning saying what an agent reaches
// when none, and a failure when a mode asked for by name does not work.
func checkSandbox(ctx context.Context, r *Report, cfg bot.Config) {
	s, err := cfg.ChooseSandbox(ctx)
	switch {
	case err != nil:
		r.add("config", "SANDBOX", Fail, "%v", err)
	case s.On():
		r.add("config", "SANDBOX", OK, "%s", s.Summary())
	default:
		r.add("config", "SANDBOX", Warn, "%s. %s", s.Summary(), s.Warning())
	}
}
