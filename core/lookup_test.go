package core_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// TestLookupAppliesThePolicy: what an adapter suggests is what the router
// would allow: a user who is not an admin is offered nothing in an
// admin-only root, sees only their own sessions, and a stranger nothing;
// titles are redacted.
func TestLookupAppliesThePolicy(t *testing.T) {
	t.Parallel()
	open, admin := realDir(t), realDir(t)
	for _, d := range []string{filepath.Join(open, "proj"), filepath.Join(admin, "secret")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f := newRouterFixtureWith(t, echo, nil, func(c *core.RouterConfig) {
		roots, err := core.NewRoots([]string{open, admin})
		if err != nil {
			t.Fatal(err)
		}
		c.Roots = roots
		c.Access.Admin("fake", "root")
		c.Redactor = core.NewRedactor([]string{"hunter2-very-secret"})
	})
	f.plugin.List = plugintest.History([]core.ConversationInfo{
		{SessionID: "mine", Title: "paste hunter2-very-secret here"},
		{SessionID: "theirs", Title: "someone else's"},
	})
	f.router.Conversations().SetOwner("fake", "mine", "fake/alice")
	msg := func(user string) core.Message {
		return core.Message{Key: core.ConversationKey{Platform: "fake", User: user, Channel: "c"}}
	}
	tests := []struct {
		user, typed string
		want        []string
	}{
		{"alice", "", []string{open, filepath.Join(open, "proj")}},
		{"alice", admin + "/", nil},
		{"alice", "../", []string{open}},
		{"root", "../", []string{open, admin}},
		{"root", "", []string{open, admin, filepath.Join(open, "proj")}},
		{"root", admin + "/s", []string{filepath.Join(admin, "secret")}},
		{"mallory", "", nil},
	}
	for _, tt := range tests {
		if got := f.router.WorkdirSuggestions(msg(tt.user), tt.typed, 25); !slices.Equal(got, tt.want) {
			t.Errorf("WorkdirSuggestions(%s, %q) = %q, want %q", tt.user, tt.typed, got, tt.want)
		}
	}
	ids := func(user string) []string {
		t.Helper()
		infos, err := f.router.ResumeCandidates(context.Background(), msg(user), "fake")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range infos {
			out = append(out, c.SessionID+": "+c.Title)
		}
		return out
	}
	if got, want := ids("alice"), []string{"mine: paste " + core.Redacted + " here"}; !slices.Equal(got, want) {
		t.Errorf("alice's resume candidates = %q, want %q", got, want)
	}
	if got := ids("root"); len(got) != 2 {
		t.Errorf("an admin's resume candidates = %q, want both", got)
	}
	if got := ids("mallory"); got != nil {
		t.Errorf("a stranger's resume candidates = %q, want none", got)
	}
}

// realDir is a new temporary directory, symlinks resolved.
func realDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}
