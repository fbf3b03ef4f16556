package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/telegram/telegramtest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// TestDMStreamsWithinEditLimit starts a conversation in a private chat and
// streams a reply: it is posted, edited as text arrives, never faster than
// one write per second to the chat, and ends complete with its footer.
func TestDMStreamsWithinEditLimit(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	dm := alice.Private()
	h.says(dm, alice, 0, "/claude start")
	if got := h.last(dm.ID); !strings.Contains(got, "Claude Code conversation started") {
		t.Fatalf("after /claude start the bot said %q", got)
	}
	// getUpdates answered before the command was handled.
	if err := h.bot.Healthy(); err != nil {
		t.Errorf("Healthy = %v, want nil while polling works", err)
	}
	since, sent := h.clock.Now(), len(h.srv.Calls("sendMessage", "editMessageText"))
	h.srv.UserSays(dm, alice, 0, "write a poem")
	tr := h.nextTurn()
	if tr.Prompt != "write a poem" || tr.Key.User != "1001" || tr.Key.Thread != "" {
		t.Fatalf("turn = %+v", tr.Turn)
	}
	var want strings.Builder
	for i := range 8 {
		line := "Line " + strconv.Itoa(i) + " of the poem.\n"
		want.WriteString(line)
		n := h.writes(dm.ID) // before the line: its write may come at once
		tr.say(line)
		h.until("the line to be shown", func() bool { return h.writes(dm.ID) > n && strings.Contains(h.last(dm.ID), "Line "+strconv.Itoa(i)) })
	}
	tr.end()
	h.until("the footer", func() bool { return strings.Contains(h.last(dm.ID), "2.0s · $0.0100") })
	if got := h.last(dm.ID); !strings.HasPrefix(got, strings.TrimSpace(want.String())) {
		t.Errorf("final reply = %q, want it to start with %q", got, want.String())
	}
	msgs := h.srv.Messages(dm.ID)
	if n := len(msgs); n != 2 {
		t.Errorf("bot posted %d messages, want 2 (the start notice and one streamed reply)", n)
	}
	if msgs[len(msgs)-1].Edits < 2 {
		t.Errorf("the reply was edited %d times, want progressive edits", msgs[len(msgs)-1].Edits)
	}
	checkRate(t, h.srv.Calls("sendMessage", "editMessageText")[sent:], dm.ID, since, time.Second)
	// The indicator is sent from its own goroutine, first thing: it may
	// reach the server after a short turn's reply.
	h.until("the typing action", func() bool { return len(h.srv.Calls("sendChatAction")) > 0 })
	if tc := h.srv.Calls("sendChatAction"); tc[0].Params.Get("action") != "typing" {
		t.Errorf("chat action %v, want typing", tc)
	}
}

// checkRate fails when more of calls reached chat than one per interval
// allows, counted from since. The fake stamps a call when it arrives, and
// the clock may move while a write is on its way (the harness moves it to
// any wait, such as the poll loop's while an update is being handled), so
// a write arrives later than the bot decided to send it: the check bounds
// every prefix of the writes, the k-th may not arrive before
// since + (k-1)·interval. That holds only for writes that left at since or
// later, so calls are those the fake received after the test read since:
// one received before may have left a second earlier and arrived at since.
func checkRate(t *testing.T, calls []telegramtest.Call, chat int64, since time.Time, interval time.Duration) {
	t.Helper()
	k := 0
	for _, c := range calls {
		if c.Params.Get("chat_id") != strconv.FormatInt(chat, 10) || c.Error != "" {
			continue
		}
		if earliest := since.Add(time.Duration(k) * interval); c.At.Before(earliest) {
			t.Errorf("write %d (%s %q) arrived at +%s, before +%s: faster than one per %s", k+1, c.Method, core.Shorten(c.Params.Get("text"), 40), c.At.Sub(since), earliest.Sub(since), interval)
		}
		k++
	}
}

// TestCommandMenuAndAddressing checks setMyCommands and that commands for
// another bot are ignored while /cmd@thisbot is answered.
func TestCommandMenuAndAddressing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	dm := alice.Private()
	h.until("setMyCommands", func() bool { return h.srv.Commands() != "" })
	var cmds []struct{ Command, Description string }
	if err := json.Unmarshal([]byte(h.srv.Commands()), &cmds); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cmds {
		names = append(names, c.Command)
	}
	// The words of core's command table that work bare, and the plugins.
	if got, want := strings.Join(names, " "), "claude resume status cost workdir model mode file diff merge ask review pair at every schedules unschedule runners limits stop now steer queue allow answer deny end help"; got != want {
		t.Errorf("menu = %s, want %s", got, want)
	}
	if !strings.Contains(cmds[0].Description, "/claude start [workdir] | /claude conversations | /claude resume <id>") {
		t.Errorf("/claude is described as %q, want its usages", cmds[0].Description)
	}

	h.srv.UserSays(dm, alice, 0, "/help@otherbot")
	h.says(dm, alice, 0, "/status@JakeBot")
	if got := h.last(dm.ID); !strings.Contains(got, "No conversation here yet") {
		t.Errorf("/status@JakeBot answered %q", got)
	}
	if n := len(h.srv.Messages(dm.ID)); n != 1 {
		t.Errorf("bot posted %d messages, want 1: /help@otherbot must be ignored", n)
	}
	h.says(dm, alice, 0, "/claude start")
	h.says(dm, alice, 0, "/end")
	if got := h.last(dm.ID); !strings.Contains(got, "Conversation ended") {
		t.Errorf("/end answered %q", got)
	}
}

// TestInlineKeyboardResume lists past sessions as buttons; pressing one
// resumes that session and answers the callback query.
func TestInlineKeyboardResume(t *testing.T) {
	t.Parallel()
	// Sessions started outside chat are listed to admins only.
	h := newHarness(t, func(c *Config, _ *Options) { c.AdminUsers = UserIDs{alice.ID} })
	const old = "0b7c6a52-1f3e-4b8e-9a7d-2c1d5e6f7a8b"
	h.plugin.List = plugintest.History([]core.ConversationInfo{
		{SessionID: "4f1e2d3c-aaaa-bbbb-cccc-ddddeeeeffff", Title: "fix the build", Updated: h.clock.Now()},
		{SessionID: old, Title: "write <docs> & tests", Updated: h.clock.Now().Add(-time.Hour)},
	})
	dm := alice.Private()
	h.says(dm, alice, 0, "/claude conversations")
	msgs := h.srv.Messages(dm.ID)
	list := msgs[len(msgs)-1]
	var kb struct {
		InlineKeyboard [][]struct {
			Text         string `json:"text"`
			CallbackData string `json:"callback_data"`
		} `json:"inline_keyboard"`
	}
	if err := json.Unmarshal([]byte(list.Markup), &kb); err != nil || len(kb.InlineKeyboard) != 2 {
		t.Fatalf("listing markup = %q (%v), want two buttons", list.Markup, err)
	}
	if b := kb.InlineKeyboard[1][0]; b.Text != "write <docs> & tests" || b.CallbackData != "/claude resume "+old {
		t.Errorf("second button = %+v", b)
	}
	if !strings.Contains(plain(t, list), "write <docs> & tests") {
		t.Errorf("listing text = %q", plain(t, list))
	}

	before := h.writes(dm.ID)
	id := h.srv.PressButton(alice, list, kb.InlineKeyboard[1][0].CallbackData)
	h.until("the resume reply", func() bool { return h.writes(dm.ID) > before && h.srv.CallbackAnswered(id) })
	if got := h.last(dm.ID); !strings.Contains(got, "Resumed Claude Code conversation "+old) {
		t.Fatalf("after the button the bot said %q", got)
	}
	h.srv.UserSays(dm, alice, 0, "carry on")
	tr := h.nextTurn()
	if tr.SessionID != old {
		t.Errorf("turn resumes %q, want %q", tr.SessionID, old)
	}
	tr.end()
	h.until("the turn's reply", func() bool { return strings.Contains(h.last(dm.ID), "2.0s") })
}

// TestTopicsAreConversations runs two forum topics side by side: each is
// its own conversation, replies land in their topic, and the group's write
// budget holds.
func TestTopicsAreConversations(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	t1, t2 := h.srv.NewTopic(team, "frontend"), h.srv.NewTopic(team, "backend")
	h.says(team, alice, t1, "/claude start")
	h.says(team, alice, t2, "/claude@jakebot start")
	if n := h.router.Conversations().Len(); n != 2 {
		t.Fatalf("%d conversations, want 2", n)
	}
	since, sent := h.clock.Now(), len(h.srv.Calls("sendMessage", "editMessageText"))
	h.srv.UserSays(team, alice, t1, "hello frontend")
	tr1 := h.nextTurn()
	h.srv.UserSays(team, alice, t2, "hello backend")
	tr2 := h.nextTurn()
	if tr1.Key.Thread != strconv.Itoa(t1) || tr2.Key.Thread != strconv.Itoa(t2) || tr1.Key == tr2.Key {
		t.Fatalf("turn keys %v and %v, want topics %d and %d", tr1.Key, tr2.Key, t1, t2)
	}
	tr1.say("answer for frontend")
	tr2.say("answer for backend")
	tr1.end()
	tr2.end()
	h.until("both answers", func() bool {
		n := 0
		for _, m := range h.srv.Messages(team.ID) {
			if strings.Contains(m.Text, "2.0s") {
				n++
			}
		}
		return n == 2
	})
	for _, m := range h.srv.Messages(team.ID) {
		switch {
		case strings.Contains(m.Text, "frontend") && m.Thread != t1,
			strings.Contains(m.Text, "backend") && m.Thread != t2:
			t.Errorf("message %q went to topic %d", m.Text, m.Thread)
		}
	}
	checkRate(t, h.srv.Calls("sendMessage", "editMessageText")[sent:], team.ID, since, 3*time.Second)
	for _, c := range h.srv.Calls("sendChatAction") {
		if c.Params.Get("message_thread_id") == "" {
			t.Errorf("typing action without a topic: %v", c.Params)
		}
	}
}

// TestRateLimitLosesNothing answers an edit in one forum topic with 429:
// nothing is written to the group before retry_after has passed, not even
// to another topic, and the final reply holds everything.
func TestRateLimitLosesNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	t1, t2 := h.srv.NewTopic(team, "one"), h.srv.NewTopic(team, "two")
	h.says(team, alice, t1, "/claude start")
	h.srv.UserSays(team, alice, t1, "go")
	a := h.nextTurn()
	a.say("first part. ")
	h.until("the first part", func() bool { return strings.Contains(h.last(team.ID), "first part") })

	h.srv.RateLimitNext("editMessageText", 7)
	a.say("second part. ")
	h.until("the 429", func() bool { return len(h.srv.Calls("editMessageText")) > 0 })
	limited := h.srv.Calls("editMessageText")[0]
	if !strings.Contains(limited.Error, "retry after 7") {
		t.Fatalf("first edit = %+v, want the injected 429", limited)
	}
	// Another topic of the same group is held back too. The write waits
	// for the edit's answer (writes to a chat are serialised), so it sees
	// the 429 however the goroutines are scheduled.
	sends := len(h.srv.Calls("sendMessage"))
	_, err := h.bot.Send(context.Background(), core.Target{Platform: "telegram", Channel: strconv.FormatInt(team.ID, 10), Thread: strconv.Itoa(t2)}, "other topic")
	if rl, ok := core.AsRateLimit(err); !ok || rl.RetryAfter <= 3*time.Second || rl.RetryAfter > 7*time.Second {
		t.Errorf("Send to another topic during flood control = %v, want a RateLimitError for the rest of the 7s (more than the 3s group budget)", err)
	}
	if n := len(h.srv.Calls("sendMessage")); n != sends {
		t.Errorf("a message reached Telegram during flood control")
	}
	a.say("third part. ")
	a.say("fourth part.")
	a.end()
	h.until("the final reply", func() bool { return strings.Contains(h.last(team.ID), "2.0s") })
	if got := h.last(team.ID); !strings.HasPrefix(got, "first part. second part. third part. fourth part.") {
		t.Errorf("final reply = %q, lost text", got)
	}
	var after []string
	for _, c := range h.srv.Calls("sendMessage", "editMessageText") {
		if c.At.After(limited.At) && c.At.Before(limited.At.Add(7*time.Second)) {
			t.Errorf("%s at +%s, before retry_after (7s) passed", c.Method, c.At.Sub(limited.At))
		}
		if c.At.After(limited.At) {
			after = append(after, c.Params.Get("text"))
		}
	}
	if len(after) > 2 {
		t.Errorf("%d writes after the 429, want the waiting edits coalesced into at most 2: %q", len(after), after)
	}
}

// TestLongAnswerSplits streams a 20,000-character answer with code: it
// arrives complete over several messages, each valid HTML within
// Telegram's limit.
func TestLongAnswerSplits(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	dm := alice.Private()
	h.says(dm, alice, 0, "/claude start")
	var text strings.Builder
	for i := 0; text.Len() < 20000; i++ {
		if i%5 == 4 {
			text.WriteString("```go\n")
			for j := range 30 {
				text.WriteString("fmt.Println(\"<" + strconv.Itoa(i) + "." + strconv.Itoa(j) + "> & done\")\n")
			}
			text.WriteString("```\n")
		} else {
			text.WriteString("Paragraph " + strconv.Itoa(i) + " says **something** about `a < b` & more, at some length to fill the page.\n")
		}
	}
	got := streamAnswer(t, h, dm, text.String(), 40)
	wantLines := strings.Split(strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(text.String(), "```go\n", ""), "```\n", ""), "**", ""), "\n")
	gotLines := strings.Split(got, "\n")
	i := 0
	for _, l := range gotLines {
		if i < len(wantLines) && strings.ReplaceAll(wantLines[i], "`", "") == l {
			i++
		}
	}
	if i < len(wantLines)-1 {
		t.Errorf("line %d of the answer (%q) is missing from what arrived", i, wantLines[i])
	}
}

// TestEmojiAndCJKSplit sends a long line of emoji and CJK with no spaces:
// every message fits in 4096 UTF-16 units and together they are the
// answer, no character cut.
func TestEmojiAndCJKSplit(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	dm := alice.Private()
	h.says(dm, alice, 0, "/claude start")
	answer := strings.Repeat("😀中文字符👍🏽🚀", 700) // 9 runes, 14 UTF-16 units each
	got := streamAnswer(t, h, dm, answer, 7)
	if got != answer {
		t.Errorf("arrived %d runes, want %d; first difference at rune %d", len([]rune(got)), len([]rune(answer)), firstDiff([]rune(got), []rune(answer)))
	}
}

func firstDiff(a, b []rune) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// streamAnswer runs one turn that streams answer in n chunks and returns
// the plain text of the reply's messages joined (without the footer).
func streamAnswer(t *testing.T, h *harness, dm telegramtest.Chat, answer string, n int) string {
	t.Helper()
	first := len(h.srv.Messages(dm.ID))
	h.srv.UserSays(dm, alice, 0, "go")
	tr := h.nextTurn()
	rs := []rune(answer)
	for i := range n {
		tr.say(string(rs[i*len(rs)/n : (i+1)*len(rs)/n]))
	}
	tr.end()
	h.until("the footer", func() bool { return strings.Contains(h.last(dm.ID), "— 2.0s") })
	msgs := h.srv.Messages(dm.ID)[first:]
	if len(msgs) < 2 {
		t.Fatalf("answer of %d units came in %d message(s)", telegramtest.UTF16Len(answer), len(msgs))
	}
	var parts []string
	for _, m := range msgs {
		if m.ParseMode != "HTML" {
			t.Errorf("message %d fell back to plain text", m.ID)
		}
		p := plain(t, m)
		if l := telegramtest.UTF16Len(p); l > 4096 {
			t.Errorf("message %d has %d units", m.ID, l)
		}
		parts = append(parts, p)
	}
	for _, c := range h.srv.Calls("sendMessage", "editMessageText") {
		if c.Error != "" && !strings.Contains(c.Error, "not modified") {
			t.Errorf("%s refused: %s", c.Method, c.Error)
		}
	}
	last := parts[len(parts)-1]
	parts[len(parts)-1] = strings.TrimSpace(strings.TrimSuffix(last, "— 2.0s · $0.0100"))
	joined := strings.Join(parts, "")
	if !strings.Contains(answer, "\n") {
		return joined
	}
	return strings.Join(parts, "\n")
}

// TestUnknownUserRefused gets a stranger one refusal showing their id,
// and a private alert when they press a button.
func TestUnknownUserRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config, _ *Options) { c.AdminUsers = UserIDs{alice.ID} })
	// A stranger's first press in a place is refused with a private alert.
	h.plugin.List = plugintest.History([]core.ConversationInfo{{SessionID: "4f1e2d3c-aaaa-bbbb-cccc-ddddeeeeffff", Title: "fix the build"}})
	topic := h.srv.NewTopic(team, "ops")
	h.says(team, alice, topic, "/claude conversations")
	list := h.srv.Messages(team.ID)[0]
	press := h.srv.PressButton(bob, list, "/claude resume 4f1e2d3c-aaaa-bbbb-cccc-ddddeeeeffff")
	h.until("the alert", func() bool { return h.srv.CallbackAnswered(press) })
	for _, c := range h.srv.Calls("answerCallbackQuery") {
		if c.Params.Get("callback_query_id") == press && (c.Params.Get("show_alert") != "true" || !strings.Contains(c.Params.Get("text"), "2002")) {
			t.Errorf("callback answer = %v, want an alert with the id", c.Params)
		}
	}

	dm := bob.Private()
	h.says(dm, bob, 0, "hello")
	if got := h.last(dm.ID); !strings.Contains(got, "not on this bot's allow-list") || !strings.Contains(got, "2002") {
		t.Errorf("refusal = %q, want it to show the id 2002", got)
	}
	h.srv.UserSays(dm, bob, 0, "hello again")
	h.srv.UserSays(dm, bob, 0, "/claude start")
	// The press is handled after the messages before it (same
	// conversation), so its answer means they were handled too. Bob was
	// told here already: the press is answered (its spinner stops), with
	// nothing to say.
	id := h.srv.PressButton(bob, h.srv.Messages(dm.ID)[0], "/claude resume x")
	h.until("the callback answer", func() bool { return h.srv.CallbackAnswered(id) })
	for _, c := range h.srv.Calls("answerCallbackQuery") {
		if c.Params.Get("callback_query_id") == id && (c.Params.Get("show_alert") == "true" || c.Params.Get("text") != "") {
			t.Errorf("callback answer = %v, want a silent one", c.Params)
		}
	}
	if n := len(h.srv.Messages(dm.ID)); n != 1 {
		t.Errorf("bot posted %d messages to a stranger, want one refusal", n)
	}
	if len(h.srv.Calls("answerCallbackQuery")) != 2 {
		t.Errorf("callbacks answered %d times, want once each", len(h.srv.Calls("answerCallbackQuery")))
	}
}

// A message belongs to the conversation it was sent in: a /codex start
// while a Claude turn runs and a message waits is refused, and the waiting
// message runs on Claude.
func TestMessagesKeepTheirConversation(t *testing.T) {
	t.Parallel()
	codex := &plugintest.Scripted{PluginID: "codex", PluginName: "Codex"}
	h := newHarness(t, func(_ *Config, o *Options) { o.Plugins = append(o.Plugins, codex) })
	dm := alice.Private()
	h.says(dm, alice, 0, "/claude start")
	h.srv.UserSays(dm, alice, 0, "hello")
	first := h.nextTurn()
	h.says(dm, alice, 0, "hi")
	if got := h.last(dm.ID); !strings.Contains(got, "Queued (1 waiting)") {
		t.Fatalf("after a second message the bot said %q, want it queued", got)
	}
	for _, cmd := range []string{"/codex start", "/conversation end"} {
		h.says(dm, alice, 0, cmd)
		if got := h.last(dm.ID); !strings.Contains(got, "A Claude Code turn is running and 1 messages are waiting; /stop it first, or wait until it ends.") {
			t.Fatalf("%s during a turn: the bot said %q, want a refusal", cmd, got)
		}
	}
	first.end()
	second := h.nextTurn() // Claude's: a turn on Codex would never arrive here
	if second.Prompt != "hi" || second.SessionID != "session-1001" {
		t.Fatalf("queued turn = %+v, want hi resuming Claude's session", second.Turn)
	}
	second.end()
	h.until("the second reply", func() bool { return strings.Count(h.dump(), "2.0s · $0.0100") >= 2 })
	if turns := codex.Turns(); len(turns) != 0 {
		t.Fatalf("Codex ran a turn: %+v", turns[0])
	}
}

// A tool call is asked about with inline buttons in the conversation's
// topic; only the turn's author (or an admin) can answer, and the answer
// reaches the plugin.
func TestApprovalButtons(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	topic := h.srv.NewTopic(team, "ops")
	h.says(team, alice, topic, "/claude start")
	h.srv.UserSays(team, alice, topic, "clean the build")
	tr := h.nextTurn()
	answers := make(chan core.Answer, 1)
	go func() {
		tr.Events() <- core.Event{Kind: core.EventQuestion, Question: &core.Question{Tool: "Bash", Summary: "`rm -rf build`",
			Answer: func(a core.Answer) { answers <- a }}}
	}()
	h.until("the question", func() bool { return strings.Contains(h.last(team.ID), "Allow Bash?") })
	msgs := h.srv.Messages(team.ID)
	question := msgs[len(msgs)-1]
	if got := strings.Join(buttons(t, question), ", "); got != "Allow=/allow q1, Always allow Bash=/allow q1 always, Deny=/deny q1" {
		t.Fatalf("buttons %s", got)
	}
	if question.Thread != topic || !strings.Contains(plain(t, question), "rm -rf build") {
		t.Errorf("question %+v is not in the topic, or lacks the command", question)
	}

	before := h.writes(team.ID)
	h.srv.PressButton(carol, question, "/allow q1")
	h.until("carol's refusal", func() bool { return h.writes(team.ID) > before })
	if got := h.last(team.ID); !strings.Contains(got, "Only the author of this turn") {
		t.Errorf("after carol's press the bot said %q", got)
	}
	select {
	case a := <-answers:
		t.Fatalf("carol's press answered the question: %+v", a)
	default:
	}
	h.srv.PressButton(alice, question, "/allow q1")
	h.until("alice's answer", func() bool { return strings.Contains(h.last(team.ID), "Allowed Bash (") })
	if a := <-answers; a.Decision != core.Allow || a.By != strconv.FormatInt(alice.ID, 10) {
		t.Errorf("answer %+v, want alice's allow", a)
	}
	h.until("the question settled", func() bool {
		for _, m := range h.srv.Messages(team.ID) {
			if m.ID == question.ID {
				return strings.Contains(plain(t, m), "→ Allowed Bash") && m.Markup == ""
			}
		}
		return false
	})
	tr.say("Cleaned.")
	tr.end()
	h.until("the turn's reply", func() bool { return strings.Contains(h.last(team.ID), "2.0s") })
}

// buttons returns m's inline keyboard as "text=callback data".
func buttons(t *testing.T, m telegramtest.Message) []string {
	t.Helper()
	var kb struct {
		InlineKeyboard [][]struct {
			Text         string `json:"text"`
			CallbackData string `json:"callback_data"`
		} `json:"inline_keyboard"`
	}
	if err := json.Unmarshal([]byte(m.Markup), &kb); err != nil {
		t.Fatalf("markup %q: %v", m.Markup, err)
	}
	var out []string
	for _, row := range kb.InlineKeyboard {
		for _, b := range row {
			out = append(out, b.Text+"="+b.CallbackData)
		}
	}
	return out
}

// A message sent while a turn runs waits with a Send now button. A
// stranger's press and another allowed user's are refused and change
// nothing; its author's or an admin's interrupts the running turn, and
// the message runs next, ahead of the one queued before it. Each user has
// a conversation of their own in a topic: the presses come from theirs.
func TestSendNowButton(t *testing.T) {
	t.Parallel()
	dave := telegramtest.User{ID: 1004, FirstName: "Dave"}
	for _, presser := range []telegramtest.User{alice, dave} {
		t.Run(presser.FirstName, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, func(c *Config, _ *Options) {
				c.AllowedUsers = append(c.AllowedUsers, dave.ID)
				c.AdminUsers = UserIDs{dave.ID}
			})
			shows := func(text string) func() bool {
				return func() bool {
					for _, m := range h.srv.Messages(team.ID) {
						if strings.Contains(plain(t, m), text) {
							return true
						}
					}
					return false
				}
			}
			topic := h.srv.NewTopic(team, "ops")
			h.says(team, alice, topic, "/claude start")
			h.srv.UserSays(team, alice, topic, "a long job")
			first := h.nextTurn()
			h.says(team, alice, topic, "two")
			h.says(team, alice, topic, "three")
			msgs := h.srv.Messages(team.ID)
			queued := msgs[len(msgs)-1]
			bs := buttons(t, queued)
			if !strings.Contains(plain(t, queued), "Queued (2 waiting)") || len(bs) != 1 || !strings.HasPrefix(bs[0], "Send now=/now ") {
				t.Fatalf("the queued message %q has buttons %q, want one Send now", plain(t, queued), bs)
			}
			now := strings.TrimPrefix(bs[0], "Send now=")

			press := h.srv.PressButton(bob, queued, now)
			h.until("the stranger's alert", func() bool { return h.srv.CallbackAnswered(press) })
			for _, c := range h.srv.Calls("answerCallbackQuery") {
				if c.Params.Get("callback_query_id") == press && (c.Params.Get("show_alert") != "true" || !strings.Contains(c.Params.Get("text"), "allow-list")) {
					t.Errorf("the stranger's press was answered %v, want an alert", c.Params)
				}
			}
			h.srv.PressButton(carol, queued, now)
			h.until("carol's refusal", shows("only its author (@alice) or an admin can send that message now"))
			first.say("still working") // the turn still runs
			if turns := h.plugin.Turns(); len(turns) != 1 {
				t.Fatalf("after refused presses %d turns ran, want the running one", len(turns))
			}

			h.srv.PressButton(presser, queued, now)
			h.until("the interruption", shows("Interrupted for the message sent now"))
			next := h.nextTurn()
			if next.Prompt != "three" || next.Key.User != strconv.FormatInt(alice.ID, 10) {
				t.Fatalf("after the press %q of %s ran, want alice's three", next.Prompt, next.Key.User)
			}
			next.end()
			last := h.nextTurn()
			if last.Prompt != "two" {
				t.Fatalf("then %q ran, want two", last.Prompt)
			}
			last.end()
			h.until("the replies", func() bool { return strings.Count(h.dump(), "2.0s · $0.0100") >= 2 })
			if !shows("runs next")() {
				t.Errorf("the press was not answered; messages: %s", h.dump())
			}
		})
	}
}

// A turn that ran long ends with a new message, which notifies where the
// streamed reply's edits do not.
func TestLongTurnPingsItsAuthor(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.took = 5 * time.Minute
	dm := alice.Private()
	h.says(dm, alice, 0, "/claude start")
	h.srv.UserSays(dm, alice, 0, "take your time")
	tr := h.nextTurn()
	tr.say("all done")
	tr.end()
	h.until("the ping", func() bool { return strings.Contains(h.last(dm.ID), "finished your turn after 5m0s") })
	msgs := h.srv.Messages(dm.ID)
	if n := len(msgs); n != 3 || msgs[2].Edits != 0 || !strings.Contains(plain(t, msgs[1]), "all done") {
		t.Errorf("bot posted %d messages, want the start notice, the reply and a new ping", n)
	}
}

// Files both ways through the real client library: a photo, a document
// and a voice note in (getFile, then the file URL), a file too large
// refused, and /file out (a multipart sendDocument).
func TestFilesBothWays(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	dm := alice.Private()
	h.says(dm, alice, 0, "/claude start")
	uploads := filepath.Join(".jakebot", "uploads", core.Day(h.clock.Now()))

	png := []byte("\x89PNG fake image bytes")
	h.srv.UserSends(dm, alice, "photo", "screen.png", png, "what is wrong here?")
	tr := h.nextTurn()
	if !strings.HasPrefix(tr.Prompt, "what is wrong here?\n\nFiles I sent, saved in the workdir:\n- .jakebot/uploads/") ||
		!strings.Contains(tr.Prompt, "(image)") || len(tr.Images) != 1 {
		t.Errorf("photo turn: prompt %q, images %q", tr.Prompt, tr.Images)
	}
	if got, err := os.ReadFile(tr.Images[0]); err != nil || !bytes.Equal(got, png) {
		t.Errorf("saved photo = %q, %v", got, err)
	}
	tr.end()
	h.until("the photo's reply", func() bool { return len(h.srv.Messages(dm.ID)) == 2 && strings.Contains(h.last(dm.ID), "$0.0100") })

	notes := []byte("line one\nline two\n")
	h.srv.UserSends(dm, alice, "document", "notes.txt", notes, "")
	tr = h.nextTurn()
	if want := "Files I sent, saved in the workdir:\n- " + filepath.Join(uploads, "notes.txt"); tr.Prompt != want {
		t.Errorf("document prompt = %q, want %q", tr.Prompt, want)
	}
	tr.end()
	h.until("the document's reply", func() bool { return len(h.srv.Messages(dm.ID)) == 3 && strings.Contains(h.last(dm.ID), "$0.0100") })

	h.srv.UserSends(dm, alice, "voice", "", []byte("OggS"), "")
	h.until("the voice note's answer", func() bool { return strings.Contains(h.last(dm.ID), "voice notes need TRANSCRIBE_CMD") })
	h.srv.UserSends(dm, alice, "document", "huge.bin", make([]byte, core.DefaultAttachmentMaxBytes+1), "")
	h.until("the refusal", func() bool { return strings.Contains(h.last(dm.ID), "huge.bin is 20 MB, over the 20 MB limit") })
	if _, err := os.Stat(filepath.Join(h.root, uploads, "huge.bin")); !os.IsNotExist(err) {
		t.Errorf("huge.bin was written: %v", err)
	}

	h.srv.UserSays(dm, alice, 0, "/file "+filepath.Join(uploads, "notes.txt"))
	h.until("the document", func() bool { return len(h.srv.Documents(dm.ID)) == 1 })
	if d := h.srv.Documents(dm.ID)[0]; d.Name != "notes.txt" || !bytes.Equal(d.Data, notes) {
		t.Errorf("sent document %q = %q", d.Name, d.Data)
	}
}

// TestModelTextLinksNobody: a link to a user (tg://user?id=…) in a CLI's
// answer would mention them; only web links become links, so it stays
// text, whether written as Markdown or as HTML.
func TestModelTextLinksNobody(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	dm := alice.Private()
	h.says(dm, alice, 0, "/claude start")
	h.srv.UserSays(dm, alice, 0, "who is carol?")
	tr := h.nextTurn()
	tr.say(`ask [carol](tg://user?id=1003) or <a href="tg://user?id=1003">carol</a>`)
	tr.end()
	h.until("the footer", func() bool { return strings.Contains(h.last(dm.ID), "— 2.0s") })
	if got := h.last(dm.ID); !strings.Contains(got, "[carol](tg://user?id=1003)") {
		t.Errorf("answer = %q, want the link as text", got)
	}
	// The library sends "entities":null with every edit: no entity.
	for _, c := range h.srv.Calls("sendMessage", "editMessageText") {
		if text, e := c.Params.Get("text"), c.Params.Get("entities"); strings.Contains(text, "<a ") || e != "" && e != "null" && e != "[]" {
			t.Errorf("%s sent a link: %q entities=%s", c.Method, text, c.Params.Get("entities"))
		}
	}
}

// Under BUSY=queue, a message sent while a turn that can take one runs
// waits with Steer and Send now: its author's Steer puts it into the
// running turn, and Send now still interrupts it for the other (issue 29).
func TestQueuedMessageSteerAndSendNow(t *testing.T) {
	t.Parallel()
	h := newHarnessRouting(t, func(rc *core.RouterConfig) { rc.Busy = core.BusyQueue }, func(_ *Config, o *Options) {
		o.Plugins[0].(*plugintest.Scripted).Steerable = true
	})
	shows := func(text string) func() bool {
		return func() bool { return strings.Contains(h.dump(), text) }
	}
	dm := alice.Private()
	h.says(dm, alice, 0, "/claude start")
	h.srv.UserSays(dm, alice, 0, "a long job")
	running := h.nextTurn()
	queued := map[string][]string{}
	var messages []telegramtest.Message
	for _, text := range []string{"two", "three"} {
		h.says(dm, alice, 0, text)
		msgs := h.srv.Messages(dm.ID)
		messages = append(messages, msgs[len(msgs)-1])
		bs := buttons(t, msgs[len(msgs)-1])
		if len(bs) != 2 || !strings.HasPrefix(bs[0], "Steer=/steer ") || !strings.HasPrefix(bs[1], "Send now=/now ") {
			t.Fatalf("the queued message %q has buttons %q, want Steer and Send now", plain(t, msgs[len(msgs)-1]), bs)
		}
		queued[text] = []string{strings.TrimPrefix(bs[0], "Steer="), strings.TrimPrefix(bs[1], "Send now=")}
	}

	h.srv.PressButton(alice, messages[0], queued["two"][0])
	h.until("the steered message", shows("↪ Added to the running turn"))
	if s := running.Steered(t); s.Prompt != "two" {
		t.Errorf("the running turn took %q, want two", s.Prompt)
	}

	h.srv.PressButton(alice, messages[1], queued["three"][1])
	h.until("the interruption", shows("Interrupted for the message sent now"))
	if next := h.nextTurn(); next.Prompt != "three" {
		t.Errorf("after Send now %q ran, want three", next.Prompt)
	} else {
		next.end()
	}
}

// A question replies to the message whose turn asks it: in a muted group
// a reply still notifies its author, where a new message does not
// (issue 30). A message its author deleted meanwhile leaves the question
// a plain message, not a refused one.
func TestQuestionRepliesToItsAuthor(t *testing.T) {
	t.Parallel()
	for _, deleted := range []bool{false, true} {
		t.Run(fmt.Sprintf("deleted=%v", deleted), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			topic := h.srv.NewTopic(team, "ops")
			h.says(team, alice, topic, "/claude start")
			h.srv.UserSays(team, alice, topic, "clean the build")
			asked := h.srv.LastUserMessage(team.ID)
			tr := h.nextTurn()
			want := asked
			if deleted {
				h.srv.UserDeletes(team.ID, asked)
				want = 0
			}
			go func() {
				tr.Events() <- core.Event{Kind: core.EventQuestion, Question: &core.Question{Tool: "Bash", Summary: "`rm -rf build`",
					Answer: func(core.Answer) {}}}
			}()
			h.until("the question", func() bool { return strings.Contains(h.last(team.ID), "Allow Bash?") })
			msgs := h.srv.Messages(team.ID)
			if q := msgs[len(msgs)-1]; q.ReplyTo != want {
				t.Errorf("the question replies to message %d, want %d (the turn's message is %d)", q.ReplyTo, want, asked)
			}
			for _, m := range msgs[:len(msgs)-1] {
				if m.ReplyTo != 0 {
					t.Errorf("%q replies to %d: only the question is a reply", plain(t, m), m.ReplyTo)
				}
			}
			for _, c := range h.srv.Calls("sendMessage") {
				if c.Error != "" {
					t.Errorf("sendMessage refused: %s", c.Error)
				}
			}
		})
	}
}
