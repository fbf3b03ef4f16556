package core

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Lookup answers the questions an adapter has before a message reaches
// the router, such as what to suggest while a user types a command, with
// the router's own policy: who is allowed, which roots a user may work
// in, whose sessions they may resume. Adapters get a Lookup and a
// Handler, never the router's internals, so that the policy lives in one
// place. *Router implements it; it is safe for concurrent use.
type Lookup interface {
	// Admits reports whether the router serves m's author (Access, or
	// the adapter's own rule through m.Allowed).
	Admits(m Message) bool
	// Conversation returns the active conversation at key.
	Conversation(key ConversationKey) (Conversation, bool)
	// ResumeCandidates lists plugin's past sessions that m's author may
	// resume where m was written: in the conversation's workdir, or the
	// one that ended there last, resolved again under their policy (or
	// the default workdir), their own
	// sessions only unless they are an admin. Titles are redacted.
	// Someone not admitted gets none.
	ResumeCandidates(ctx context.Context, m Message, plugin string) ([]ConversationInfo, error)
	// WorkdirSuggestions lists at most n directories m's author may work
	// in that match what they typed: with nothing typed, the current
	// workdir, the roots open to them and the workdir's subdirectories;
	// otherwise the subdirectories of the typed path's parent that start
	// with its last element. Someone not admitted gets none.
	WorkdirSuggestions(m Message, typed string, n int) []string
	// PlatformConversations returns the active conversations on platform, most
	// recently used first, as kept across a restart.
	PlatformConversations(platform string) []Entry
}

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

// NoLookup is the Lookup of an adapter built without a router (a test of
// its wire protocol): no conversations, and nobody admitted.
type NoLookup struct{}

var _ Lookup = NoLookup{}

func (NoLookup) Admits(Message) bool                               { return false }
func (NoLookup) Conversation(ConversationKey) (Conversation, bool) { return Conversation{}, false }
func (NoLookup) WorkdirSuggestions(Message, string, int) []string  { return nil }
func (NoLookup) PlatformConversations(string) []Entry              { return nil }
func (NoLookup) ResumeCandidates(context.Context, Message, string) ([]ConversationInfo, error) {
	return nil, nil
}
