package replay_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jake-bot/jake-bot/bot/replay"
	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/console"
	"github.com/jake-bot/jake-bot/platforms/discord"
	"github.com/jake-bot/jake-bot/platforms/matrix"
	"github.com/jake-bot/jake-bot/platforms/mattermost"
	"github.com/jake-bot/jake-bot/platforms/slack"
	"github.com/jake-bot/jake-bot/platforms/telegram"
	"github.com/jake-bot/jake-bot/platforms/telegram/telegramtest"
	"github.com/jake-bot/jake-bot/platforms/web"
	"github.com/jake-bot/jake-bot/plugins/configured"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// streams returns the recorded streams of a built-in plugin, shared with
// its parser tests in the top-level testdata.
func streams(t *testing.T, plugin string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", plugin, "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		if !strings.HasPrefix(filepath.Base(f), "transcript") {
			out = append(out, f)
		}
	}
	return out
}

func replayFile(t *testing.T, parser replay.StreamParser, platform, file string) string {
	t.Helper()
	p, err := replay.PlatformNamed(platform)
	if err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var out bytes.Buffer
	if err := replay.Run(context.Background(), parser, p, in, &out); err != nil {
		t.Fatalf("Run(%s on %s): %v", file, platform, err)
	}
	return out.String()
}

// TestReplayGolden replays every recorded stream of every built-in
// plugin on every platform against golden output.
func TestReplayGolden(t *testing.T) {
	for _, plugin := range replay.Builtins() {
		files := streams(t, plugin)
		if len(files) == 0 {
			t.Errorf("no recorded streams for %s in testdata/%s", plugin, plugin)
		}
		for _, file := range files {
			name := strings.TrimSuffix(filepath.Base(file), ".jsonl")
			for _, platform := range replay.Platforms() {
				t.Run(plugin+"/"+name+"/"+platform, func(t *testing.T) {
					t.Parallel()
					parser, err := replay.Parser(plugin, nil)
					if err != nil {
						t.Fatal(err)
					}
					got := replayFile(t, parser, platform, file)
					golden := filepath.Join("testdata", plugin, name+"."+platform+".golden")
					if *update {
						if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
							t.Fatal(err)
						}
						if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
							t.Fatal(err)
						}
					}
					want, err := os.ReadFile(golden)
					if err != nil {
						t.Fatalf("%v (run go test -update to create it)", err)
					}
					if diff := cmp.Diff(string(want), got); diff != "" {
						t.Errorf("replay of %s on %s (-want +got):\n%s", file, platform, diff)
					}
					// The same on every run, whatever the scheduling.
					if again := replayFile(t, parser, platform, file); again != got {
						t.Errorf("second replay differs:\n%s", cmp.Diff(got, again))
					}
				})
			}
		}
	}
}

func TestReplayConfiguredPlugin(t *testing.T) {
	t.Parallel()
	yaml := `plugins:
  - id: mapped
    bin: mapped-cli
    args: ["{message}", [--resume, "{resume}"]]
    mode: jsonl
    jsonl:
      text: {path: event.delta.text, when: {type: stream_event, event.delta.type: text_delta}}
      session: session_id
`
	specs, err := configured.Parse("plugins.yaml", []byte(yaml), configured.Options{SkipLookPath: true})
	if err != nil {
		t.Fatal(err)
	}
	parser, err := replay.Parser("mapped", specs)
	if err != nil {
		t.Fatal(err)
	}
	got := replayFile(t, parser, "discord", filepath.Join("..", "..", "testdata", "claude", "text.jsonl"))
	for _, want := range []string{
		"event 1: session \"c988f484-dab6-44a9-b153-339f798ed835\"",
		"  send message 1 [text]\n    | Hello\n",
		"  edit message 1 [text footer]\n    | Hello from the fake model.\n    | \n    | — 0.0s\n",
		"result: session=\"c988f484-dab6-44a9-b153-339f798ed835\" error=false",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("replay output lacks %q:\n%s", want, got)
		}
	}
}

func TestReplayRefusesUnknownNames(t *testing.T) {
	t.Parallel()
	if _, err := replay.Parser("nope", nil); err == nil || !strings.Contains(err.Error(), "known: claude") {
		t.Errorf("Parser(nope) = %v, want an error listing the known plugins", err)
	}
	if _, err := replay.PlatformNamed("irc"); err == nil || !strings.Contains(err.Error(), "console, discord") {
		t.Errorf("PlatformNamed(irc) = %v, want an error listing the known platforms", err)
	}
}

// parserFunc adapts a function to a StreamParser.
type parserFunc func(emit func(core.Event)) *core.TurnResult

func (f parserFunc) Parse(_ io.Reader, emit func(core.Event)) (*core.TurnResult, error) {
	return f(emit), nil
}

// TestReplayContinuesInNewMessages checks a reply longer than Discord's
// limit: it continues in a second message, deterministically.
func TestReplayContinuesInNewMessages(t *testing.T) {
	t.Parallel()
	parser := parserFunc(func(emit func(core.Event)) *core.TurnResult {
		for i := range 60 {
			emit(core.TextEvent(fmt.Sprintf("Line %02d of a long answer that goes on and on.\n", i)))
		}
		return &core.TurnResult{SessionID: "s"}
	})
	p, _ := replay.PlatformNamed("discord")
	var first string
	for range 3 {
		var out bytes.Buffer
		if err := replay.Run(context.Background(), parser, p, strings.NewReader(""), &out); err != nil {
			t.Fatal(err)
		}
		if first == "" {
			first = out.String()
		} else if out.String() != first {
			t.Fatalf("replays differ:\n%s", cmp.Diff(first, out.String()))
		}
	}
	for _, want := range []string{"  send message 2 [text]\n", "final messages on discord (2):", "Line 59 of a long answer"} {
		if !strings.Contains(first, want) {
			t.Errorf("replay output lacks %q", want)
		}
	}
}

// A recorded protocol session's questions show in the replay, which has
// nobody to answer them: Claude Code's control protocol (a tool to allow,
// the agent's own question, a plan), Codex's app-server and Gemini CLI's
// ACP.
func TestReplayShowsQuestions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ plugin, file, want string }{
		{"claude", "control/approval.jsonl", "Asked to allow Bash: `echo made > made.txt`"},
		{"claude", "control/question.jsonl", "Asked: Which database? (Postgres / SQLite)"},
		{"claude", "control/plan.jsonl", "Asked: Ready to code? The plan: (Approve plan / Keep planning)"},
		{"codex", "appserver/approval.jsonl", "Asked to allow Shell: `echo made > made.txt`"},
		{"gemini", "acp/edits.jsonl", "Asked to allow Edit: /workdir/hello.txt"},
	} {
		t.Run(tc.plugin+"/"+tc.file, func(t *testing.T) {
			t.Parallel()
			parser, err := replay.Parser(tc.plugin, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := replayFile(t, parser, "console", filepath.Join("..", "..", "testdata", tc.plugin, tc.file))
			if !strings.Contains(got, tc.want) {
				t.Errorf("replay lacks %q:\n%s", tc.want, got)
			}
		})
	}
}

// TestPlatformsWriteAsTheirAdapters: replay renders and paces a stream as
// the adapter the bot builds, with its default configuration, would (a
// copy of each platform's Render and Limits had drifted).
func TestPlatformsWriteAsTheirAdapters(t *testing.T) {
	t.Parallel()
	tg := telegramtest.New(t)
	tgAdapter, err := telegram.New(telegram.Config{Token: telegramtest.Token, APIEndpoint: tg.Endpoint()}, telegram.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discord.New(discord.Config{Token: "not-a-real-token"}, discord.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sl, err := slack.New(slack.Config{AppToken: "xapp-not-real", BotToken: "xoxb-not-real"}, slack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	wb, err := web.New(web.Config{Addr: "127.0.0.1:0", Token: "0123456789abcdef0123"}, web.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mm, err := mattermost.New(mattermost.Config{URL: "https://chat.example.com", Token: "not-a-real-token"}, mattermost.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mx, err := matrix.New(matrix.Config{Homeserver: "https://matrix.example.org", UserID: "@jakebot:example.org", AccessToken: "not-a-real-token"}, matrix.Options{})
	if err != nil {
		t.Fatal(err)
	}
	adapters := []core.Platform{console.New(console.Options{}), dc, mx, mm, sl, tgAdapter, wb}
	blocks := []core.ResponseBlock{
		{Kind: core.BlockText, Text: "**bold** <b>&" + strings.Repeat(" long", 2000)},
		{Kind: core.BlockToolUse, Tool: "Bash", Status: core.ToolDone, Text: "ls", Detail: "a b"},
		{Kind: core.BlockFooter, Duration: 1500 * time.Millisecond},
	}
	var names []string
	for _, a := range adapters {
		names = append(names, a.Name())
		p, err := replay.PlatformNamed(a.Name())
		if err != nil {
			t.Error(err)
			continue
		}
		if got, want := p.Limits(), a.Limits(); got != want {
			t.Errorf("%s: replay's limits %+v, the adapter's %+v", a.Name(), got, want)
		}
		if diff := cmp.Diff(a.Render(blocks), p.Render(blocks)); diff != "" {
			t.Errorf("%s: replay renders unlike the adapter (-adapter +replay):\n%s", a.Name(), diff)
		}
	}
	if got := replay.Platforms(); !slices.Equal(got, names) {
		t.Errorf("replay knows %q, the bot builds %q", got, names)
	}
}
