package core_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/platforms/platformtest"
)

const secret = "sk-ant-api03-the-bots-own-key-0001"

// redactingCoordinator is a coordinator that blanks out secret, on a
// recorder that takes every write at once.
func redactingCoordinator(t *testing.T, lim core.Limits) (*core.StreamCoordinator, *platformtest.Recorder) {
	t.Helper()
	clock := coretest.NewInstantClock()
	rec := platformtest.NewRecorder(clock, lim)
	coord := core.NewStreamCoordinator(rec, clock, nil)
	core.SetRedactor(coord, core.NewRedactor([]string{secret}))
	return coord, rec
}

// While text streams, an edit never shows the first part of a secret
// whose rest is still to come: the end that could be one waits until the
// next text (or the end) says.
func TestStreamingShowsNoPartOfASecret(t *testing.T) {
	t.Parallel()
	coord, rec := redactingCoordinator(t, core.Limits{})
	r := coord.NewReply(context.Background(), target)
	r.Emit(core.TextEvent("the key is " + secret[:12]))
	if c := <-rec.Written(); c.Text != "the key is " {
		t.Fatalf("first write %q, want the text before the key's beginning", c.Text)
	}
	r.Emit(core.TextEvent(secret[12:] + " and sk-"))
	if c := <-rec.Written(); c.Text != "the key is "+core.Redacted+" and " {
		t.Fatalf("second write %q, want the key blanked out, and sk- waiting", c.Text)
	}
	// A tool's block ends the text: what waited was no secret after all.
	r.Add(core.ResponseBlock{Kind: core.BlockToolUse, Tool: "Bash", Text: "ls", Status: core.ToolDone})
	if c := <-rec.Written(); !strings.Contains(c.Text, "the key is "+core.Redacted+" and sk-") {
		t.Fatalf("third write %q, want the text held back shown", c.Text)
	}
	r.Emit(core.TextEvent("bye sk-ant"))
	r.Close(context.Background())
	msgs := rec.Messages()
	if len(msgs) != 1 || !strings.HasSuffix(msgs[0], "bye sk-ant") {
		t.Fatalf("final messages %q, want the end held back shown when the reply closes", msgs)
	}
	for _, c := range rec.Calls() {
		for n := len("sk-ant-api"); n < len(secret); n++ {
			if strings.Contains(c.Text, secret[:n]) {
				t.Fatalf("write %q shows the key's first %d bytes", c.Text, n)
			}
		}
	}
}

// A reply's head and tail are cut from text already redacted: a secret
// across the end of the head, across where the tail's oldest bytes are
// dropped, or across a long block's clip shows no part of itself.
func TestCutsSplitNoSecret(t *testing.T) {
	t.Parallel()
	coord, _ := redactingCoordinator(t, core.Limits{FinalOnly: true})
	r := coord.NewReply(context.Background(), target)
	// The head ends four bytes before the secret does.
	r.Emit(core.TextEvent(strings.Repeat("h", core.ReplyHeadBytes-len(secret)+4) + secret + "\n"))
	// One delta that overflows the tail: what is kept starts four bytes
	// into the secret.
	tail := "t" + secret + strings.Repeat("u", core.ReplyTailBytes-len(secret)+4)
	r.Emit(core.TextEvent(strings.Repeat("t", 2*core.ReplyTailBytes) + tail))
	// A tool's output clipped four bytes before the secret's end.
	r.Add(core.ResponseBlock{Kind: core.BlockToolUse, Tool: "Bash", Text: "env", Status: core.ToolDone,
		Detail: strings.Repeat("d", core.ReplyTailBytes/2-len(secret)+4) + secret + strings.Repeat("d", 100)})
	r.Close(context.Background())
	var all strings.Builder
	for _, b := range r.Blocks() {
		all.WriteString(b.Text + "\n" + b.Detail + "\n")
	}
	text := all.String()
	if !strings.Contains(text, "of output cut here") {
		t.Fatal("the reply was not cut")
	}
	for n := 8; n < len(secret); n++ {
		if strings.Contains(text, secret[:n]) || strings.Contains(text, secret[len(secret)-n:]) {
			t.Fatalf("the reply shows %d bytes of the secret's beginning or end", n)
		}
	}
}

func TestSecretName(t *testing.T) {
	t.Parallel()
	for name, secret := range map[string]bool{
		"DISCORD_TOKEN": true, "SLACK_BOT_TOKEN": true, "GH_TOKEN_FILE": true, "TOKEN": true, "anthropic_api_key": true,
		"SLACK_SIGNING_SECRET": true, "NATS_PASSWORD": true,
		// A count of tokens is a number, not a credential.
		"BUDGET_USER_DAILY_TOKENS": false, "LOG_LEVEL": false, "BUDGET_TURN_USD": false,
	} {
		if got := core.SecretName(name); got != secret {
			t.Errorf("SecretName(%q) = %v, want %v", name, got, secret)
		}
	}
}
