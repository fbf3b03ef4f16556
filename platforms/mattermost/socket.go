package mattermost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/lanes"
)

// Keep-alive of the WebSocket: the bot pings every pingEvery, and a
// connection that has been silent for readTimeout (no event, ping or
// pong) is dead and replaced.
const (
	pingEvery   = 30 * time.Second
	readTimeout = 90 * time.Second
)

// event is one message on the WebSocket: an event (with its data and
// sequence number) or the answer to one of the bot's requests.
type event struct {
	Event     string          `json:"event"`
	Data      json.RawMessage `json:"data"`
	Broadcast struct {
		ChannelID string `json:"channel_id"`
	} `json:"broadcast"`
	Seq      int64  `json:"seq"`
	Status   string `json:"status"`
	SeqReply int64  `json:"seq_reply"`
}

// errRefused is a token the server no longer accepts.
var errRefused = errors.New("the server refused MATTERMOST_TOKEN")

// Run checks the token (/users/me), serves the button callbacks when
// MATTERMOST_ACTIONS_URL is set, and reads the event stream, reconnecting
// when it drops, until ctx ends; then it waits for the handlers it
// started. It returns an error when the server refuses the token at start
// or the callback address cannot be listened on.
func (a *Adapter) Run(ctx context.Context, h core.Handler) error {
	var me user
	if err := a.api.call(ctx, http.MethodGet, "/users/me", nil, &me); err != nil {
		return fmt.Errorf("mattermost: /users/me: %w", err)
	}
	a.self.Store(&me)
	a.logger.Info("connecting", "bot", me.Username, "bot_user", me.ID, "config", a.cfg)
	var work lanes.PerKey[string]
	defer work.Close()
	stop, err := a.serveActions(ctx, h, &work)
	if err != nil {
		return err
	}
	defer stop()
	failures := 0
	var st stream
	for ctx.Err() == nil {
		connected, err := a.listen(ctx, h, &work, &st)
		if ctx.Err() != nil {
			break
		}
		if connected {
			failures = 0
		}
		failures++
		a.logger.Warn("event stream", "err", err, "failures", failures)
		a.Set(fmt.Errorf("event stream: %w", err))
		core.Sleep(ctx, a.clock, min(time.Second<<min(failures-1, 6), time.Minute))
	}
	return nil
}

// stream is where the event stream stands across connections: the
// server's id for it and the sequence number of the next event. A client
// that reconnects with both gets the events sent while it was away
// (reliable WebSockets); a server that no longer has them (it restarted,
// or too much happened) greets the client with a new id.
type stream struct {
	id   string
	next int64
}

// errMissed is an event stream that skipped events: the connection is
// replaced, and the server sends them again on the next.
var errMissed = errors.New("events were missed")

// listen reads one connection's events until it drops or ctx ends. It
// reports whether the server accepted the connection's authentication.
func (a *Adapter) listen(ctx context.Context, h core.Handler, work *lanes.PerKey[string], st *stream) (bool, error) {
	u := a.wsURL
	if st.id != "" {
		u += "?" + url.Values{"connection_id": {st.id}, "sequence_number": {strconv.FormatInt(st.next, 10)}}.Encode()
	}
	ws, _, err := a.dialer.DialContext(ctx, u, nil)
	if err != nil {
		return false, err
	}
	defer ws.Close()
	defer context.AfterFunc(ctx, func() { ws.Close() })()
	var wmu sync.Mutex
	write := func(v any) error {
		wmu.Lock()
		defer wmu.Unlock()
		_ = ws.SetWriteDeadline(time.Now().Add(10 * time.Second))
		return ws.WriteJSON(v)
	}
	// The token goes in the first message, never in the URL.
	if err := write(map[string]any{"seq": 1, "action": "authentication_challenge", "data": map[string]string{"token": a.api.token}}); err != nil {
		return false, err
	}
	alive := func() { _ = ws.SetReadDeadline(time.Now().Add(readTimeout)) }
	alive()
	ws.SetPongHandler(func(string) error { alive(); return nil })
	ws.SetPingHandler(func(data string) error {
		alive()
		return ws.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(10*time.Second))
	})
	done := make(chan struct{})
	defer close(done)
	go func() {
		t := time.NewTicker(pingEvery)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				_ = ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(10*time.Second))
			case <-done:
				return
			}
		}
	}()
	authed := false
	for {
		var ev event
		if err := ws.ReadJSON(&ev); err != nil {
			return authed, err
		}
		alive()
		if ev.Event == "" { // an answer to the bot's request
			if ev.SeqReply == 1 {
				if ev.Status != "OK" {
					return false, errRefused
				}
				authed = true
				a.logger.Info("connected", "resumed", st.id != "")
				a.Set(nil)
			}
			continue
		}
		if ev.Event == "hello" {
			var hello struct {
				ConnectionID string `json:"connection_id"`
			}
			_ = json.Unmarshal(ev.Data, &hello)
			if st.id != "" && hello.ConnectionID != st.id {
				a.logger.Warn("the server could not resume the event stream: posts made while it was down were missed")
			}
			st.id, st.next = hello.ConnectionID, ev.Seq
		}
		if ev.Seq != st.next {
			return authed, fmt.Errorf("%w: event %d, expected %d", errMissed, ev.Seq, st.next)
		}
		st.next++
		switch {
		case ev.Event == "posted":
			a.onPosted(ctx, ev, h, work)
		case ev.Event == "reaction_added":
			a.onReaction(ctx, ev, h, work)
		}
	}
}
