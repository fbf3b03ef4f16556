package telegram

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	env "github.com/caarlos0/env/v11"
	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/telegram/telegramtest"
)

// TestRestartConfirmsOffsets stops the adapter after it handled an update
// and starts another: the update was confirmed on the way out, so the new
// adapter neither handles it again nor misses the next one.
func TestRestartConfirmsOffsets(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	dm := alice.Private()
	id := h.srv.UserSays(dm, alice, 0, "/help")
	h.until("the help", func() bool { return strings.Contains(h.last(dm.ID), "Commands:") })
	h.stop()
	if got := h.srv.Confirmed(); got != id {
		t.Fatalf("after a clean stop Telegram has confirmed update %d, want %d", got, id)
	}

	bot, err := New(Config{Token: telegramtest.Token, AllowedUsers: UserIDs{alice.ID}, APIEndpoint: h.srv.Endpoint()}, Options{Clock: h.clock})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- bot.Run(ctx, h.router.Attach(bot)) }()
	defer func() { cancel(); <-done }()
	h.srv.UserSays(dm, alice, 0, "/status")
	h.until("the status", func() bool { return strings.Contains(h.last(dm.ID), "No conversation here yet") })
	if n := len(h.srv.Messages(dm.ID)); n != 2 {
		t.Errorf("bot posted %d messages, want 2 (/help once, /status once)", n)
	}
}

// TestTelegramRefusals covers Telegram's refusals the adapter handles:
// entities it cannot parse and a message too long are sent again as plain
// text; "message is not modified" counts as success.
func TestTelegramRefusals(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	dm := alice.Private()
	h.srv.FailNext("sendMessage", telegramtest.Failure{Code: 400, Description: "Bad Request: can't parse entities: Unsupported start tag \"foo\" at byte offset 3"})
	h.says(dm, alice, 0, "/claude start")
	first := h.srv.Messages(dm.ID)[0]
	if first.ParseMode != "" || !strings.Contains(first.Text, "conversation started") {
		t.Errorf("after can't parse entities the message is %+v, want it resent as plain text", first)
	}

	h.srv.UserSays(dm, alice, 0, "go")
	tr := h.nextTurn()
	tr.say("a <b> & c. ")
	h.until("the first text", func() bool { return strings.Contains(h.last(dm.ID), "a <b> & c.") })
	h.srv.FailNext("editMessageText", telegramtest.Failure{Code: 400, Description: "Bad Request: message is not modified: specified new message content and reply markup are exactly the same"})
	tr.say("more. ")
	h.until("the refused edit", func() bool { return len(h.srv.Calls("editMessageText")) == 1 })
	h.srv.FailNext("editMessageText", telegramtest.Failure{Code: 400, Description: "Bad Request: message is too long"})
	tr.say("last.")
	tr.end()
	h.until("the footer", func() bool { return strings.Contains(h.last(dm.ID), "2.0s") })
	msgs := h.srv.Messages(dm.ID)
	if len(msgs) != 2 {
		t.Errorf("bot posted %d messages, want 2: a refused edit must not become a new message", len(msgs))
	}
	if got := plain(t, msgs[1]); !strings.HasPrefix(got, "a <b> & c. more. last.") {
		t.Errorf("final reply = %q", got)
	}
}

// newWebhookHarness runs the adapter in webhook mode on a port of its
// own, once it has registered the webhook, and returns the hook's URL.
func newWebhookHarness(t *testing.T) (*harness, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(c *Config, o *Options) {
		c.WebhookURL = "https://bot.example.org/telegram"
		o.Listener = ln
	})
	h.until("setWebhook", func() bool { return len(h.srv.Calls("setWebhook")) == 1 })
	return h, "http://" + ln.Addr().String() + "/"
}

// TestWebhook registers the webhook with a secret and handles pushed
// updates; a request without the secret is refused.
func TestWebhook(t *testing.T) {
	t.Parallel()
	h, hook := newWebhookHarness(t)
	set := h.srv.Calls("setWebhook")[0].Params
	if set.Get("url") != "https://bot.example.org/telegram" || len(set.Get("secret_token")) < 32 {
		t.Errorf("setWebhook params = %v", set)
	}
	resp, err := http.Post(hook, "application/json", strings.NewReader(`{"update_id":1}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a post without the secret got %d, want 403", resp.StatusCode)
	}
	dm := alice.Private()
	h.srv.UserSays(dm, alice, 0, "/help")
	if st, err := h.srv.PushUpdates(hook); err != nil || len(st) != 1 || st[0] != 200 {
		t.Fatalf("PushUpdates = %v, %v", st, err)
	}
	h.until("the help", func() bool { return strings.Contains(h.last(dm.ID), "Commands:") })
	if n := len(h.srv.Calls("getUpdates")); n != 0 {
		t.Errorf("%d getUpdates calls in webhook mode", n)
	}
}

// TestWebhookRepeatWaitsForTheFirst: a delivery Telegram repeats (the
// first one's answer was late) while the first is still being handled is
// answered 200 only once the first settled. A 200 confirms the update: one
// still on its way to the router would be lost with the gateway.
func TestWebhookRepeatWaitsForTheFirst(t *testing.T) {
	t.Parallel()
	h, hook := newWebhookHarness(t)
	dm := alice.Private()
	// The router answers /help before its handler returns: held there,
	// the update is not settled.
	held := h.srv.HoldNext(t, "sendMessage")
	h.srv.UserSays(dm, alice, 0, "/help")
	push := func() <-chan []int {
		ch := make(chan []int, 1)
		go func() {
			st, err := h.srv.PushUpdates(hook)
			if err != nil {
				t.Errorf("PushUpdates: %v", err)
			}
			ch <- st
		}()
		return ch
	}
	first := push()
	<-held.Arrived()
	second := push()
	if !h.logs.waitFor("a delivery Telegram repeated waits for the first to settle") {
		select {
		case st := <-second:
			t.Fatalf("the repeated delivery was answered %v while the first was being handled", st)
		default:
			t.Fatal("the repeated delivery was neither answered nor held")
		}
	}
	select {
	case st := <-second:
		t.Fatalf("the repeated delivery was answered %v while the first was being handled", st)
	default:
	}
	held.Release()
	for _, ch := range []<-chan []int{first, second} {
		if st := <-ch; !slices.Equal(st, []int{200}) {
			t.Errorf("deliveries answered %v, want [200]", st)
		}
	}
	h.until("the help", func() bool { return strings.Contains(h.last(dm.ID), "Commands:") })
	if n := h.writes(dm.ID); n != 1 {
		t.Errorf("%d messages in the chat, want the help once", n)
	}
}

// TestTokenNeverInErrors points the adapter at a closed port: the
// transport error names the URL, which must not carry the token.
func TestTokenNeverInErrors(t *testing.T) {
	t.Parallel()
	_, err := New(Config{Token: telegramtest.Token, APIEndpoint: "http://127.0.0.1:1/bot%s/%s"}, Options{})
	if err == nil || strings.Contains(err.Error(), telegramtest.Token) || !strings.Contains(err.Error(), core.Redacted) {
		t.Errorf("New against a closed port = %v, want an error with the token redacted", err)
	}
	var ue *url.Error
	if !errors.As(err, &ue) || strings.Contains(ue.URL, telegramtest.Token) {
		t.Errorf("the wrapped url.Error still carries the token: %v", ue)
	}
	if s := fmtAll(Config{Token: "123:secret"}); strings.Contains(s, "secret") {
		t.Errorf("the token prints:\n%s", s)
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	const tok = "42:abc-DEF"
	apiErr := &tgbotapi.Error{Code: 429, Message: "Too Many Requests: retry after 3", ResponseParameters: tgbotapi.ResponseParameters{RetryAfter: 3}}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"url error", &url.Error{Op: "Post", URL: "https://api.telegram.org/bot" + tok + "/getMe", Err: errors.New("refused")}, `Post "https://api.telegram.org/bot[REDACTED]/getMe": refused`},
		{"api error", apiErr, "Too Many Requests: retry after 3"},
		{"nil", nil, ""},
	}
	for _, tt := range tests {
		got := redact(tt.err, tok)
		if (got == nil) != (tt.err == nil) || (got != nil && got.Error() != tt.want) {
			t.Errorf("%s: redact(%v) = %v, want %q", tt.name, tt.err, got, tt.want)
		}
	}
	if d, ok := retryAfter(redact(apiErr, tok)); !ok || d != 3*time.Second {
		t.Errorf("retryAfter through redact = %v, %v; want 3s", d, ok)
	}
}

func TestConfigFromEnv(t *testing.T) {
	t.Setenv("TELEGRAM_TOKEN", "123:abc")
	t.Setenv("TELEGRAM_ALLOWED_USERS", "1001, 1002")
	t.Setenv("TELEGRAM_ADMIN_USERS", "1001")
	cfg, err := env.ParseAs[Config]()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Token != "123:abc" || len(cfg.AllowedUsers) != 2 || cfg.AllowedUsers[1] != 1002 || cfg.EditInterval != time.Second || cfg.GroupWritesPerMinute != 20 || cfg.APIEndpoint != tgbotapi.APIEndpoint {
		t.Errorf("config = %+v", cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Error(err)
	}
	access := core.NewAccess()
	cfg.Grant(access)
	if !access.Allowed("telegram", "1002") || !access.IsAdmin("telegram", "1001") || access.Allowed("telegram", "7") {
		t.Error("Grant did not fill the access policy")
	}
	t.Setenv("TELEGRAM_ALLOWED_USERS", "alice")
	if _, err := env.ParseAs[Config](); err == nil || !strings.Contains(err.Error(), "not a number") {
		t.Errorf("a non-numeric user id parsed: %v", err)
	}
}

func TestAddressed(t *testing.T) {
	t.Parallel()
	a := &Adapter{self: "jakebot"}
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"/help", "/help", true},
		{"/claude@JakeBot start ~/src", "/claude start ~/src", true},
		{"/claude@otherbot start", "", false},
		{"@jakebot fix the tests", "fix the tests", true},
		{"@someone else", "@someone else", true},
		{"  plain text ", "plain text", true},
	}
	for _, tt := range tests {
		got, ok := a.addressed(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("addressed(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestChoiceData(t *testing.T) {
	t.Parallel()
	c := newChoices()
	short := "/claude resume 0b7c6a52-1f3e-4b8e-9a7d-2c1d5e6f7a8b"
	if d := c.data(short); d != short {
		t.Errorf("data(%q) = %q, want the command itself", short, d)
	}
	long := "/gemini resume " + strings.Repeat("x", 80)
	d := c.data(long)
	if len(d) > maxCallbackData {
		t.Errorf("data of a long command is %d bytes", len(d))
	}
	if got, ok := c.command(d); !ok || got != long {
		t.Errorf("command(%q) = %q, %v", d, got, ok)
	}
	if _, ok := c.command("c:999"); ok {
		t.Error("an unknown token resolved")
	}
}

// fmtAll prints v the ways a careless log line might.
func fmtAll(v any) string {
	var b strings.Builder
	for _, f := range []string{"%v", "%+v", "%#v", "%s"} {
		b.WriteString(fmt.Sprintf(f, v) + "\n")
	}
	slog.New(slog.NewJSONHandler(&b, nil)).Info("config", "cfg", v)
	return b.String()
}
