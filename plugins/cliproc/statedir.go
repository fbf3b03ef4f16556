package cliproc

import (
	"cmp"
	"fmt"
	"path/filepath"
)

// StateDir is where a CLI keeps its own state (its sessions, its login,
// its settings), found the way the CLI finds it: in the folder a variable
// of its own names, else in a dot folder in the user's home. The plugin's
// sandbox (State), its history and jakebot doctor all look there through
// it.
type StateDir struct {
	// Var is the variable that moves the folder, e.g. CODEX_HOME.
	Var string
	// Dot is the folder's name in the home, e.g. .codex.
	Dot string
	// VarIsHome says Var names the home Dot is in (GEMINI_CLI_HOME), not
	// the folder itself.
	VarIsHome bool
}

// Find returns the folder. configured, when set, is Var's value as the
// plugin's Config holds it, and wins over Var as getenv reads it; HOME,
// read through getenv too, is needed only when neither is set. It fails
// when nothing says where the folder is.
func (d StateDir) Find(configured string, getenv func(string) string) (string, error) {
	v := cmp.Or(configured, getenv(d.Var))
	if v != "" && !d.VarIsHome {
		return v, nil
	}
	home := cmp.Or(v, getenv("HOME"))
	if home == "" {
		return "", fmt.Errorf("neither %s nor HOME is set", d.Var)
	}
	return filepath.Join(home, d.Dot), nil
}

// Whole is a StateFunc that shows the CLI its whole folder, as getenv
// (the CLI's environment) finds it.
func (d StateDir) Whole(getenv func(string) string, _ string) []StatePath {
	dir, err := d.Find("", getenv)
	if err != nil {
		return nil
	}
	return []StatePath{{Path: dir}}
}
