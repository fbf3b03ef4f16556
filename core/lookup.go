package core

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

var _ Lookup = (*Router)(nil)

// Admits reports whether m's author may use the bot.
func (r *Router) Admits(m Message) bool {
	return m.Allowed || r.cfg.Access.Allowed(m.Key.Platform, m.Author())
}

// Conversation returns the active conversation at key.
func (r *Router) Conversation(key ConversationKey) (Conversation, bool) { return r.convs.Get(key) }

// PlatformConversations returns platform's active conversations, most recently
// used first.
func (r *Router) PlatformConversations(platform string) []Entry {
	var out []Entry
	for _, e := range r.convs.All() {
		if e.Key.Platform == platform {
			out = append(out, e)
		}
	}
	return out
}

// ResumeCandidates lists what m's author may resume: see Lookup.
func (r *Router) ResumeCandidates(ctx context.Context, m Message, plugin string) ([]ConversationInfo, error) {
	p, ok := r.cfg.Plugins.Get(plugin)
	if !ok || !r.Admits(m) {
		return nil, nil
	}
	_, infos, _, err := r.newCall(ctx, nil, m, "", nil).history(ctx, p)
	if err != nil {
		return nil, err
	}
	out := make([]ConversationInfo, len(infos))
	for i, c := range infos {
		c.Title = r.cfg.Redactor.Redact(c.Title)
		out[i] = c
	}
	return out, nil
}

// WorkdirSuggestions suggests directories m's author may work in: see
// Lookup.
func (r *Router) WorkdirSuggestions(m Message, typed string, n int) []string {
	if !r.Admits(m) {
		return nil
	}
	base, err := r.newCall(context.Background(), nil, m, "", nil).currentWorkdir()
	if err != nil {
		base = r.here.defaultWorkdir() // the conversation's own is no longer theirs
	}
	return suggestDirs(r.here.spaceOf(r.cfg.Access.RightsOf(m).Admin).Roots, base, typed, n)
}

// maxScan bounds how many entries one suggestion reads from a directory.
const maxScan = 2000

// suggestDirs lists at most n directories inside roots for what the user
// typed; relative paths are taken from base, "~" is the home directory,
// and only directories that resolve inside a root are listed.
func suggestDirs(roots Roots, base, typed string, n int) []string {
	var out []string
	offer := func(path string) {
		real, err := filepath.EvalSymlinks(path)
		if err != nil || len(out) >= n || !roots.Contains(real) || slices.Contains(out, path) {
			return
		}
		if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
			return
		}
		out = append(out, path)
	}
	dir, prefix := base, ""
	if typed == "" {
		offer(base)
		for _, root := range roots {
			offer(root)
		}
	} else {
		path := typed
		if path == "~" || strings.HasPrefix(path, "~/") {
			if home, err := os.UserHomeDir(); err == nil {
				path = filepath.Join(home, path[1:])
			}
		}
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
// and are directories or links, hidden ones only when prefix asks for
// them.
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
		name := e.Name()
		if strings.HasPrefix(name, ".") && !strings.HasPrefix(prefix, ".") {
			continue
		}
		if strings.HasPrefix(strings.ToLower(name), low) && (e.IsDir() || e.Type()&os.ModeSymlink != 0) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

var _ Lookup = NoLookup{}
