package slack

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

func TestPlainText(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"a &amp;&amp; b &lt; c &gt; d", "a && b < c > d"},
		{"see <https://go.dev>", "see https://go.dev"},
		{"see <http://example.com|example.com>", "see example.com"},
		{"mail <mailto:a@b.c|a@b.c>", "mail a@b.c"},
		{"<https://x.y/z|the docs>", "the docs (https://x.y/z)"},
		{"hi <@U123> and <@U9|bob>", "hi @U123 and @bob"},
		{"in <#C1|general>", "in #general"},
		{"<!here> <!subteam^S1|@devs>", "@here @devs"},
		{"&amp;lt; stays", "&lt; stays"},
	}
	for _, tc := range cases {
		if got := plainText(tc.in); got != tc.want {
			t.Errorf("plainText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// testAdapter is an adapter, not connected, whose router serves UALICE.
func testAdapter() *Adapter {
	cfg := Config{AllowedUsers: []string{"UALICE"}}
	access := core.NewAccess()
	cfg.Grant(access)
	router := core.NewRouter(context.Background(), core.RouterConfig{Access: access}, nil)
	a := newAdapter(cfg, Options{Lookup: router,
		Plugins: []core.Plugin{plugintest.Named{PluginID: "claude"}, plugintest.Named{PluginID: "codex"}}})
	a.setBot("UBOT")
	return a
}

func TestMentionCommand(t *testing.T) {
	t.Parallel()
	a := testAdapter()
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"start", "/claude start", true},
		{"start ~/src", "/claude start ~/src", true},
		{"start by reading the README", "", false},
		{"stop", "/stop", true},
		{"stop the server before deploying", "", false},
		{"status", "/status", true},
		{"status all", "/status all", true},
		{"conversation end", "/conversation end", true},
		{"workdir set ~/x", "/workdir set ~/x", true},
		{"help", "/help", true},
		{"help me fix this", "", false},
		{"codex start", "/codex start", true},
		{"gemini start", "", false}, // no such plugin here: a request
		{"claude resume", "", false},
		{"claude resume 1234", "/claude resume 1234", true},
		{"claude conversations", "/claude conversations", true},
		{"/claude start ~/y", "/claude start ~/y", true},
		{"what is 2 < 3?", "", false},
		// A one-word command with free text takes one word without its
		// slash: longer, it is a request.
		{"every test in pkg fails, fix them", "", false},
		{"at line 40 there is a bug", "", false},
		{"file a bug about it", "", false},
		{"deny it, it deletes the database", "", false},
		{"answer the question in the README", "", false},
		{"file README.md", "/file README.md", true},
		{"allow always", "/allow always", true},
		{"deny", "/deny", true},
		{"answer 2", "/answer 2", true},
		{"/every 1h run the tests", "/every 1h run the tests", true},
		{"/at 09:00 standup notes", "/at 09:00 standup notes", true},
		{"workdir set ~/My Projects", "/workdir set ~/My Projects", true},
		{"claude start ~/x --worktree", "/claude start ~/x --worktree", true},
		{"model opus", "/model opus", true},
		{"model this as a state machine", "", false},
		{"", "", false},
	}
	for _, tc := range cases {
		got, ok := a.mentionCommand(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("mentionCommand(%q) = %q, %v, want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestScope(t *testing.T) {
	t.Parallel()
	a := testAdapter()
	cases := map[string]core.Scope{
		"/claude start":         core.ScopeNewConversation,
		"/claude start ~/x":     core.ScopeNewConversation,
		"/claude resume abc":    core.ScopeNewConversation,
		"/claude resume":        core.ScopeHere,
		"/claude conversations": core.ScopeHere,
		"/help":                 core.ScopeHere,
		"/stop":                 core.ScopeConversation,
		"/status all":           core.ScopeConversation,
		"/conversation end":     core.ScopeConversation,
		"/end":                  core.ScopeConversation,
		"/workdir set x":        core.ScopeConversation,
		"/resume abc":           core.ScopeConversation,
		"hello":                 core.ScopeHere,
	}
	for in, want := range cases {
		if got := a.scope(in); got != want {
			t.Errorf("scope(%q) = %v, want %v", in, got, want)
		}
	}
}

func eventsAPI(id string, inner any) socketmode.Event {
	return socketmode.Event{Type: socketmode.EventTypeEventsAPI, Data: slackevents.EventsAPIEvent{
		Type:       slackevents.CallbackEvent,
		Data:       &slackevents.EventsAPICallbackEvent{EventID: id},
		InnerEvent: slackevents.EventsAPIInnerEvent{Data: inner},
	}}
}

func message(user, channel, thread, parent, text string) *slackevents.MessageEvent {
	return &slackevents.MessageEvent{User: user, Channel: channel, ThreadTimeStamp: thread, TimeStamp: "2.0", Text: text,
		ChannelType: map[byte]string{'C': "channel", 'G': "group", 'D': "im"}[channel[0]],
		Message:     &slack.Msg{ParentUserId: parent}}
}

// TestInbound checks which events reach the router, and as what.
func TestInbound(t *testing.T) {
	t.Parallel()
	type want struct {
		Key  core.ConversationKey
		Text string
		From string
	}
	key := func(user, channel, thread string) core.ConversationKey {
		return core.ConversationKey{Platform: Name, User: user, Channel: channel, Thread: thread}
	}
	edited := message("UALICE", "C1", "1.0", "UBOT", "x")
	edited.SubType = "message_changed"
	botPost := message("", "C1", "1.0", "UBOT", "x")
	botPost.BotID = "BBOT"
	cases := []struct {
		name   string
		ev     socketmode.Event
		want   []want // nil: dropped
		parent bool
	}{
		{"reply in the bot's thread", eventsAPI("E1", message("UBOB", "C1", "1.0", "UBOT", "go &amp; see")),
			[]want{{key("", "C1", "1.0"), "go & see", "UBOB"}}, false},
		{"reply in a thread the bot did not start", eventsAPI("E2", message("UALICE", "C1", "1.0", "UBOB", "x")), nil, false},
		{"top-level chatter", eventsAPI("E3", message("UALICE", "C1", "", "", "x")), nil, false},
		{"a mention's message event", eventsAPI("E4", message("UALICE", "C1", "1.0", "UBOT", "<@UBOT> stop")), nil, false},
		{"an edit", eventsAPI("E5", edited), nil, false},
		{"the bot's own post", eventsAPI("E6", botPost), nil, false},
		{"a direct message", eventsAPI("E7", message("UALICE", "D1", "", "", "hi")),
			[]want{{key("UALICE", "D1", ""), "hi", "UALICE"}}, false},
		{"a command mention in a DM", eventsAPI("E8", message("UALICE", "D2", "", "", "<@UBOT> start ~/x")),
			[]want{{key("UALICE", "D2", ""), "/claude start ~/x", "UALICE"}}, false},
		{"a top-level request", eventsAPI("E9", &slackevents.AppMentionEvent{User: "UALICE", Channel: "C1", TimeStamp: "3.0", Text: "<@UBOT> fix it"}),
			[]want{{key("", "C1", "3.0"), "/claude start", "UALICE"}, {key("", "C1", "3.0"), "fix it", "UALICE"}}, false},
		{"a top-level request that starts with a command's word", eventsAPI("E9b", &slackevents.AppMentionEvent{User: "UALICE", Channel: "C1", TimeStamp: "3.5", Text: "<@UBOT> every test in pkg fails, fix them"}),
			[]want{{key("", "C1", "3.5"), "/claude start", "UALICE"}, {key("", "C1", "3.5"), "every test in pkg fails, fix them", "UALICE"}}, false},
		{"a top-level request from a stranger", eventsAPI("E10", &slackevents.AppMentionEvent{User: "UEVE", Channel: "C1", TimeStamp: "4.0", Text: "<@UBOT> fix it"}),
			[]want{{key("", "C1", "4.0"), "fix it", "UEVE"}}, false},
		{"a mention in a thread", eventsAPI("E11", &slackevents.AppMentionEvent{User: "UALICE", Channel: "C1", TimeStamp: "5.0", ThreadTimeStamp: "1.0", Text: "<@UBOT> status"}),
			[]want{{key("", "C1", "1.0"), "/status", "UALICE"}}, false},
		{"a redelivered event", eventsAPI("E1", message("UBOB", "C1", "1.0", "UBOT", "again")), nil, false},
		{"slash start in a channel", socketmode.Event{Type: socketmode.EventTypeSlashCommand,
			Data: slack.SlashCommand{UserID: "UALICE", ChannelID: "C1", Command: "/claude", Text: "start ~/x", TriggerID: "T1"}},
			[]want{{key("", "C1", ""), "/claude start ~/x", "UALICE"}}, true},
		{"slash start from a stranger", socketmode.Event{Type: socketmode.EventTypeSlashCommand,
			Data: slack.SlashCommand{UserID: "UEVE", ChannelID: "C1", Command: "/claude", Text: "start", TriggerID: "T2"}},
			[]want{{key("", "C1", ""), "/claude start", "UEVE"}}, false},
		{"slash status acts on the last thread", socketmode.Event{Type: socketmode.EventTypeSlashCommand,
			Data: slack.SlashCommand{UserID: "UALICE", ChannelID: "C1", Command: "/status", TriggerID: "T3"}},
			[]want{{key("", "C1", "1.0"), "/status", "UALICE"}}, false},
		{"a redelivered slash command", socketmode.Event{Type: socketmode.EventTypeSlashCommand,
			Data: slack.SlashCommand{UserID: "UALICE", ChannelID: "C1", Command: "/status", TriggerID: "T3"}}, nil, false},
	}
	// Cases run in order: the adapter remembers threads and ids.
	a := testAdapter()
	for _, tc := range cases {
		in, ok := a.inbound(tc.ev)
		var got []want
		for _, m := range in.msgs {
			got = append(got, want{m.Key, m.Text, m.Author()})
		}
		if !ok {
			got = nil
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
		if (in.parent != "") != tc.parent {
			t.Errorf("%s: thread parent %q, want one: %v", tc.name, in.parent, tc.parent)
		}
	}
}

// TestManifest checks that the manifest asks for what the adapter uses.
func TestManifest(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"socket_mode_enabled: true", "- app_mention\n", "- message.channels\n", "- message.groups\n", "- message.im\n",
		"- app_mentions:read", "- channels:history", "- groups:history", "- im:history", "- chat:write ", "- commands ",
		"- reactions:write", "- files:read", "- files:write", "interactivity:\n    is_enabled: true", "command: /claude\n", "command: /conversation\n", "command: /status\n", "command: /stop\n",
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("manifest.yaml lacks %q", want)
		}
	}
}
