package telegramtest

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

func TestParseHTML(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"plain", "plain", true},
		{"<b>bold</b> &amp; <i>it</i> &lt;x&gt; &#128512; &quot;", `bold & it <x> 😀 "`, true},
		{`<pre><code class="language-go">a &lt; b</code></pre>`, "a < b", true},
		{`<a href="https://x.dev/?a=1&amp;b=2">x</a>`, "x", true},
		{"<b>open", "", false},
		{"<b><i>x</b></i>", "", false},
		{"<div>x</div>", "", false},
		{"a < b", "", false},
		{"a > b", "", false},
		{"fish & chips", "", false},
		{`<b class="x">x</b>`, "", false},
		{"<code><b>x</b></code>", "", false},
	}
	for _, tt := range tests {
		got, err := ParseHTML(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseHTML(%q) = %q, %v; want %q, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// TestServerUpdates drives the fake with the real client: an
// offset confirms earlier updates, and a long poll returns when an update
// is queued.
func TestServerUpdates(t *testing.T) {
	t.Parallel()
	s := New(t)
	bot, err := tgbotapi.NewBotAPIWithAPIEndpoint(Token, s.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	if bot.Self.UserName != BotName {
		t.Errorf("getMe username = %q", bot.Self.UserName)
	}
	u := User{ID: 7, FirstName: "U"}
	first := s.UserSays(u.Private(), u, 0, "one")
	s.UserSays(u.Private(), u, 0, "two")
	ups, err := bot.GetUpdates(tgbotapi.UpdateConfig{})
	if err != nil || len(ups) != 2 || ups[0].UpdateID != first || ups[1].Message.Text != "two" {
		t.Fatalf("GetUpdates = %v, %v; want both updates", ups, err)
	}
	ups, err = bot.GetUpdates(tgbotapi.UpdateConfig{Offset: first + 1})
	if err != nil || len(ups) != 1 || s.Confirmed() != first {
		t.Fatalf("with offset %d: %d updates, confirmed %d, err %v", first+1, len(ups), s.Confirmed(), err)
	}
	done := make(chan []tgbotapi.Update)
	go func() {
		ups, _ := bot.GetUpdates(tgbotapi.UpdateConfig{Offset: first + 2, Timeout: 60})
		done <- ups
	}()
	s.WaitFor(t, "the long poll", func() bool { return len(s.Calls("getUpdates")) == 3 })
	s.UserSays(u.Private(), u, 0, "three")
	if ups := <-done; len(ups) != 1 || ups[0].Message.Text != "three" {
		t.Fatalf("long poll returned %v, want the queued update", ups)
	}
	if _, err := bot.Send(tgbotapi.NewMessage(u.ID, "<b>broken")); err != nil {
		t.Fatalf("plain text was refused: %v", err)
	}
	m := tgbotapi.NewMessage(u.ID, "<b>broken")
	m.ParseMode = tgbotapi.ModeHTML
	if _, err := bot.Send(m); err == nil {
		t.Error("invalid HTML was accepted")
	}
}

// TestReplies drives the fake's replies with the real client: a reply to
// a user's message is recorded; to a deleted one it is refused, unless
// allow_sending_without_reply makes it a plain message.
func TestReplies(t *testing.T) {
	t.Parallel()
	s := New(t)
	bot, err := tgbotapi.NewBotAPIWithAPIEndpoint(Token, s.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	u := User{ID: 7, FirstName: "U"}
	s.UserSays(u.Private(), u, 0, "hello")
	said := s.LastUserMessage(u.ID)
	s.UserSays(u.Private(), u, 0, "gone soon")
	gone := s.LastUserMessage(u.ID)
	s.UserDeletes(u.ID, gone)
	tests := []struct {
		to        int
		allow, ok bool
		want      int
	}{
		{said, false, true, said},
		{gone, false, false, 0},
		{gone, true, true, 0},
	}
	for _, tt := range tests {
		m := tgbotapi.NewMessage(u.ID, "reply")
		m.ReplyToMessageID, m.AllowSendingWithoutReply = tt.to, tt.allow
		sent, err := bot.Send(m)
		if (err == nil) != tt.ok {
			t.Errorf("reply to %d (allow %v): err %v, want ok=%v", tt.to, tt.allow, err, tt.ok)
			continue
		}
		got := 0
		if sent.ReplyToMessage != nil {
			got = sent.ReplyToMessage.MessageID
		}
		if ms := s.Messages(u.ID); tt.ok && (got != tt.want || ms[len(ms)-1].ReplyTo != tt.want) {
			t.Errorf("reply to %d (allow %v) replies to %d (kept %d), want %d", tt.to, tt.allow, got, ms[len(ms)-1].ReplyTo, tt.want)
		}
	}
}

// Two bots polling one token at once: the later getUpdates ends the held
// one with 409 Conflict, as the real Bot API does, and the fake records
// the conflict.
func TestTwoPollersConflict(t *testing.T) {
	s := New(t)
	poll := func() (*http.Response, error) {
		return http.PostForm(fmt.Sprintf(s.Endpoint(), Token, "getUpdates"), url.Values{"timeout": {"30"}})
	}
	first := make(chan *http.Response, 1)
	go func() {
		resp, err := poll()
		if err != nil {
			t.Error(err)
		}
		first <- resp
	}()
	s.WaitFor(t, "the first poll", func() bool { return len(s.Calls("getUpdates")) == 1 })
	second := make(chan *http.Response, 1)
	go func() {
		resp, _ := poll()
		second <- resp
	}()
	resp := <-first
	if resp == nil || resp.StatusCode != http.StatusConflict {
		t.Fatalf("the held poll got %v, want 409 Conflict", resp)
	}
	resp.Body.Close()
	if n := len(s.Conflicts()); n != 1 {
		t.Errorf("Conflicts() has %d calls, want 1", n)
	}
	s.UserSays(Chat{ID: 1, Type: "private"}, User{ID: 2, FirstName: "Bob"}, 0, "hi") // ends the second poll
	if resp := <-second; resp == nil || resp.StatusCode != http.StatusOK {
		t.Errorf("the second poll got %v, want 200", resp)
	} else {
		resp.Body.Close()
	}
}

// A bot polling again once it has its answer is no conflict.
func TestPollingInTurnIsNoConflict(t *testing.T) {
	s := New(t)
	for range 3 {
		resp, err := http.PostForm(fmt.Sprintf(s.Endpoint(), Token, "getUpdates"), url.Values{})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if c := s.Conflicts(); len(c) != 0 {
		t.Errorf("Conflicts() = %v, want none", c)
	}
}

// A stalled call times out for the real client, the fake does not act on
// it, and the next call goes through.
func TestStallNext(t *testing.T) {
	t.Parallel()
	s := New(t)
	bot, err := tgbotapi.NewBotAPIWithAPIEndpoint(Token, s.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	u := User{ID: 7, FirstName: "U"}
	s.UserSays(u.Private(), u, 0, "hi")
	s.StallNext("sendMessage", 50*time.Millisecond)
	if _, err := bot.Send(tgbotapi.NewMessage(u.ID, "stalled")); err == nil {
		t.Fatal("a stalled sendMessage succeeded")
	}
	if _, err := bot.Send(tgbotapi.NewMessage(u.ID, "sent")); err != nil {
		t.Fatalf("the next sendMessage: %v", err)
	}
	if ms := s.Messages(u.ID); len(ms) != 1 || ms[0].Text != "sent" {
		t.Errorf("messages = %+v, want only the second", ms)
	}
	if calls := s.Calls("sendMessage"); len(calls) != 2 || calls[0].Error != "stalled" {
		t.Errorf("calls = %+v, want the stalled one recorded", calls)
	}
}
