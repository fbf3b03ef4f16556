package slack

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/jake-bot/jake-bot/core"
)

// webAPI is the part of Slack's Web API the adapter calls.
type webAPI interface {
	AuthTestContext(ctx context.Context) (*slack.AuthTestResponse, error)
	PostMessageContext(ctx context.Context, channel string, opts ...slack.MsgOption) (string, string, error)
	UpdateMessageContext(ctx context.Context, channel, ts string, opts ...slack.MsgOption) (string, string, string, error)
	PostEphemeralContext(ctx context.Context, channel, user string, opts ...slack.MsgOption) (string, error)
	AddReactionContext(ctx context.Context, name string, item slack.ItemRef) error
	RemoveReactionContext(ctx context.Context, name string, item slack.ItemRef) error
	GetFileContext(ctx context.Context, downloadURL string, w io.Writer) error
	UploadFileContext(ctx context.Context, params slack.UploadFileParameters) (*slack.FileSummary, error)
}

// socket is the Socket Mode connection.
type socket interface {
	// RunContext connects and reconnects until ctx ends or the tokens are
	// refused.
	RunContext(ctx context.Context) error
	Ack(req socketmode.Request, payload ...any) error
	Events() <-chan socketmode.Event
}

// client is slack-go's Socket Mode client, which embeds the Web API client.
type client struct{ *socketmode.Client }

func (c client) Events() <-chan socketmode.Event { return c.Client.Events }

func newClient(cfg Config, logger *slog.Logger) client {
	log := slogOutput{logger}
	api := slack.New(string(cfg.BotToken),
		slack.OptionAppLevelToken(string(cfg.AppToken)),
		slack.OptionAPIURL(cfg.APIURL),
		slack.OptionLog(log))
	return client{socketmode.New(api, socketmode.OptionLog(log))}
}

// slogOutput lets slack-go's logger write to slog, at debug level: the
// adapter logs what matters itself.
type slogOutput struct{ l *slog.Logger }

func (o slogOutput) Output(_ int, s string) error {
	o.l.Debug(strings.TrimSpace(s), "source", "slack-go")
	return nil
}

// Slack error codes the adapter acts on.
const (
	errTooLong        = "msg_too_long"
	errAlreadyReacted = "already_reacted"
	errNoReaction     = "no_reaction"
)

// slackError returns Slack's error code for err, or "".
func slackError(err error) string {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		return se.Err
	}
	return ""
}

// translate turns a 429 into core.RateLimitError, which the coordinator
// waits out, and names the call in any other error.
func translate(call string, err error) error {
	return core.APIError("slack "+call, err, func(rl *slack.RateLimitedError) time.Duration { return rl.RetryAfter })
}
