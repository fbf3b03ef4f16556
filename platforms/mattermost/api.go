package mattermost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/jake-bot/jake-bot/core"
)

// client speaks the REST API v4 with the bot's token in the Authorization
// header (never in a URL, so no error carries it). Every call passes the
// gate first. It is safe for concurrent use.
type client struct {
	base  string // the server's URL, without a trailing slash
	token string
	http  *http.Client
	gate  *gate
}

// apiError is the server's answer to a call that failed: its status and,
// for Mattermost's JSON errors, its id and message.
type apiError struct {
	Status  int
	ID      string `json:"id"`
	Message string `json:"message"`
	op      string
}

func (e *apiError) Error() string {
	if e.Message != "" {
		return fmt.Sprintf("%s: %d %s (%s)", e.op, e.Status, e.Message, e.ID)
	}
	return fmt.Sprintf("%s: %d %s", e.op, e.Status, http.StatusText(e.Status))
}

// statusOf returns the HTTP status of a failed call, or 0.
func statusOf(err error) int {
	var e *apiError
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// errHeldBack is the error of a write the gate held back.
var errHeldBack = errors.New("held back until the server's rate limit resets")

// call sends one JSON request to path (under /api/v4) and decodes the
// answer into out when it is not nil. A 429, or a call the gate holds
// back, is a *core.RateLimitError.
func (c *client) call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	return c.send(ctx, method, path, "application/json", body, out)
}

// upload posts a multipart form of fields and one file under the form
// name "files".
func (c *client) upload(ctx context.Context, path string, fields map[string]string, name string, data []byte, out any) error {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for k, v := range fields {
		if err := w.WriteField(k, v); err != nil {
			return err
		}
	}
	part, err := w.CreateFormFile("files", name)
	if err != nil {
		return err
	}
	if _, err := part.Write(data); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return c.send(ctx, http.MethodPost, path, w.FormDataContentType(), &b, out)
}

func (c *client) send(ctx context.Context, method, path, contentType string, body io.Reader, out any) error {
	op := method + " " + path
	if d := c.gate.blocked(); d > 0 {
		return &core.RateLimitError{RetryAfter: d, Err: fmt.Errorf("%s: %w", op, errHeldBack)}
	}
	resp, err := c.open(ctx, method, path, contentType, body)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer resp.Body.Close()
	c.gate.observe(resp)
	if resp.StatusCode/100 != 2 {
		return c.failure(op, resp)
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		return nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(out); err != nil {
		return fmt.Errorf("%s: decode the answer: %w", op, err)
	}
	return nil
}

// open makes one request and returns the response whatever its status.
func (c *client) open(ctx context.Context, method, path, contentType string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+"/api/v4"+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if contentType != "" && body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	// Mattermost checks this header to tell a script from a browser's
	// request without its CSRF token.
	req.Header.Set("X-Requested-With", "XMLHttpRequest")
	return c.http.Do(req)
}

// failure reads a failed call's answer: a 429 is a *core.RateLimitError
// after the wait the gate now holds.
func (c *client) failure(op string, resp *http.Response) error {
	e := &apiError{Status: resp.StatusCode, op: op}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	_ = json.Unmarshal(b, e)
	if resp.StatusCode == http.StatusTooManyRequests {
		return &core.RateLimitError{RetryAfter: max(c.gate.blocked(), time.Second), Err: e}
	}
	return e
}

// download GETs path and returns its body, for a file.
func (c *client) download(ctx context.Context, path string) (io.ReadCloser, error) {
	op := "GET " + path
	if d := c.gate.blocked(); d > 0 {
		return nil, &core.RateLimitError{RetryAfter: d, Err: fmt.Errorf("%s: %w", op, errHeldBack)}
	}
	resp, err := c.open(ctx, http.MethodGet, path, "", nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	c.gate.observe(resp)
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		return nil, c.failure(op, resp)
	}
	return resp.Body, nil
}

// gate holds back every call while the server's rate limit is spent: the
// limit is the bot's across the whole server (per user or per address,
// as the server is configured), not per channel, so a 429 on one reply's
// edit is every reply's. It answers "wait d" rather than waiting, so the
// coordinator keeps coalescing meanwhile. It is safe for concurrent use.
type gate struct {
	clock core.Clock
	mu    sync.Mutex
	until time.Time
}

// blocked returns how long calls are still held back.
func (g *gate) blocked() time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	return max(g.until.Sub(g.clock.Now()), 0)
}

// observe reads the rate-limit headers of an answer: a 429's Retry-After
// (or, without one, X-Ratelimit-Reset), or a last request allowed
// (X-Ratelimit-Remaining: 0) closes the gate for that long.
func (g *gate) observe(resp *http.Response) {
	h := resp.Header
	seconds := func(name string) (time.Duration, bool) {
		n, err := strconv.Atoi(h.Get(name))
		return time.Duration(n) * time.Second, err == nil && n >= 0
	}
	var wait time.Duration
	reset, hasReset := seconds("X-Ratelimit-Reset")
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		wait = time.Second
		if d, ok := seconds("Retry-After"); ok {
			wait = max(d, time.Second)
		} else if hasReset {
			wait = max(reset, time.Second)
		}
	case h.Get("X-Ratelimit-Remaining") == "0" && hasReset:
		wait = reset
	default:
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if until := g.clock.Now().Add(wait); until.After(g.until) {
		g.until = until
	}
}

// wait blocks until calls may be made, or ctx ends: for writes that have
// no coordinator to wait for them (a question's post).
func (g *gate) wait(ctx context.Context) error {
	for {
		d := g.blocked()
		if d == 0 {
			return nil
		}
		ch := make(chan struct{})
		t := g.clock.AfterFunc(d, func() { close(ch) })
		select {
		case <-ch:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
}
