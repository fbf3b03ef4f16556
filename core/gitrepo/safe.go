package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// safeConfig is set on every git command the bot runs. The repository
// belongs to the agents, who may write its hooks and its config; what git
// runs on the bot's behalf (/diff, /merge, a new worktree) must not run a
// program of theirs outside their turn, where no approval, sandbox or
// turn's end applies. Hence no hooks (pre-commit, commit-msg,
// post-merge, post-checkout...), no file-system monitor, no signing
// program, no automatic gc (which detaches); diffs are taken with
// --no-ext-diff --no-textconv; and the filter and merge drivers the
// configuration names are switched off by driverConfig.
var safeConfig = []string{
	"core.hooksPath", os.DevNull,
	"core.fsmonitor", "false",
	"commit.gpgSign", "false",
	"tag.gpgSign", "false",
	"gc.auto", "0",
	"maintenance.auto", "false",
	"protocol.allow", "never",
	// A submodule is a repository of its own, with its own config and
	// attributes, which the settings here do not reach: git diff and git
	// status would start git inside it, and run its filters. The bot
	// never looks into one (its diffs and statuses also pass
	// --ignore-submodules=all, which status needs).
	"diff.ignoreSubmodules", "all",
	"status.submoduleSummary", "false",
	"submodule.recurse", "false",
}

// noSubmodules is passed to every git diff and git status the bot runs.
const noSubmodules = "--ignore-submodules=all"

// hardened returns the environment of a git command in dir: the bot's,
// with safeConfig and driverConfig given as command-line configuration,
// which wins over every file's, and g's ceiling.
func (g Git) hardened(ctx context.Context, dir string) ([]string, error) {
	base := append(os.Environ(), "LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_EDITOR=true", "GIT_MERGE_AUTOEDIT=no")
	if len(g.Ceiling) > 0 {
		base = append(base, "GIT_CEILING_DIRECTORIES="+strings.Join(g.Ceiling, string(os.PathListSeparator)))
	}
	drivers, err := runGit(ctx, dir, withConfig(base, safeConfig), "config", "--name-only", "--get-regexp", `^(filter|merge)\..+\.(clean|smudge|process|driver)$`)
	if err != nil && !isExit(err, 1) { // 1: no such key
		return nil, err
	}
	return withConfig(base, append(slices.Clip(safeConfig), driverConfig(drivers)...)), nil
}

// driverConfig switches off the drivers listed in keys (git config
// --name-only output): a filter passes content through unchanged, and a
// merge driver fails, which makes the merge a conflict the user is told
// of rather than a program of the agents' run.
func driverConfig(keys string) []string {
	var kv []string
	for _, key := range strings.Fields(keys) {
		i, j := strings.IndexByte(key, '.'), strings.LastIndexByte(key, '.')
		if i < 0 || j <= i {
			continue
		}
		section, name := key[:i], key[i+1:j]
		switch section {
		case "filter":
			for _, v := range []string{"clean", "smudge", "process"} {
				kv = append(kv, "filter."+name+"."+v, "")
			}
			kv = append(kv, "filter."+name+".required", "false")
		case "merge":
			kv = append(kv, "merge."+name+".driver", "false")
		}
	}
	return kv
}

// withConfig adds pairs of key and value to environ as git's
// command-line configuration (GIT_CONFIG_COUNT, git 2.31), which child
// git processes inherit too.
func withConfig(environ, pairs []string) []string {
	env := slices.Clip(environ)
	n := len(pairs) / 2
	for i := range n {
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, pairs[2*i]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, pairs[2*i+1]))
	}
	return append(env, fmt.Sprintf("GIT_CONFIG_COUNT=%d", n))
}

func isExit(err error, code int) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee) && ee.ExitCode() == code
}
