package telegram

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/lanes"
)

// Run registers the command menu, then receives updates until ctx ends:
// by long polling, or through the webhook when one is configured. It
// returns nil when ctx ends, after the messages already received have been
// handed to h.
func (a *Adapter) Run(ctx context.Context, h core.Handler) error {
	if err := a.call(func() error {
		_, err := a.api.Request(tgbotapi.NewSetMyCommands(a.commands...))
		return err
	}); err != nil {
		a.logger.Warn("register commands", "err", err)
	}
	d := &conversationLanes{h: h}
	if a.cfg.WebhookURL != "" {
		defer d.wait()
		return a.runWebhook(ctx, d)
	}
	c := newConfirmations()
	a.poll(ctx, d, c)
	d.wait() // the updates handed on settle
	a.confirm(c.offset())
	return nil
}

// poll long-polls getUpdates until ctx ends. Telegram keeps every update
// until a getUpdates call with a higher offset confirms it, so the loop
// asks for the offset c allows: an update is confirmed only once the
// router has taken (recorded) or refused it, or it was dropped here, and
// after a crash the unconfirmed ones are delivered again. Run's last call
// confirms what was settled, so a clean restart neither repeats nor skips
// anything.
func (a *Adapter) poll(ctx context.Context, d *conversationLanes, c *confirmations) {
	// getUpdates is refused while a webhook is set; pending updates stay.
	if err := a.call(func() error {
		_, err := a.api.Request(tgbotapi.DeleteWebhookConfig{})
		return err
	}); err != nil {
		a.logger.Warn("delete webhook", "err", err)
	}
	a.logger.Info("polling for updates")
	// New's getMe reached the Bot API; a long poll may now wait a while
	// before it answers, so healthy until a poll fails.
	a.Set(nil)
	failures := 0
	timeout := max(int(a.cfg.PollTimeout/time.Second), 1)
	for ctx.Err() == nil {
		var ups []update
		err := a.call(func() (err error) {
			a.client.setPollContext(ctx)
			ups, err = a.getUpdates(c.offset(), 100, timeout)
			return err
		})
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			failures++
			a.logger.Warn("get updates", "err", err, "failures", failures)
			a.Set(fmt.Errorf("getUpdates failed %d times in a row", failures))
			a.sleep(ctx, backoff(failures, err))
			continue
		}
		failures = 0
		a.Set(nil)
		for _, u := range ups {
			if settle, isNew := c.hand(u.UpdateID); isNew {
				a.handleUpdate(ctx, u, d, settle)
			}
		}
		c.wait(ctx, a.clock, openWhilePolling)
	}
}

// confirm tells Telegram every update before offset has been handled. The
// update it may return is not confirmed and comes again after a restart.
func (a *Adapter) confirm(offset int) {
	if offset == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := a.call(func() error {
		a.client.setPollContext(ctx)
		_, err := a.getUpdates(offset, 1, 0)
		return err
	})
	if err != nil {
		a.logger.Warn("confirm handled updates", "offset", offset, "err", err)
	}
}

// backoff is the wait after failed polls: what flood control asks, or
// doubling from one second up to a minute.
func backoff(failures int, err error) time.Duration {
	if d, ok := retryAfter(err); ok {
		return d
	}
	return min(time.Second<<min(failures-1, 6), time.Minute)
}

func (a *Adapter) sleep(ctx context.Context, d time.Duration) { core.Sleep(ctx, a.clock, d) }

// pollClient gives long polls a context. The library builds its requests
// without one, and shutdown should not wait out a long poll, so getUpdates
// requests get the poll loop's context; every other request is sent as it
// is (replies are still delivered while the bot shuts down).
type pollClient struct {
	base *http.Client
	mu   sync.Mutex
	ctx  context.Context
}

func (c *pollClient) setPollContext(ctx context.Context) {
	c.mu.Lock()
	c.ctx = ctx
	c.mu.Unlock()
}

func (c *pollClient) Do(req *http.Request) (*http.Response, error) {
	if strings.HasSuffix(req.URL.Path, "/getUpdates") {
		c.mu.Lock()
		ctx := c.ctx
		c.mu.Unlock()
		if ctx != nil {
			req = req.WithContext(ctx)
		}
	}
	return c.base.Do(req)
}

// runWebhook registers the webhook and serves it until ctx ends.
// Telegram repeats a delivery until it is answered 200, which happens once
// the update has settled as a polled one does (confirmations); repeats are
// dropped by update id.
func (a *Adapter) runWebhook(ctx context.Context, d *conversationLanes) error {
	ps := tgbotapi.Params{"url": a.cfg.WebhookURL, "secret_token": a.secret, "allowed_updates": `["message","callback_query"]`}
	if err := a.call(func() error {
		_, err := a.api.MakeRequest("setWebhook", ps)
		return err
	}); err != nil {
		return err
	}
	ln := a.listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", a.cfg.WebhookListen); err != nil {
			return err
		}
	}
	srv := &http.Server{Handler: a.webhookHandler(ctx, d), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	a.logger.Info("serving webhook", "addr", ln.Addr().String())
	a.Set(nil)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		a.logger.Warn("webhook shutdown", "err", err)
	}
	return nil
}

func (a *Adapter) webhookHandler(ctx context.Context, d *conversationLanes) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("X-Telegram-Bot-Api-Secret-Token")
		if r.Method != http.MethodPost || subtle.ConstantTimeCompare([]byte(got), []byte(a.secret)) != 1 {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		u, err := decodeUpdate(body)
		if err != nil {
			a.logger.Warn("webhook: bad update", "err", err)
			w.WriteHeader(http.StatusOK) // a malformed update would only come again
			return
		}
		settled := make(chan struct{})
		if !a.handleUpdate(ctx, u, d, sync.OnceFunc(func() { close(settled) })) {
			http.Error(w, "shutting down", http.StatusServiceUnavailable) // Telegram delivers it again
			return
		}
		select {
		case <-settled:
			w.WriteHeader(http.StatusOK)
		case <-r.Context().Done(): // Telegram gave up; it delivers the update again
		}
	})
}

// conversationLanes calls the handler for each conversation in order, and for
// different conversations in parallel: the router answers a command
// before it returns, and one slow chat must not hold up the others.
type conversationLanes struct {
	h     core.Handler
	lanes lanes.PerKey[core.ConversationKey]
}

// inOrder queues f behind k's earlier work. It reports false, and drops
// f, once the lanes are closed (the adapter is stopping).
func (d *conversationLanes) inOrder(k core.ConversationKey, f func()) bool { return d.lanes.Do(k, f) }

// wait refuses further calls and blocks until every queued one has run.
func (d *conversationLanes) wait() { d.lanes.Close() }
