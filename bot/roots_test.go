package bot

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/jake-bot/jake-bot/core"
)

// Saved conversations are checked against the roots on load.
func TestWithinRootsDropsConversationsOutside(t *testing.T) {
	t.Parallel()
	root, outside := t.TempDir(), t.TempDir()
	roots, err := core.NewRoots([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	inside, swapped := filepath.Join(root, "a"), filepath.Join(root, "b")
	if err := os.Mkdir(inside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, swapped); err != nil {
		t.Fatal(err)
	}
	entry := func(id, wd string) core.Entry {
		return core.Entry{Key: core.ConversationKey{Platform: "p", User: id}, Conversation: core.Conversation{Plugin: "claude", Workdir: wd}}
	}
	got := withinRoots([]core.Entry{
		entry("inside", inside), entry("swapped", swapped), entry("narrowed", outside), entry("missing", filepath.Join(root, "gone")),
	}, roots, slog.New(slog.DiscardHandler))
	var kept []string
	for _, e := range got {
		kept = append(kept, e.Key.User)
	}
	if len(kept) != 2 || kept[0] != "inside" || kept[1] != "missing" {
		t.Errorf("kept %v, want [inside missing]", kept)
	}
}
