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
	resp, err := c.open(ctx, method, path, contentType, body)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return c.failure(ctx, op, resp)
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

// open makes one request, once the gate lets it, and returns the
// response whatever its status. A call the gate holds back is a
// *core.RateLimitError.
//
// A caller that gives up (a typing indicator stopped mid-call) gets
// ctx's error at once, but the request goes on to its answer, bounded by
// the client's Timeout: the server may have counted the call, or may yet
// count it when the request is still on its way, and only the answer
// tells the gate which. Dropping the call at once would leave the gate
// one call short of the server's count, and the next call could meet a
// 429.
func (c *client) open(ctx context.Context, method, path, contentType string, body io.Reader) (*http.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), method, c.base+"/api/v4"+path, body)
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
	done, wait, err := c.gate.acquire(ctx)
	if err != nil {
		return nil, err
	}
	if wait > 0 {
		return nil, &core.RateLimitError{RetryAfter: wait, Err: errHeldBack}
	}
	type answer struct {
		resp *http.Response
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := c.http.Do(req)
		done(resp)
		answered <- answer{resp, err}
	}()
	select {
	case a := <-answered:
		return a.resp, a.err
	case <-ctx.Done():
		go func() {
			if a := <-answered; a.resp != nil {
				_, _ = io.Copy(io.Discard, io.LimitReader(a.resp.Body, 1<<20))
				a.resp.Body.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// failure reads a failed call's answer: a 429 is a *core.RateLimitError
// after the wait the gate now holds.
func (c *client) failure(ctx context.Context, op string, resp *http.Response) error {
	e := &apiError{Status: resp.StatusCode, op: op}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	_ = json.Unmarshal(b, e)
	if resp.StatusCode == http.StatusTooManyRequests {
		return &core.RateLimitError{RetryAfter: max(c.gate.blocked(ctx), time.Second), Err: e}
	}
	return e
}

// download GETs path and returns its body, for a file.
func (c *client) download(ctx context.Context, path string) (io.ReadCloser, error) {
	op := "GET " + path
	resp, err := c.open(ctx, http.MethodGet, path, "", nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		return nil, c.failure(ctx, op, resp)
	}
	return resp.Body, nil
}

// gate holds back every call while the server's rate limit is spent: the
// limit is the bot's across the whole server (per user or per address,
// as the server is configured), not per channel, so a 429 on one reply's
// edit is every reply's. It answers "wait d" rather than waiting, so the
// coordinator keeps coalescing meanwhile.
//
// Besides a 429's Retry-After, it reads the X-Ratelimit-* headers every
// answer carries: the server's limiter is a bucket of Limit calls that
// refills one call at a time, full again after Reset seconds. The gate
// keeps the same bucket from the last answer, counting the calls still
// under way, so that calls made at once stop before the bucket is empty
// rather than one of them running into a 429. It is safe for concurrent
// use.
type gate struct {
	clock core.Clock
	mu    sync.Mutex
	until time.Time // no call before (a 429)
	// The bucket as the last answer described it: remaining calls at
	// seen, refilling one every every, up to limit; known once an answer
	// carried the headers.
	known     bool
	remaining int
	limit     int
	every     time.Duration
	seen      time.Time
	inflight  int
	// answered is closed, and replaced, at every answer, for calls that
	// wait for those under way: a channel, so that a caller who gives up
	// stops waiting.
	answered chan struct{}
}

func newGate(clock core.Clock) *gate {
	return &gate{clock: clock, answered: make(chan struct{})}
}

// lowWater is how few calls left in the bucket make calls go one at a
// time: each then sees the bucket its predecessor's answer describes, so
// that calls made at once do not spend the last call twice.
const lowWater = 2

// acquire takes a call: it returns how long to wait instead when the
// server would refuse it now, else the func to call with the call's
// answer (nil when it failed to arrive, and the call counts as spent).
// While few calls are left and some are under way, it waits for their
// answers, or until ctx ends: a call under way may take up to the client's
// Timeout to answer, and a caller who gave up meanwhile must not wait for
// it.
func (g *gate) acquire(ctx context.Context) (done func(*http.Response), wait time.Duration, err error) {
	for {
		g.mu.Lock()
		done, wait, answered := g.take()
		g.mu.Unlock()
		if answered == nil {
			return done, wait, nil
		}
		select {
		case <-answered:
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		}
	}
}

// take takes a call now, or says how long to wait, or returns the channel
// to wait on for an answer to a call under way. g.mu is held.
func (g *gate) take() (done func(*http.Response), wait time.Duration, answered <-chan struct{}) {
	now := g.clock.Now()
	if now.Before(g.until) {
		return nil, g.until.Sub(now), nil
	}
	if g.known {
		left := g.available(now)
		if left <= 0 && g.inflight == 0 {
			return nil, g.every - now.Sub(g.seen)%g.every, nil
		}
		if left <= lowWater && g.inflight > 0 {
			return nil, 0, g.answered
		}
	}
	g.inflight++
	return g.release, 0, nil
}

// available is how many more calls the bucket allows now.
func (g *gate) available(now time.Time) int {
	return min(g.refilled(now), g.limit) - g.inflight
}

// refilled is the calls left at seen plus those refilled since, without
// the limit.
func (g *gate) refilled(now time.Time) int {
	return g.remaining + int(now.Sub(g.seen)/g.every)
}

// blocked returns how long a call would have to wait now, once the calls
// under way it waits for have answered (or ctx has ended).
func (g *gate) blocked(ctx context.Context) time.Duration {
	done, wait, err := g.acquire(ctx)
	if err != nil {
		return 0
	}
	if done != nil {
		g.mu.Lock()
		g.inflight--
		g.signal()
		g.mu.Unlock()
	}
	return wait
}

// signal wakes the calls waiting for an answer. g.mu is held.
func (g *gate) signal() {
	close(g.answered)
	g.answered = make(chan struct{})
}

// release ends a call, reading its answer's rate-limit headers: a 429's
// Retry-After (or, without one, X-Ratelimit-Reset) closes the gate for
// that long; the others describe the bucket.
func (g *gate) release(resp *http.Response) {
	g.mu.Lock()
	defer g.mu.Unlock()
	defer g.signal()
	g.inflight--
	if resp == nil {
		g.spend()
		return
	}
	h := resp.Header
	number := func(name string) (int, bool) {
		n, err := strconv.Atoi(h.Get(name))
		return n, err == nil && n >= 0
	}
	now := g.clock.Now()
	reset, hasReset := number("X-Ratelimit-Reset")
	if resp.StatusCode == http.StatusTooManyRequests {
		wait := time.Second
		if d, ok := number("Retry-After"); ok {
			wait = max(time.Duration(d)*time.Second, time.Second)
		} else if hasReset {
			wait = max(time.Duration(reset)*time.Second, time.Second)
		}
		if until := now.Add(wait); until.After(g.until) {
			g.until = until
		}
		return
	}
	limit, hasLimit := number("X-Ratelimit-Limit")
	remaining, hasRemaining := number("X-Ratelimit-Remaining")
	if !hasLimit || !hasRemaining || !hasReset || limit == 0 {
		return
	}
	// Reset is whole seconds to a full bucket: the refill of one call is
	// at most Reset divided by the calls missing.
	every := time.Second
	if missing := limit - remaining; missing > 0 && reset > 0 {
		every = max(time.Duration(reset)*time.Second/time.Duration(missing), time.Millisecond)
	}
	// Answers to calls made at once come in any order: one that left the
	// server earlier counts fewer calls spent, so the bucket keeps the
	// fewest calls either says are left.
	if g.known {
		remaining = min(remaining, g.refilled(now))
	}
	g.known, g.remaining, g.limit, g.every, g.seen = true, remaining, limit, every, now
}

// spend counts a call that got no answer (the connection broke, the
// client's Timeout passed) as spent: it may have reached the server,
// which counted it, and with no answer to say so the next call would
// take the call it spent and could meet a 429. g.mu is held.
func (g *gate) spend() {
	if !g.known {
		return
	}
	now := g.clock.Now()
	k := int(now.Sub(g.seen) / g.every)
	if g.remaining+k >= g.limit {
		// The bucket was full: its refill starts now.
		g.remaining, g.seen = g.limit-1, now
		return
	}
	// The refill keeps its phase.
	g.remaining = max(g.remaining+k-1, 0)
	g.seen = g.seen.Add(time.Duration(k) * g.every)
}

// wait blocks until calls may be made, or ctx ends: for writes that have
// no coordinator to wait for them (a question's post).
func (g *gate) wait(ctx context.Context) error {
	for {
		d := g.blocked(ctx)
		if err := ctx.Err(); err != nil {
			return err
		}
		if d == 0 {
			return nil
		}
		if !core.Sleep(ctx, g.clock, d) {
			return ctx.Err()
		}
	}
}
