package doctor

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/jake-bot/jake-bot/bot"
	"github.com/jake-bot/jake-bot/core"
)

// checkRoots checks that every allowed root exists and that the default
// workdir lies inside them.
func checkRoots(r *Report, cfg bot.Config) {
	roots := cfg.AllowedRoots
	if len(roots) == 0 {
		wd, err := os.Getwd()
		if err != nil {
			r.add("config", "ALLOWED_ROOTS", Fail, "unset, and the current directory is unknown: %v", err)
			return
		}
		r.add("config", "ALLOWED_ROOTS", OK, "unset: the start directory %s", wd)
		roots = []string{wd}
	}
	var ok []string
	defer func() {
		if rs, err := core.NewRoots(ok); err == nil {
			if err := cfg.CheckSecretFiles(rs); err != nil {
				r.add("config", "secret files", Fail, "%v", err)
			} else {
				r.add("config", "secret files", OK, "no file holding the bot's own secrets lies inside the allowed roots")
			}
		}
	}()
	for _, root := range roots {
		if _, err := core.NewRoots([]string{root}); err != nil {
			r.add("config", "allowed root", Fail, "%v", err)
			continue
		}
		if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
			r.add("config", "allowed root", Fail, "%s is not a directory", root)
			continue
		}
		ok = append(ok, root)
		r.add("config", "allowed root", OK, "%s", root)
	}
	if len(ok) == 0 {
		return
	}
	rs, _ := core.NewRoots(ok)
	// Start-up resolves both the same way, and refuses to start without.
	for _, dir := range []struct{ name, path string }{{"DEFAULT_WORKDIR", cfg.DefaultWorkdir}, {"WORKTREE_DIR", cfg.WorktreeDir}} {
		if dir.path == "" {
			continue
		}
		if wd, err := rs.Resolve(dir.path, ""); err != nil {
			r.add("config", dir.name, Fail, "%v", err)
		} else {
			r.add("config", dir.name, OK, "%s", wd)
		}
	}
}

// checkWritable checks that a file at path could be written: its directory
// exists and takes a new file. State and audit files are checked with it.
// createsDir says the bot makes a missing directory itself, as it does for
// the state file.
func checkWritable(r *Report, name, path string, createsDir bool) {
	if path == "" {
		return
	}
	dir := filepath.Dir(path)
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		dir = path
	}
	// The bot creates a missing state directory: what matters is the
	// nearest one that exists.
	for createsDir {
		if _, err := os.Stat(dir); err == nil || filepath.Dir(dir) == dir {
			break
		}
		dir = filepath.Dir(dir)
	}
	if err := writableDir(dir); err != nil {
		r.add("config", name, Fail, "%s is not writable: %v", path, err)
		return
	}
	r.add("config", name, OK, "%s is writable", path)
}

// writableDir creates and removes a file in dir.
func writableDir(dir string) error {
	f, err := os.CreateTemp(dir, ".jakebot-doctor-*")
	if err != nil {
		return fmt.Errorf("create a file in %s: %w", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}
