package discord

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/jake-bot/jake-bot/core"
)

// maxScan bounds how many entries one autocompletion reads from a
// directory.
const maxScan = 2000

// dirChoices suggests directories under the allowed roots for what the
// user typed: nothing yet offers the current workdir, the roots and the
// workdir's subdirectories; a path offers the subdirectories of its
// parent that start with its last element. Relative paths are taken from
// base, "~" is the home directory, and only directories that resolve
// inside a root are offered.
func dirChoices(roots core.Roots, base, typed string) []*discordgo.ApplicationCommandOptionChoice {
	var out []*discordgo.ApplicationCommandOptionChoice
	seen := map[string]bool{}
	offer := func(path string) {
		real, err := filepath.EvalSymlinks(path)
		if err != nil || seen[path] || len(path) > maxChoiceLength || len(out) >= maxChoices || !roots.Contains(real) {
			return
		}
		if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
			return
		}
		seen[path] = true
		out = append(out, &discordgo.ApplicationCommandOptionChoice{Name: path, Value: path})
	}
	dir, prefix := base, ""
	if typed == "" {
		offer(base)
		for _, r := range roots {
			offer(r)
		}
	} else {
		path := expandHome(typed)
		if !filepath.IsAbs(path) {
			path = filepath.Join(base, path)
		}
		if strings.HasSuffix(typed, "/") {
			dir = filepath.Clean(path)
		} else {
			dir, prefix = filepath.Dir(path), filepath.Base(path)
		}
	}
	for _, name := range subdirs(dir, prefix) {
		offer(filepath.Join(dir, name))
	}
	return out
}

// subdirs lists the names in dir that start with prefix (case-insensitive)
// and are directories, hidden ones only when prefix asks for them.
func subdirs(dir, prefix string) []string {
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	entries, _ := f.ReadDir(maxScan)
	low := strings.ToLower(prefix)
	var names []string
	for _, e := range entries {
		n := e.Name()
		if strings.HasPrefix(n, ".") && !strings.HasPrefix(prefix, ".") {
			continue
		}
		if !strings.HasPrefix(strings.ToLower(n), low) {
			continue
		}
		if e.IsDir() || e.Type()&os.ModeSymlink != 0 {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

func expandHome(p string) string {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return p
	}
	return filepath.Join(home, p[1:])
}
