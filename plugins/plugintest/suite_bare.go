package plugintest

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
)

// The suite's tests of a plugin that needs no model (Suite.Bare).

func (s Suite) notInstalled(t *testing.T) {
	p := s.Bare(filepath.Join(t.TempDir(), "no-such-cli"), t.TempDir())
	_, err := p.Run(context.Background(), core.Turn{Workdir: t.TempDir(), Prompt: "hi"}, func(core.Event) {})
	var ue *core.UserError
	if !errors.As(err, &ue) || !strings.Contains(ue.Msg, s.Install) {
		t.Errorf("Run error = %v, want a user error saying %q", err, s.Install)
	}
}

// noHistory: a CLI that has kept no state yet has no conversations, and
// that is no error.
func (s Suite) noHistory(t *testing.T) {
	p := s.Bare("", filepath.Join(t.TempDir(), "missing"))
	if infos, err := p.Conversations(context.Background(), "/workdir"); err != nil || len(infos) != 0 {
		t.Errorf("Conversations = %+v, %v; want none and no error", infos, err)
	}
}

// refusesSessionIDs: a session id from the chat is never handed to the
// CLI unless it is a session id (the suite's StreamsReply checks that the
// CLI's own are): not a flag, not a shell word, not one of the CLIs' own
// shortcuts for "the last session".
func (s Suite) refusesSessionIDs(t *testing.T) {
	c, ok := s.Bare("", t.TempDir()).(core.SessionIDChecker)
	if !ok {
		t.Fatal("the plugin does not check session ids")
	}
	for _, id := range []string{"", "; rm -rf ~", "--dangerously-skip-permissions", "--last", "latest", "1",
		"0b0b0b0b-0b0b-4b0b-8b0b-0b0b0b0b0b0b; rm -rf ~", "-0b0b0b0b-0b0b-4b0b-8b0b-0b0b0b0b0b0b"} {
		if err := c.CheckSessionID(id); err == nil {
			t.Errorf("CheckSessionID(%q) = nil, want a refusal", id)
		}
	}
}
