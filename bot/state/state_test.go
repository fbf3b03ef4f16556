package state_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jake-bot/jake-bot/bot/state"
	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
)

func sample() state.Snapshot {
	at := coretest.Epoch
	return state.Snapshot{Owners: []core.SessionOwner{{Plugin: "claude", SessionID: "0b7e", Owner: "discord/42"}},
		Schedules: []core.Schedule{
			{ID: 3, Key: core.ConversationKey{Platform: "slack", Channel: "C9", Thread: "1700.1"}, From: "U1", UserName: "ann",
				Text: "run the tests", Next: at.Add(time.Hour), Every: 90 * time.Minute},
			{ID: 4, Key: core.ConversationKey{Platform: "discord", User: "42", Channel: "c1"}, From: "42", Text: "/cost", Next: at, Cron: "0 9 * * 1-5"},
			{ID: 6, Key: core.ConversationKey{Platform: "discord", User: "42", Channel: "c1"}, From: "42", Text: "continue", Next: at, Limit: "Claude Code 5h", Prompt: "fix the bug"},
			{ID: 7, Key: core.ConversationKey{Platform: "discord", User: "42", Channel: "c1"}, From: "42", Text: "check CI", Next: at, Agent: true, Depth: 2},
		},
		Windows: []core.UsageWindow{{Plugin: "claude", Window: "5h", UsedPercent: 91, ResetsAt: at.Add(2 * time.Hour)},
			{Plugin: "codex", Runner: "gpu", Window: "weekly", UsedPercent: -1, ResetsAt: at.Add(72 * time.Hour), Rejected: true}},
		Spend: []core.UserSpend{{User: "discord/42", Day: "2026-11-24", Spend: core.Spend{CostUSD: 0.5, InputTokens: 10, OutputTokens: 2, Turns: 3, Unpriced: 1}}},
		Conversations: []core.Entry{
			{Key: core.ConversationKey{Platform: "discord", User: "42", Channel: "c1", Thread: "t1"},
				Conversation: core.Conversation{Plugin: "claude", Workdir: "/srv/proj", SessionID: "0b7e", Started: at, LastUsed: at.Add(time.Minute),
					AllowedTools: []string{"Bash"}, Model: "opus", Mode: "plan", Approvals: "ask",
					Worktree: "/srv/proj/.jakebot/worktrees/x", Branch: "jakebot/x", Repo: "/srv/proj",
					Spent:   core.Spend{CostUSD: 0.25, InputTokens: 5, OutputTokens: 1, Turns: 1},
					Helpers: []core.Helper{{Plugin: "codex", SessionID: "019a"}, {Plugin: "gemini"}}, Pair: "codex", PairRounds: 3,
					Reviewed: []string{"5f1c0e", "a9b2"}, LastRequest: "add a --verbose flag"}},
			{Key: core.ConversationKey{Platform: "slack", Channel: "C9", Thread: "1700.1"},
				Conversation: core.Conversation{Plugin: "codex", Workdir: "/srv/other", Started: at, LastUsed: at}},
		}}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "deep", "state.json")
	if err := state.Save(path, sample(), coretest.Epoch); err != nil {
		t.Fatal(err)
	}
	got := state.Load(path, nil)
	if diff := cmp.Diff(sample(), got); diff != "" {
		t.Fatalf("Load after Save (-want +got):\n%s", diff)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("state file mode %v, %v; want 0600", fi.Mode(), err)
	}
	files, _ := os.ReadDir(filepath.Dir(path))
	if len(files) != 1 {
		t.Fatalf("directory holds %d files, want only the state (no temp files)", len(files))
	}
}

func TestLoadMovesAnUnusableFileAside(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, content string }{
		{"garbage", "{not json"},
		{"truncated", `{"version":1,"conversations":[{"platform":"x"`},
		{"other version", `{"version":99,"conversations":[]}`},
		{"missing fields", `{"version":1,"conversations":[{"platform":"x"}]}`},
		{"binary", "\x00\xff\xfe"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "state.json")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			var logs strings.Builder
			if got := state.Load(path, slogTo(&logs)); len(got.Conversations) != 0 {
				t.Fatalf("Load = %v, want nothing", got)
			}
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Fatalf("unusable file still at %s", path)
			}
			aside, _ := filepath.Glob(path + ".corrupt-*")
			if len(aside) != 1 {
				t.Fatalf("moved-aside files %v, want one", aside)
			}
			if data, _ := os.ReadFile(aside[0]); string(data) != tt.content {
				t.Fatal("the moved-aside file lost its content")
			}
			if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "moved aside") {
				t.Fatalf("no warning logged: %q", logs.String())
			}
		})
	}
}

func TestLoadMissingFileIsEmpty(t *testing.T) {
	t.Parallel()
	if got := state.Load(filepath.Join(t.TempDir(), "none.json"), nil); got.Conversations != nil || got.Owners != nil {
		t.Fatalf("Load of a missing file = %v", got)
	}
}

func TestLoadUnreadableIsMovedAside(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.json")
	if err := os.Mkdir(path, 0o700); err != nil { // a directory cannot be read as a file
		t.Fatal(err)
	}
	if got := state.Load(path, nil); got.Conversations != nil {
		t.Fatalf("Load = %v", got)
	}
	if aside, _ := filepath.Glob(path + ".corrupt-*"); len(aside) != 1 {
		t.Fatalf("unreadable state not moved aside: %v", aside)
	}
}

func TestMirrorDebounces(t *testing.T) {
	t.Parallel()
	clock := coretest.NewManualClock()
	path := filepath.Join(t.TempDir(), "state.json")
	convs := core.NewState()
	m := state.NewMirror(path, convs, time.Second, clock, nil)
	for _, e := range sample().Conversations {
		convs.Put(e.Key, e.Conversation)
	}
	convs.SetOwner("claude", "0b7e", "discord/42")
	convs.Update(sample().Conversations[0].Key, func(c *core.Conversation) { c.SessionID = "newer" })
	if d := <-clock.Waiting(); d != time.Second {
		t.Fatalf("write scheduled after %s, want the interval", d)
	}
	select {
	case d := <-clock.Waiting():
		t.Fatalf("a second write scheduled (%s) for changes within one interval", d)
	default:
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("written before the interval passed")
	}
	clock.Advance(time.Second)
	got := state.Load(path, nil)
	if len(got.Conversations) != 2 || len(got.Owners) != 1 {
		t.Fatalf("saved %d conversations and %d owners, want 2 and 1", len(got.Conversations), len(got.Owners))
	}
	for _, e := range got.Conversations {
		if e.Key == sample().Conversations[0].Key && e.SessionID != "newer" {
			t.Fatalf("saved token %q, want the latest", e.SessionID)
		}
	}
	convs.End(sample().Conversations[1].Key)
	if err := m.Close(); err != nil { // Close writes at once
		t.Fatal(err)
	}
	if got := state.Load(path, nil); len(got.Conversations) != 1 {
		t.Fatalf("after Close the file holds %d conversations, want 1", len(got.Conversations))
	}
}

func FuzzDecode(f *testing.F) {
	good, _ := state.Encode(sample(), coretest.Epoch)
	f.Add(good)
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(`{"version":1,"conversations":[null]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := state.Decode(data)
		if err != nil {
			return
		}
		again, err := state.Encode(entries, coretest.Epoch)
		if err != nil {
			t.Fatal(err)
		}
		back, err := state.Decode(again)
		if err != nil || len(back.Conversations) != len(entries.Conversations) || len(back.Owners) != len(entries.Owners) {
			t.Fatalf("re-decoding an encoded state: %v, %+v, want %+v", err, back, entries)
		}
	})
}

// A schedule saved by an older version, which stored whether a platform's
// rule had admitted its author, loads without it: access is checked again
// each time it fires.
func TestLoadAScheduleThatSavedAnAdmission(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.json")
	old := `{"version":1,"conversations":[],"schedules":[{"id":5,"platform":"discord","user":"42","channel":"c1","from":"42","allowed":true,"text":"deploy","next":"2026-01-02T04:00:00Z","every":"1h0m0s"}]}`
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	want := []core.Schedule{{ID: 5, Key: core.ConversationKey{Platform: "discord", User: "42", Channel: "c1"}, From: "42", Text: "deploy",
		Next: time.Date(2026, 1, 2, 4, 0, 0, 0, time.UTC), Every: time.Hour}}
	if diff := cmp.Diff(want, state.Load(path, nil).Schedules); diff != "" {
		t.Errorf("schedules (-want +got):\n%s", diff)
	}
}

// A state file written before conversations had a runner field kept a
// conversation on a runner as "runner:path" in its paths: it loads as the
// runner and plain paths, is saved in the new form, and a conversation
// here is left as it was (issue 28).
func TestLoadRunnerConversationsOfTheOldForm(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.json")
	old := `{"version":1,"saved":"2026-01-02T03:04:05Z","conversations":[` +
		`{"platform":"discord","user":"42","channel":"c1","plugin":"claude","workdir":"box2:/src/app/.jakebot/worktrees/fix/sub",` +
		`"resume_token":"0b7e","started":"2026-01-02T03:00:00Z","last_used":"2026-01-02T03:01:00Z",` +
		`"worktree":"box2:/src/app/.jakebot/worktrees/fix","branch":"jakebot/fix","repo":"box2:/src/app"},` +
		`{"platform":"slack","channel":"C9","plugin":"codex","workdir":"/srv/a:b","started":"2026-01-02T03:00:00Z","last_used":"2026-01-02T03:00:00Z"}]}`
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	want := []core.Entry{
		{Key: core.ConversationKey{Platform: "discord", User: "42", Channel: "c1"},
			Conversation: core.Conversation{Plugin: "claude", Runner: "box2", Workdir: "/src/app/.jakebot/worktrees/fix/sub", SessionID: "0b7e",
				Started: at, LastUsed: at.Add(time.Minute), Worktree: "/src/app/.jakebot/worktrees/fix", Branch: "jakebot/fix", Repo: "/src/app"}},
		{Key: core.ConversationKey{Platform: "slack", Channel: "C9"},
			Conversation: core.Conversation{Plugin: "codex", Workdir: "/srv/a:b", Started: at, LastUsed: at}},
	}
	snap := state.Load(path, nil)
	if diff := cmp.Diff(want, snap.Conversations); diff != "" {
		t.Fatalf("conversations (-want +got):\n%s", diff)
	}
	data, err := state.Encode(snap, at)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"runner": "box2"`) || strings.Contains(string(data), "box2:") {
		t.Errorf("saved again as:\n%s", data)
	}
	again, err := state.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, again.Conversations); diff != "" {
		t.Errorf("conversations saved and loaded again (-want +got):\n%s", diff)
	}
}
