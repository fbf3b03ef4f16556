package telegram

import (
	"errors"
	"net/url"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
	"github.com/jake-bot/jake-bot/core"
)

// apiError returns the Bot API's answer in err, if err is one.
func apiError(err error) (*tgbotapi.Error, bool) {
	var e *tgbotapi.Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// descriptionHas reports whether err is a Bot API error whose description
// contains s. Telegram tells errors apart only by their wording.
func descriptionHas(err error, s string) bool {
	e, ok := apiError(err)
	return ok && strings.Contains(strings.ToLower(e.Message), s)
}

func isNotModified(err error) bool { return descriptionHas(err, "message is not modified") }

func isParseError(err error) bool { return descriptionHas(err, "can't parse entities") }

func isTooLong(err error) bool { return descriptionHas(err, "message is too long") }

// retryAfter returns how long flood control asks the bot to wait.
func retryAfter(err error) (time.Duration, bool) {
	e, ok := apiError(err)
	if !ok || (e.Code != 429 && e.RetryAfter == 0) {
		return 0, false
	}
	return time.Duration(max(e.RetryAfter, 1)) * time.Second, true
}

// redactedError is an error whose text has the bot token removed. It
// unwraps to the original so the Bot API's answer can still be inspected.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redact removes the token from err. The library puts the token in every
// request URL, and transport errors (*url.Error) repeat the URL, so every
// error from the library passes through here before it is returned or
// logged.
func redact(err error, token string) error {
	if err == nil || token == "" {
		return err
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = scrub(ue.URL, token)
	}
	return &redactedError{msg: scrub(err.Error(), token), err: err}
}

func scrub(s, token string) string {
	s = strings.ReplaceAll(s, token, core.Redacted)
	return strings.ReplaceAll(s, url.PathEscape(token), core.Redacted)
}
