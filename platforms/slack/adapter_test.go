package slack_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/slack"
	"github.com/jake-bot/jake-bot/platforms/slack/slacktest"
)

func TestSlashCommandStartsThreadAndRepliesStream(t *testing.T) {
	t.Parallel()
	h := start(t, setup{})
	thread := h.startThread(alice, general)
	// The socket's connected event came before the slash command.
	if err := h.adapter.Healthy(); err != nil {
		t.Errorf("Healthy = %v, want nil once connected", err)
	}

	msg := h.fake.Post(t, alice, general, thread, "live: hello")
	turn := h.plugin.Next(t)
	if want := (core.ConversationKey{Platform: "slack", Channel: general, Thread: thread}); turn.Key != want {
		t.Errorf("turn key = %+v, want %+v (the thread, any user)", turn.Key, want)
	}
	if turn.Prompt != "live: hello" {
		t.Errorf("prompt = %q", turn.Prompt)
	}
	h.fake.WaitCall(t, "an 👀 reaction on the message", func(c slacktest.Call) bool {
		return c.Method == "reactions.add" && c.TS == msg.TS && c.Name == "eyes"
	})

	turn.Emit(t, core.TextEvent("Hel"))
	first := h.fake.WaitCall(t, "the reply", func(c slacktest.Call) bool {
		return c.Method == "chat.postMessage" && c.ThreadTS == thread && c.Text == "Hel"
	})
	turn.Emit(t, core.TextEvent("lo **world**"))
	h.fake.WaitCall(t, "the first edit", func(c slacktest.Call) bool {
		return c.Method == "chat.update" && c.TS == first.TS && c.Text == "Hello *world*"
	})
	// The next edit must wait for the edit interval.
	h.forgetTimers()
	turn.Emit(t, core.TextEvent(" & more"))
	if d := h.waitTimer(); d != time.Second {
		t.Errorf("the coordinator waits %v for the next edit, want 1s", d)
	}
	h.clock.Advance(time.Second)
	h.fake.WaitCall(t, "the second edit", func(c slacktest.Call) bool {
		return c.Method == "chat.update" && c.TS == first.TS && c.Text == "Hello *world* &amp; more"
	})
	h.forgetTimers()
	turn.End(t, core.TurnResult{Duration: 2 * time.Second, CostUSD: 0.01})
	h.clock.Advance(h.waitTimer())
	want := "Hello *world* &amp; more\n\n_— 2.0s · $0.0100_"
	h.fake.WaitCall(t, "the final edit", func(c slacktest.Call) bool {
		return c.Method == "chat.update" && c.TS == first.TS && c.Text == want
	})

	var last time.Time
	for _, c := range h.fake.Calls() {
		if c.Method != "chat.update" || c.TS != first.TS {
			continue
		}
		if !last.IsZero() && c.At.Sub(last) < time.Second {
			t.Errorf("edits at %v and %v: closer than the 1s edit interval", last, c.At)
		}
		last = c.At
	}
	if got := texts(h.fake.Replies(general, thread)); len(got) != 2 || got[1] != want {
		t.Errorf("thread = %q, want the start notice and %q", got, want)
	}
	if top := h.fake.Replies(general, ""); len(top) != 1 {
		t.Errorf("channel top level = %q, want only the thread parent", texts(top))
	}
}

func TestThreadsAreSeparateSharedConversations(t *testing.T) {
	t.Parallel()
	h := start(t, setup{before: func(f *slacktest.Server) { f.EchoBotMessages(true) }})
	a := h.startThread(alice, general)
	b := h.startThread(alice, general)

	h.fake.Post(t, alice, general, a, "one")
	h.waitReply(general, a, "echo: one")
	h.fake.Post(t, alice, general, b, "two")
	h.waitReply(general, b, "echo: two")
	// Bob continues Alice's thread: the thread is the conversation.
	h.fake.Post(t, bob, general, a, "three")
	h.waitReply(general, a, "echo: three")

	turns := h.plugin.WaitTurns(t, 3)
	got := make([]string, len(turns))
	for i, turn := range turns {
		got[i] = fmt.Sprintf("%s %s %q", turn.Key.Thread, turn.Prompt, turn.SessionID)
	}
	want := []string{a + ` one ""`, b + ` two ""`, a + ` three "session-1"`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("turns (-want +got):\n%s", diff)
	}

	// /status typed in the channel acts on the thread Bob last used.
	h.fake.SlashCommand(t, bob, general, "/status", "")
	h.waitReply(general, a, "Session: session-1")
	if n := len(h.plugin.Turns()); n != 3 {
		t.Errorf("%d turns ran; the bot's own echoed messages must not start turns", n)
	}
}

func TestRedeliveredEnvelopesRunOnce(t *testing.T) {
	t.Parallel()
	h := start(t, setup{})
	thread := h.startThread(alice, general)
	first := h.fake.Post(t, alice, general, thread, "first")
	h.waitReply(general, thread, "echo: first")

	h.fake.Redeliver(t, first.Envelopes[0], false)
	retry := h.fake.Redeliver(t, first.Envelopes[0], true)
	h.fake.WaitAck(t, retry)
	slash := h.fake.SlashCommand(t, alice, general, "/claude", "start")
	h.fake.Redeliver(t, slash, true)

	// Messages of a thread are handled in order, so once "second" has run
	// a duplicate of "first" would have run before it.
	h.fake.Post(t, alice, general, thread, "second")
	h.waitReply(general, thread, "echo: second")
	var prompts []string
	for _, turn := range h.plugin.Turns() {
		prompts = append(prompts, turn.Prompt)
	}
	if diff := cmp.Diff([]string{"first", "second"}, prompts); diff != "" {
		t.Errorf("prompts (-want +got):\n%s", diff)
	}
	n := 0
	for _, id := range h.fake.Acks() {
		if id == first.Envelopes[0] {
			n++
		}
	}
	if n != 2 {
		t.Errorf("envelope %s acked %d times, want 2 (every delivery)", first.Envelopes[0], n)
	}
	h.until("the second /claude start's thread", func() bool { return countParents(h) == 2 })
	if n := countParents(h); n != 2 {
		t.Errorf("%d thread parents, want 2: a redelivered slash command must not start a thread", n)
	}
}

func countParents(h *harness) int {
	return len(h.fake.Replies(general, ""))
}

// longAnswer is 40 numbered lines, about 1,900 runes with the escapes.
func longAnswer() (events []core.Event, lines []string) {
	for i := range 40 {
		line := fmt.Sprintf("line %02d: the quick brown fox & the lazy dog", i)
		lines = append(lines, line)
		events = append(events, core.TextEvent(line+"\n"))
	}
	return events, lines
}

// checkComplete checks that the thread's replies after the start notice
// carry every line once, in order, each message within limit.
func checkComplete(t *testing.T, replies []slacktest.Message, lines []string, limit int) {
	t.Helper()
	var all strings.Builder
	for _, m := range replies[1:] {
		if n := utf8.RuneCountInString(m.Text); n > limit {
			t.Errorf("message %s has %d runes, over %d", m.TS, n, limit)
		}
		all.WriteString(m.Text + "\n")
	}
	got := strings.ReplaceAll(all.String(), "&amp;", "&")
	at := 0
	for _, line := range lines {
		i := strings.Index(got[at:], line)
		if i < 0 {
			t.Fatalf("%q missing (or out of order) in the replies:\n%s", line, got)
		}
		at += i + len(line)
		if strings.Count(got, line) != 1 {
			t.Errorf("%q appears %d times", line, strings.Count(got, line))
		}
	}
}

func TestLongAnswerArrivesCompleteAcrossMessages(t *testing.T) {
	t.Parallel()
	h := start(t, setup{limit: 500})
	events, lines := longAnswer()
	h.plugin.answer = func(string) []core.Event { return events }
	thread := h.startThread(alice, general)
	h.fake.Post(t, alice, general, thread, "tell me a long story")
	replies := h.waitReply(general, thread, "_— 1.0s_")
	if len(replies) < 5 {
		t.Errorf("%d replies, want the notice and at least 4 pages", len(replies))
	}
	checkComplete(t, replies, lines, 500)
}

func TestMsgTooLongLosesNothing(t *testing.T) {
	t.Parallel()
	// Pages of 900 runes, but Slack refuses more than 400.
	h := start(t, setup{limit: 900, before: func(f *slacktest.Server) { f.SetMaxText(400) }})
	events, lines := longAnswer()
	thread := h.startThread(alice, general)
	h.fake.Post(t, alice, general, thread, "live: long")
	turn := h.plugin.Next(t)
	turn.Emit(t, events[0]) // a short first post, so growing it fails in chat.update
	h.fake.WaitCall(t, "the first post", func(c slacktest.Call) bool {
		return c.Method == "chat.postMessage" && c.ThreadTS == thread && strings.HasPrefix(c.Text, "line 00")
	})
	// The rest arrives as one event: were it line by line, the coordinator
	// could post the second page while it is still short, and Slack would
	// not refuse it.
	var rest strings.Builder
	for _, ev := range events[1:] {
		rest.WriteString(ev.Text)
	}
	turn.Emit(t, core.TextEvent(rest.String()))
	turn.End(t, core.TurnResult{Duration: time.Second})
	replies := h.waitReply(general, thread, "_— 1.0s_")
	checkComplete(t, replies, lines, 400)
	refused := map[string]bool{}
	for _, c := range h.fake.Calls() {
		if c.Error == "msg_too_long" {
			refused[c.Method] = true
		}
	}
	if !refused["chat.update"] || !refused["chat.postMessage"] {
		t.Errorf("msg_too_long answered to %v, want both chat.update and chat.postMessage exercised", refused)
	}
}

func TestRateLimitLosesNothingAndBlocksNoOther(t *testing.T) {
	t.Parallel()
	h := start(t, setup{})
	a := h.startThread(alice, general)
	b := h.startThread(bob, general)

	h.fake.RateLimit("chat.postMessage", time.Second, 1)
	h.fake.Post(t, alice, general, a, "live: a")
	turn := h.plugin.Next(t)
	turn.Emit(t, core.TextEvent("first part"))
	h.fake.WaitCall(t, "a 429", func(c slacktest.Call) bool { return c.Error == "ratelimited" })

	// Thread a waits out its Retry-After on the (stopped) clock; thread b
	// is answered meanwhile.
	h.fake.Post(t, bob, general, b, "other")
	h.fake.WaitFor(t, "thread b's answer", func() bool {
		for _, m := range h.fake.Replies(general, b) {
			if strings.Contains(m.Text, "echo: other") {
				return true
			}
		}
		return false
	})
	if got := texts(h.fake.Replies(general, a)); len(got) != 1 {
		t.Errorf("thread a = %q while rate limited, want only the start notice", got)
	}

	h.waitReply(general, a, "first part")
	h.fake.RateLimit("chat.update", time.Second, 2)
	turn.Emit(t, core.TextEvent(", second part"))
	turn.End(t, core.TurnResult{Duration: time.Second})
	replies := h.waitReply(general, a, "first part, second part\n\n_— 1.0s_")
	if len(replies) != 2 {
		t.Errorf("thread a = %q, want the notice and one reply", texts(replies))
	}
	limited := 0
	for _, c := range h.fake.Calls() {
		if c.Error == "ratelimited" {
			limited++
		}
	}
	if limited != 3 {
		t.Errorf("%d calls rate limited, want 3", limited)
	}
}

func TestUnknownUserIsRefusedPrivately(t *testing.T) {
	t.Parallel()
	h := start(t, setup{})
	thread := h.startThread(alice, general)

	h.fake.Post(t, mallory, general, thread, "let me in")
	h.fake.SlashCommand(t, mallory, general, "/claude", "start")
	h.fake.WaitFor(t, "two refusals", func() bool { return len(h.fake.Ephemeral()) == 2 })
	for i, e := range h.fake.Ephemeral() {
		if e.User != mallory || !strings.Contains(e.Text, "not on this bot's allow-list") || !strings.Contains(e.Text, mallory) {
			t.Errorf("ephemeral %d = %+v, want a refusal naming %s", i, e, mallory)
		}
	}
	threads := map[string]bool{}
	for _, e := range h.fake.Ephemeral() {
		threads[e.ThreadTS] = true
	}
	if !threads[thread] || !threads[""] {
		t.Errorf("refusals in threads %v, want one in %q and one in the channel", threads, thread)
	}
	// Alice's next message runs after Mallory's, in the same thread.
	h.fake.Post(t, alice, general, thread, "still mine")
	h.waitReply(general, thread, "echo: still mine")
	if n := len(h.plugin.Turns()); n != 1 {
		t.Errorf("%d turns ran, want only Alice's", n)
	}
	if n := countParents(h); n != 1 {
		t.Errorf("%d thread parents, want 1: no thread for a refused user", n)
	}
}

func TestMentionStartsConversationInItsThread(t *testing.T) {
	t.Parallel()
	h := start(t, setup{before: func(f *slacktest.Server) { f.EchoBotMessages(true) }})
	m := h.fake.Post(t, alice, general, "", mention+" what is 2 &lt; 3?")
	replies := h.waitReply(general, m.TS, "echo: what is 2 &lt; 3?")
	if !strings.Contains(replies[0].Text, "conversation started") {
		t.Errorf("first reply = %q, want the start notice", replies[0].Text)
	}
	// A plain reply in the mention's thread continues the conversation.
	h.fake.Post(t, alice, general, m.TS, "and 3 > 2?")
	h.waitReply(general, m.TS, "echo: and 3 &gt; 2?")
	turns := h.plugin.WaitTurns(t, 2)
	if turns[0].Prompt != "what is 2 < 3?" || turns[1].SessionID != "session-1" {
		t.Errorf("turns = %+v, want the request unescaped, then a resumed turn", turns)
	}
	// Commands in a thread are mentions.
	h.fake.Post(t, alice, general, m.TS, mention+" status")
	h.waitReply(general, m.TS, "Session: session-1")
	h.fake.Post(t, bob, general, m.TS, mention+" conversation end")
	h.waitReply(general, m.TS, "Conversation ended.")
	if n := len(h.plugin.Turns()); n != 2 {
		t.Errorf("%d turns ran, want 2", n)
	}
}

func TestDirectMessagesAreOneConversation(t *testing.T) {
	t.Parallel()
	h := start(t, setup{})
	const dm = "DALICE"
	h.fake.SlashCommand(t, alice, dm, "/claude", "start")
	h.waitReply(dm, "", "conversation started")
	h.fake.Post(t, alice, dm, "", "hi")
	h.waitReply(dm, "", "echo: hi")
	turn := h.plugin.WaitTurns(t, 1)[0]
	if want := (core.ConversationKey{Platform: "slack", User: alice, Channel: dm}); turn.Key != want {
		t.Errorf("DM turn key = %+v, want %+v", turn.Key, want)
	}
	if n := countParents(h); n != 0 {
		t.Errorf("%d posts in #general, want none", n)
	}
}

func TestReconnectsAndAnswersPings(t *testing.T) {
	t.Parallel()
	h := start(t, setup{})
	h.fake.Ping(t)
	thread := h.startThread(alice, general)
	h.fake.Disconnect(t)
	if n := h.fake.Connections(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
	h.fake.Post(t, alice, general, thread, "after reconnect")
	h.waitReply(general, thread, "echo: after reconnect")
	h.fake.Drop(t)
	h.fake.Post(t, alice, general, thread, "after a drop")
	h.waitReply(general, thread, "echo: after a drop")
	h.fake.Ping(t)
}

// A message posted just as the socket drops is answered once: Slack (and
// its fake, RedeliverUnacked) sends an envelope never acknowledged again on
// the next connection, and the adapter drops the copy of one it handled.
func TestAMessageSentAsTheSocketDropsIsAnsweredOnce(t *testing.T) {
	t.Parallel()
	h := start(t, setup{before: func(f *slacktest.Server) { f.RedeliverUnacked(true) }})
	thread := h.startThread(alice, general)
	for i := range 5 {
		text := fmt.Sprintf("as it drops %d", i)
		h.fake.Post(t, alice, general, thread, text)
		h.fake.Drop(t)
		h.waitReply(general, thread, "echo: "+text)
		h.fake.Ping(t) // the redelivered copy, if any, was read before
		n := 0
		for _, m := range h.fake.Replies(general, thread) {
			if strings.Contains(m.Text, "echo: "+text) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%q answered %d times, want once", text, n)
		}
	}
}

func TestRunFailsOnRefusedTokens(t *testing.T) {
	t.Parallel()
	fake := slacktest.New(t)
	for _, tc := range []struct{ name, app, bot string }{
		{"bot token", slacktest.AppToken, "xoxb-wrong"},
		{"app token", "xapp-wrong", slacktest.BotToken},
	} {
		a, err := slack.New(slack.Config{AppToken: slack.Secret(tc.app), BotToken: slack.Secret(tc.bot), APIURL: fake.URL}, slack.Options{})
		if err != nil {
			t.Fatal(err)
		}
		err = a.Run(context.Background(), func(context.Context, core.Message) {})
		if err == nil || !strings.Contains(err.Error(), "invalid_auth") {
			t.Errorf("%s: Run = %v, want an invalid_auth error", tc.name, err)
		}
	}
	if _, err := slack.New(slack.Config{AppToken: "xoxb-swapped", BotToken: "xapp-swapped"}, slack.Options{}); err == nil {
		t.Error("New accepted swapped tokens")
	}
}

// A tool call is asked about with Block Kit buttons in the thread; only
// the turn's author (or an admin) can answer, a press by anyone else
// changes nothing, and the answered question keeps no buttons.
func TestApprovalButtons(t *testing.T) {
	t.Parallel()
	h := start(t, setup{})
	thread := h.startThread(alice, general)
	h.fake.Post(t, alice, general, thread, "live clean up")
	lt := h.plugin.Next(t)
	answers := make(chan core.Answer, 1)
	lt.Emit(t, core.Event{Kind: core.EventQuestion, Question: &core.Question{Tool: "Bash", Summary: "`rm -rf build`",
		Answer: func(a core.Answer) { answers <- a }}})
	var question slacktest.Message
	h.until("the question", func() bool {
		for _, m := range h.fake.Replies(general, thread) {
			if strings.Contains(m.Text, "Allow Bash?") {
				question = m
				return true
			}
		}
		return false
	})
	for _, want := range []string{`"action_id":"jakebot-choice-0"`, `"value":"/allow q1"`, `"text":"Always allow Bash"`, `"value":"/deny q1"`} {
		if !strings.Contains(question.Blocks, want) {
			t.Errorf("question blocks lack %s: %s", want, question.Blocks)
		}
	}
	h.fake.PressButton(t, bob, question, "jakebot-choice-0", "/allow q1")
	h.waitReply(general, thread, "Only the author of this turn (UALICE) or an admin can answer.")
	select {
	case a := <-answers:
		t.Fatalf("bob's press answered: %+v", a)
	default:
	}
	h.fake.PressButton(t, alice, question, "jakebot-choice-2", "/deny q1")
	h.waitReply(general, thread, "Denied Bash (UALICE)")
	if a := <-answers; a.Decision != core.Deny || a.By != alice {
		t.Errorf("answer %+v, want alice's denial", a)
	}
	h.until("the question settled", func() bool {
		m, _ := h.fake.Message(general, question.TS)
		return strings.Contains(m.Text, "→ Denied Bash") && !strings.Contains(m.Blocks, "actions")
	})
	lt.End(t, core.TurnResult{})
}

// A message sent while a turn runs waits with a Send now button. A
// stranger's press and another allowed user's are refused and change
// nothing; its author's interrupts the running turn, and the message runs
// next, ahead of the other user's queued before it.
func TestSendNowButton(t *testing.T) {
	t.Parallel()
	h := start(t, setup{})
	thread := h.startThread(alice, general)
	h.fake.Post(t, alice, general, thread, "live long job")
	lt := h.plugin.Next(t)
	h.fake.Post(t, bob, general, thread, "two")
	h.waitReply(general, thread, "Queued (1 waiting)")
	h.fake.Post(t, alice, general, thread, "three")
	var queued slacktest.Message
	for _, m := range h.waitReply(general, thread, "Queued (2 waiting)") {
		if strings.Contains(m.Text, "Queued (2 waiting)") {
			queued = m
		}
	}
	value := regexp.MustCompile(`"action_id":"(jakebot-choice-0)".*"value":"(/now [0-9a-f]+)"`).FindStringSubmatch(queued.Blocks)
	if value == nil || !strings.Contains(queued.Blocks, `"text":"Send now"`) {
		t.Fatalf("the queued message has no Send now button: %s", queued.Blocks)
	}
	action, now := value[1], value[2]

	h.fake.PressButton(t, mallory, queued, action, now)
	h.until("the stranger's refusal", func() bool { return len(h.fake.Ephemeral()) > 0 })
	if es := h.fake.Ephemeral(); len(es) != 1 || !strings.Contains(es[0].Text, "allow-list") {
		t.Errorf("after a stranger's press the ephemeral messages are %+v, want one refusal", es)
	}
	h.fake.PressButton(t, bob, queued, action, now)
	h.waitReply(general, thread, "only its author (UALICE) or an admin can send that message now")
	// The turn still runs, and nothing else did.
	lt.Emit(t, core.TextEvent("still working"))
	if turns := h.plugin.Turns(); len(turns) != 1 {
		t.Fatalf("after refused presses %d turns ran, want the running one", len(turns))
	}

	h.fake.PressButton(t, alice, queued, action, now)
	h.waitReply(general, thread, "your message runs next")
	h.waitReply(general, thread, "Interrupted for the message sent now")
	h.waitReply(general, thread, "echo: two")
	var prompts []string
	for _, turn := range h.plugin.Turns() {
		prompts = append(prompts, turn.Prompt)
	}
	if got := strings.Join(prompts, ", "); got != "live long job, three, two" {
		t.Errorf("turns ran in the order %s, want the one sent now next", got)
	}
}

// A turn that ran long ends with a reply in its thread that @mentions
// its author: edits and unfollowed thread replies notify nobody.
func TestLongTurnPingsItsAuthor(t *testing.T) {
	t.Parallel()
	h := start(t, setup{})
	m := h.fake.Post(t, alice, general, "", mention+" live and slow")
	lt := h.plugin.Next(t)
	lt.Emit(t, core.TextEvent("all done"))
	lt.End(t, core.TurnResult{Duration: 5 * time.Minute})
	replies := h.waitReply(general, m.TS, "finished your turn after 5m0s")
	last := replies[len(replies)-1].Text
	if !strings.HasPrefix(last, "<@"+alice+"> ✅ Claude Code finished your turn") {
		t.Errorf("ping = %q, want it to mention the author", last)
	}
}

// TestStrangerIsRefusedOncePerPlace: every line a stranger writes in a
// thread would otherwise cost the bot an ephemeral post (and its rate
// limit): they are told once per place.
func TestStrangerIsRefusedOncePerPlace(t *testing.T) {
	t.Parallel()
	h := start(t, setup{})
	thread := h.startThread(alice, general)
	for _, text := range []string{"one", "two", "three"} {
		h.fake.Post(t, mallory, general, thread, text)
	}
	// The thread's messages reach the router in order: once Alice's
	// is answered, Mallory's were handled.
	h.fake.Post(t, alice, general, thread, "after them")
	h.waitReply(general, thread, "echo: after them")
	if es := h.fake.Ephemeral(); len(es) != 1 || es[0].ThreadTS != thread {
		t.Errorf("ephemeral messages = %+v, want one refusal in the thread", es)
	}
}

// Under BUSY=queue, a message sent while a turn that can take one runs
// waits with Steer and Send now: its author's Steer puts it into the
// running turn, and Send now still interrupts it for the other (issue 29).
func TestQueuedMessageSteerAndSendNow(t *testing.T) {
	t.Parallel()
	h := start(t, setup{steerable: true, router: func(rc *core.RouterConfig) { rc.Busy = core.BusyQueue }})
	thread := h.startThread(alice, general)
	h.fake.Post(t, alice, general, thread, "live long job")
	running := h.plugin.Next(t)
	buttons := regexp.MustCompile(`"text":"Steer",.*?"action_id":"(jakebot-choice-\d)","value":"(/steer [0-9a-f]+)".*"text":"Send now",.*?"action_id":"(jakebot-choice-\d)","value":"(/now [0-9a-f]+)"`)
	queued := map[string]slacktest.Message{}
	pressed := map[string][]string{}
	for i, text := range []string{"two", "three"} {
		h.fake.Post(t, alice, general, thread, text)
		want := "Queued (" + strconv.Itoa(i+1) + " waiting)"
		for _, m := range h.waitReply(general, thread, want) {
			if strings.Contains(m.Text, want) {
				queued[text] = m
			}
		}
		if pressed[text] = buttons.FindStringSubmatch(queued[text].Blocks); pressed[text] == nil {
			t.Fatalf("the queued message has no Steer and Send now buttons: %s", queued[text].Blocks)
		}
	}

	h.fake.PressButton(t, alice, queued["two"], pressed["two"][1], pressed["two"][2])
	if s := running.Steered(t); s.Prompt != "two" {
		t.Errorf("the running turn took %q, want two", s.Prompt)
	}
	h.waitReply(general, thread, "↪ Added to the running turn")

	h.fake.PressButton(t, alice, queued["three"], pressed["three"][3], pressed["three"][4])
	h.waitReply(general, thread, "Interrupted for the message sent now")
	h.waitReply(general, thread, "echo: three")
}
