package discord

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/discord/discordtest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// autocompleted returns the names and values an autocompletion answered.
func (h *harness) autocompleted(in discordtest.Interaction) (names, values []string) {
	h.t.Helper()
	h.fake.WaitFor("autocomplete answer", func() bool { _, ok := h.fake.Callback(in); return ok })
	cb, _ := h.fake.Callback(in)
	for _, raw := range cb.Data.Choices {
		var c struct{ Name, Value string }
		_ = json.Unmarshal(raw, &c)
		names, values = append(names, c.Name), append(values, c.Value)
	}
	return names, values
}

// TestTwoRootsKeepAUserInTheirs: with an admin-only root beside the
// default one, a user who is not an admin is offered nothing in it, a
// /start there is refused without opening a thread, and a conversation
// whose workdir now resolves into it (a symlink swapped in) suggests no
// sessions from there: autocompletion asks core, which resolves the
// workdir again.
func TestTwoRootsKeepAUserInTheirs(t *testing.T) {
	t.Parallel()
	adminRoot, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(adminRoot, "ops"), 0o755); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var listed []string
	p := &plugintest.Scripted{List: func(_ context.Context, wd string) ([]core.ConversationInfo, error) {
		mu.Lock()
		listed = append(listed, wd)
		mu.Unlock()
		return []core.ConversationInfo{{SessionID: "aaaa1111-0000-4000-8000-000000000001", Title: "ops work"}}, nil
	}}
	h := newHarnessRouting(t, p, nil, func(rc *core.RouterConfig) {
		rc.Roots = append(rc.Roots, adminRoot)
	})
	_, got := h.autocompleted(h.fake.Autocomplete(h.owner, h.fake.TextChannel, "claude start", "workdir", "workdir", ""))
	if want := []string{h.root, h.root + "/other", h.root + "/proj"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("suggested %q, want only the default root's %q", got, want)
	}
	_, got = h.autocompleted(h.fake.Autocomplete(h.owner, h.fake.TextChannel, "claude start", "workdir", "workdir", adminRoot+"/"))
	if len(got) != 0 {
		t.Errorf("suggested %q in the admin root", got)
	}

	in := h.fake.Slash(h.owner, h.fake.TextChannel, "claude start", "workdir", adminRoot+"/ops")
	if resp := h.response(in); len(resp.Embeds) != 1 || !strings.Contains(resp.Embeds[0].Description, "only admins") {
		t.Errorf("response = %+v, want the refusal", resp)
	}
	if ths := h.fake.Threads(h.fake.TextChannel); len(ths) != 0 {
		t.Errorf("threads = %v: a refused start opened one", ths)
	}

	// A conversation in a link that now points into the admin root.
	link := filepath.Join(h.root, "link")
	if err := os.Symlink(filepath.Join(adminRoot, "ops"), link); err != nil {
		t.Fatal(err)
	}
	h.convs.SetOwner("claude", "aaaa1111-0000-4000-8000-000000000001", Name+"/"+h.owner.ID)
	h.convs.Put(core.ConversationKey{Platform: Name, User: h.owner.ID, Channel: h.fake.TextChannel},
		core.Conversation{Plugin: "claude", Workdir: link})
	if _, got := h.autocompleted(h.fake.Autocomplete(h.owner, h.fake.TextChannel, "claude resume", "id", "id", "")); len(got) != 0 {
		t.Errorf("resume suggestions %q from a workdir now in the admin root", got)
	}
	_, got = h.autocompleted(h.fake.Autocomplete(h.owner, h.fake.TextChannel, "workdir set", "path", "path", ""))
	if len(got) == 0 || got[0] != h.root {
		t.Errorf("workdir suggestions %q, want them from the default workdir, %s first", got, h.root)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(listed) != 0 {
		t.Errorf("the plugin listed sessions in %q", listed)
	}
}

// TestAutocompleteRedactsTitles: a session's title is the CLI's, and may
// hold one of the bot's secrets; autocompletion shows it redacted, as a
// listing does.
func TestAutocompleteRedactsTitles(t *testing.T) {
	t.Parallel()
	const secret = "sk-test-0123456789abcdef"
	p := &plugintest.Scripted{List: func(context.Context, string) ([]core.ConversationInfo, error) {
		return []core.ConversationInfo{{SessionID: "aaaa1111-0000-4000-8000-000000000001", Title: "use " + secret + " to deploy"}}, nil
	}}
	h := newHarnessRouting(t, p, nil, func(rc *core.RouterConfig) { rc.Redactor = core.NewRedactor([]string{secret}) })
	h.convs.SetOwner("claude", "aaaa1111-0000-4000-8000-000000000001", Name+"/"+h.owner.ID)
	for _, typed := range []string{"", "deploy"} {
		names, _ := h.autocompleted(h.fake.Autocomplete(h.owner, h.fake.TextChannel, "claude resume", "id", "id", typed))
		if len(names) != 1 || strings.Contains(names[0], secret) || !strings.Contains(names[0], core.Redacted) {
			t.Errorf("typed %q: choices %q, want the title redacted", typed, names)
		}
	}
}
