package mattermost

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/lanes"
	"github.com/jake-bot/jake-bot/core/recent"
)

// pressPrefix marks a core.Message's ReplyTo as a button press or a
// choice's reaction: no post of the user's to react on, and for a button
// an answer the server waits for.
const pressPrefix = "press:"

func isPress(m core.Message) bool   { return strings.HasPrefix(m.ReplyTo, pressPrefix) }
func pressID(m core.Message) string { return strings.TrimPrefix(m.ReplyTo, pressPrefix) }

// numberEmoji are the reactions that stand for a question's choices where
// no buttons can be pressed: Mattermost's names of 1️⃣ … 🔟.
var numberEmoji = []string{"one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "keycap_ten"}

// offer is a post that offers choices: buttons, or reactions of the
// bot's that stand for commands.
type offer struct {
	buttons         bool
	emoji           []string          // the bot's reactions, in order
	commands        map[string]string // emoji → command
	channel, thread string
}

// choice is what a button's secret token stands for.
type choice struct{ command, channel, thread string }

// offers keeps the posts that offer choices, the buttons' tokens and the
// presses the server waits an answer for. It is safe for concurrent use.
type offers struct {
	posts  *recent.Map[string, offer]
	tokens *recent.Map[string, choice]
	next   atomic.Int64

	mu      sync.Mutex
	url     string // the callback URL, once Run listens; empty without
	pending map[string]string
}

func newOffers() *offers {
	return &offers{posts: recent.New[string, offer](memory), tokens: recent.New[string, choice](memory), pending: map[string]string{}}
}

// taken removes and returns the offer of post id: once edited, its
// choices are over.
func (o *offers) taken(id string) (offer, bool) {
	off, ok := o.posts.Get(id)
	if ok {
		o.posts.Delete(id)
	}
	return off, ok
}

func (o *offers) put(id string, off offer) { o.posts.Set(id, off) }

func (o *offers) callbackURL() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.url
}

// begin registers a press the server waits an answer for.
func (o *offers) begin() string {
	id := strconv.FormatInt(o.next.Add(1), 10)
	o.mu.Lock()
	o.pending[id] = ""
	o.mu.Unlock()
	return id
}

// answer sets the private answer to press id, if it still waits.
func (o *offers) answer(id, text string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.pending[id]; !ok {
		return false
	}
	o.pending[id] = text
	return true
}

// end forgets press id and returns its private answer.
func (o *offers) end(id string) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	text := o.pending[id]
	delete(o.pending, id)
	return text
}

// OfferChoices posts text with a button per choice where the server can
// reach the bot's callback endpoint (MATTERMOST_ACTIONS_URL), else with a
// numbered reaction per choice, which the bot adds itself so that one
// click answers. A press, or a click on a number, acts as if the presser
// typed the choice's command in the thread.
func (a *Adapter) OfferChoices(ctx context.Context, to core.Target, text string, choices []core.Choice) (core.MessageRef, error) {
	if len(choices) == 0 || utf8.RuneCountInString(text) > a.limit-200 {
		return core.MessageRef{}, errors.New("mattermost: choices do not fit in a post")
	}
	if u := a.offers.callbackURL(); u != "" {
		return a.offerButtons(ctx, to, text, choices, u)
	}
	return a.offerReactions(ctx, to, text, choices)
}

// offerButtons posts interactive message buttons (an attachment's
// actions). Each button's context holds a random token the bot keeps:
// the server sends it back with a press and shows it to no client, so
// a request to the callback endpoint without a token of the bot's is not
// the server's.
func (a *Adapter) offerButtons(ctx context.Context, to core.Target, text string, choices []core.Choice, callback string) (core.MessageRef, error) {
	var actions []map[string]any
	for i, c := range choices {
		tok := make([]byte, 16)
		_, _ = rand.Read(tok)
		token := hex.EncodeToString(tok)
		a.offers.tokens.Set(token, choice{command: c.Command, channel: to.Channel, thread: to.Thread})
		label := c.Label
		if strings.TrimSpace(label) == "" {
			label = c.Command
		}
		actions = append(actions, map[string]any{
			// Action ids go into the URL the client calls: letters and
			// digits only.
			"id": "choice" + strconv.Itoa(i), "name": core.Shorten(label, 80), "type": "button",
			"integration": map[string]any{"url": callback, "context": map[string]string{"token": token}},
		})
	}
	if err := a.api.gate.wait(ctx); err != nil {
		return core.MessageRef{}, err
	}
	id, err := a.create(ctx, post{ChannelID: to.Channel, RootID: to.Thread, Message: text,
		Props: map[string]any{"attachments": []map[string]any{{"actions": actions}}}})
	if err != nil {
		return core.MessageRef{}, fmt.Errorf("mattermost: offer choices: %w", err)
	}
	a.offers.put(id, offer{buttons: true, channel: to.Channel, thread: to.Thread})
	return core.MessageRef{Target: to, ID: id}, nil
}

// offerReactions posts text with a legend of numbered reactions, and
// adds them.
func (a *Adapter) offerReactions(ctx context.Context, to core.Target, text string, choices []core.Choice) (core.MessageRef, error) {
	if len(choices) > len(numberEmoji) {
		return core.MessageRef{}, errors.New("mattermost: more choices than numbered reactions")
	}
	off := offer{commands: map[string]string{}, channel: to.Channel, thread: to.Thread}
	var legend []string
	for i, c := range choices {
		e := numberEmoji[i]
		label := c.Label
		if strings.TrimSpace(label) == "" {
			label = c.Command
		}
		off.emoji = append(off.emoji, e)
		off.commands[e] = c.Command
		legend = append(legend, ":"+e+": "+label)
	}
	if err := a.api.gate.wait(ctx); err != nil {
		return core.MessageRef{}, err
	}
	id, err := a.create(ctx, post{ChannelID: to.Channel, RootID: to.Thread, Message: text + "\n\nReact with " + strings.Join(legend, " · ")})
	if err != nil {
		return core.MessageRef{}, fmt.Errorf("mattermost: offer choices: %w", err)
	}
	a.offers.put(id, off)
	for _, e := range off.emoji {
		if err := a.api.gate.wait(ctx); err != nil {
			break
		}
		if err := a.react(ctx, id, e); err != nil {
			// The legend says which emoji to add: one click fewer.
			a.logger.Warn("add a choice's reaction", "post", id, "emoji", e, "err", err)
		}
	}
	return core.MessageRef{Target: to, ID: id}, nil
}

// reactionData is a reaction event's data: the reaction is JSON inside
// the JSON.
type reactionData struct {
	Reaction string `json:"reaction"`
}

// onReaction reads a reaction someone added: on a post offering choices
// by reaction, the choice's command, as if they typed it in its thread.
func (a *Adapter) onReaction(ctx context.Context, ev event, h core.Handler, work *lanes.PerKey[string]) {
	var d reactionData
	var r struct {
		UserID    string `json:"user_id"`
		PostID    string `json:"post_id"`
		EmojiName string `json:"emoji_name"`
	}
	if json.Unmarshal(ev.Data, &d) != nil || json.Unmarshal([]byte(d.Reaction), &r) != nil || r.UserID == a.me().ID {
		return
	}
	off, ok := a.offers.posts.Get(r.PostID)
	cmd := off.commands[r.EmojiName]
	if !ok || off.buttons || cmd == "" {
		return
	}
	name, _ := a.names.Get(r.UserID)
	m := core.Message{
		Key:      core.ConversationKey{Platform: Name, Channel: off.channel, Thread: off.thread},
		UserName: name, Text: cmd, From: r.UserID,
		ReplyTo: pressPrefix + "reaction",
	}
	work.Do(m.Key.Channel+"/"+m.Key.Thread, func() { h(ctx, m) })
}

// actionRequest is what the server posts to the callback endpoint when a
// button is pressed (PostActionIntegrationRequest), the fields read.
type actionRequest struct {
	UserID    string         `json:"user_id"`
	UserName  string         `json:"user_name"`
	ChannelID string         `json:"channel_id"`
	PostID    string         `json:"post_id"`
	Context   map[string]any `json:"context"`
}

// serveActions listens for button presses when MATTERMOST_ACTIONS_URL is
// set, and returns the function that stops it.
func (a *Adapter) serveActions(ctx context.Context, h core.Handler, work *lanes.PerKey[string]) (stop func(), err error) {
	if a.cfg.ActionsURL == "" {
		return func() {}, nil
	}
	u, _ := url.Parse(a.cfg.ActionsURL)
	ln := a.listener
	if ln == nil {
		addr, err := a.cfg.actionsListen()
		if err != nil {
			return nil, err
		}
		if ln, err = net.Listen("tcp", addr); err != nil {
			return nil, fmt.Errorf("mattermost: listen for button presses: %w", err)
		}
	}
	if u.Port() == "0" {
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		u.Host = net.JoinHostPort(u.Hostname(), port)
	}
	path := u.Path
	if path == "" {
		path = "/"
	}
	mux := http.NewServeMux()
	mux.Handle(path, a.pressHandler(ctx, h, work))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.logger.Error("button presses", "err", err)
		}
	}()
	a.offers.mu.Lock()
	a.offers.url = u.String()
	a.offers.mu.Unlock()
	a.logger.Info("serving button presses", "addr", ln.Addr().String(), "url", u.String())
	return func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}, nil
}

// pressHandler answers the server's requests for button presses: the
// press goes to the router as the choice's command from the presser, in
// the thread of the buttons, and the answer (an ephemeral text for a
// presser the router refuses) is sent once the router has handled it.
func (a *Adapter) pressHandler(ctx context.Context, h core.Handler, work *lanes.PerKey[string]) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		var req actionRequest
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil || json.Unmarshal(body, &req) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		token, _ := req.Context["token"].(string)
		c, ok := a.offers.tokens.Get(token)
		if token == "" || !ok || req.ChannelID != c.channel || !validID(req.UserID) {
			a.logger.Warn("a button press with no token of the bot's", "user", req.UserID, "post", req.PostID, "from", r.RemoteAddr)
			writeJSON(w, map[string]string{"ephemeral_text": "This button has expired: run the command again."})
			return
		}
		if req.UserName != "" {
			a.names.Set(req.UserID, req.UserName)
		}
		id := a.offers.begin()
		m := core.Message{
			Key:      core.ConversationKey{Platform: Name, Channel: c.channel, Thread: c.thread},
			UserName: req.UserName, Text: c.command, From: req.UserID,
			ReplyTo: pressPrefix + id,
		}
		done := make(chan struct{})
		if !work.Do(m.Key.Channel+"/"+m.Key.Thread, func() { defer close(done); h(ctx, m) }) {
			a.offers.end(id)
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
			return
		}
		select {
		case <-done:
		case <-r.Context().Done():
		}
		answer := map[string]string{}
		if text := a.offers.end(id); text != "" {
			answer["ephemeral_text"] = text
		}
		writeJSON(w, answer)
	})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
