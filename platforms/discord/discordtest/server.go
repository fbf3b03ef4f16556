package discordtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jake-bot/jake-bot/platforms/internal/fakeserver"
)

// Server is a fake Discord for tests: its REST API runs on httptest and
// its gateway is a websocket, both speaking Discord's wire protocol to the
// real discordgo client. Point the client at URL (DISCORD_API_URL); the
// client finds the gateway through GET gateway as it would at Discord.
//
// Server records every REST call, keeps the messages the bot posted and
// edited, dispatches events (INTERACTION_CREATE, MESSAGE_CREATE) to the
// connected client, answers heartbeats, and replays missed events on
// RESUME. The users NewUser makes are the server's members, with the roles
// SetRoles gives them. It can answer 429 with retry_after, or hold a call until the
// test releases it. It is safe for concurrent use.
type Server struct {
	// URL is the REST base URL, ending in "/api/v9/".
	URL string
	// Token is the bot token the fake accepts (sent as "Bot <Token>").
	Token string
	// AppID, BotID, GuildID and TextChannel name the application, the
	// bot's user, the one server and a text channel in it.
	AppID, BotID, GuildID, TextChannel string
	// Now stamps recorded calls; set it to the test's clock before the
	// client connects. The default is time.Now.
	Now func() time.Time
	// HeartbeatInterval is sent in HELLO; the default is Discord's 41.25 s.
	HeartbeatInterval time.Duration

	t        testing.TB
	srv      *httptest.Server // REST
	gwSrv    *httptest.Server // gateway, on its own host as at Discord
	upgrader websocket.Upgrader

	mu           sync.Mutex
	changes      fakeserver.Signal
	calls        []Call
	nextID       int64
	channels     map[string]*Channel
	members      map[string]User // the server's, by id
	messages     map[string]*Message
	order        []string
	interactions map[string]*interactionState // by token
	commands     []json.RawMessage
	faults       []*fault
	holds        []*Hold
	attachments  map[string]File // by URL path
	downloads    []Call
	threadHooks  []func(Channel)

	gw gateway
}

// Call is one REST request the fake received.
type Call struct {
	Method string
	// Path is relative to the API base, such as "channels/2/messages".
	Path string
	Body []byte
	// Status is the HTTP status the fake answered.
	Status int
	// At is the fake's Now when the request arrived.
	At time.Time
	// Authorization is the request's Authorization header.
	Authorization string
	// ContentType is the request's Content-Type header.
	ContentType string
	// Message is the id of the message the call created or edited.
	Message string
}

// Decode unmarshals the call's JSON body into v; it fails the test on
// malformed JSON.
func (c Call) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(c.Body, v); err != nil {
		t.Fatalf("%s %s: body %q: %v", c.Method, c.Path, c.Body, err)
	}
}

// Is reports whether the call has the method and matches pattern, a path
// whose "*" segments match any one segment ("channels/*/messages").
func (c Call) Is(method, pattern string) bool {
	return c.Method == method && matchPath(pattern, c.Path)
}

func matchPath(pattern, path string) bool {
	ps, xs := strings.Split(pattern, "/"), strings.Split(path, "/")
	if len(ps) != len(xs) {
		return false
	}
	for i := range ps {
		if ps[i] != "*" && ps[i] != xs[i] {
			return false
		}
	}
	return true
}

// Channel is a channel, thread or DM in the fake.
type Channel struct {
	ID       string `json:"id"`
	Type     int    `json:"type"`
	GuildID  string `json:"guild_id,omitempty"`
	ParentID string `json:"parent_id,omitempty"`
	Name     string `json:"name,omitempty"`
	// OwnerID is who opened a thread: the bot (BotID) for the threads it
	// starts.
	OwnerID string `json:"owner_id,omitempty"`
}

// Discord channel types the fake uses.
const (
	TextChannel   = 0
	DMChannel     = 1
	ThreadChannel = 11
)

// Message is a message as the fake holds it now: after every edit.
type Message struct {
	ID, ChannelID, AuthorID string
	Content                 string
	Embeds                  []Embed
	Components              json.RawMessage
	Flags                   int
	// Files are the message's attachments.
	Files []File
	// Edits counts the PATCHes the message received.
	Edits   int
	Deleted bool
	// Interaction is the id of the interaction the message answers.
	Interaction string
	// Reactions are the bot's reactions on it.
	Reactions []string
}

// Embed is the part of an embed tests look at.
type Embed struct {
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Color       int    `json:"color,omitempty"`
}

// New starts a fake Discord with one server and one text channel;
// it stops when the test ends.
func New(t testing.TB) *Server {
	d := &Server{
		Token:             "fake-bot-token",
		Now:               time.Now,
		HeartbeatInterval: 41250 * time.Millisecond,
		t:                 t,
		nextID:            1_100_000_000_000_000_000,
		channels:          make(map[string]*Channel),
		members:           make(map[string]User),
		messages:          make(map[string]*Message),
		interactions:      make(map[string]*interactionState),
		attachments:       make(map[string]File),
	}
	d.AppID, d.BotID, d.GuildID, d.TextChannel = d.newID(), d.newID(), d.newID(), d.newID()
	d.channels[d.TextChannel] = &Channel{ID: d.TextChannel, Type: TextChannel, GuildID: d.GuildID, Name: "general"}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v9/", d.serveREST)
	mux.HandleFunc("/attachments/", d.serveAttachment)
	// Every field is set before a server starts: the handlers read them.
	d.gwSrv = httptest.NewServer(http.HandlerFunc(d.serveGateway))
	d.srv = httptest.NewUnstartedServer(mux)
	d.URL = "http://" + d.srv.Listener.Addr().String() + "/api/v9/"
	d.srv.Start()
	t.Cleanup(d.Close)
	return d
}

// Close disconnects the client and stops the server.
func (d *Server) Close() {
	d.Disconnect()
	d.srv.CloseClientConnections()
	d.srv.Close()
	d.gwSrv.CloseClientConnections()
	d.gwSrv.Close()
}

// gatewayURL is what GET gateway answers.
func (d *Server) gatewayURL() string { return "ws" + strings.TrimPrefix(d.gwSrv.URL, "http") }

func (d *Server) newID() string {
	d.nextID++
	return strconv.FormatInt(d.nextID, 10)
}

// notify wakes everyone waiting for a change; d.mu must be held.
func (d *Server) notify() { d.changes.Notify() }

// DM returns the id of a DM channel with user, creating it.
func (d *Server) DM(user User) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range d.channels {
		if c.Type == DMChannel && c.Name == user.ID {
			return c.ID
		}
	}
	id := d.newID()
	d.channels[id] = &Channel{ID: id, Type: DMChannel, Name: user.ID}
	return id
}

// Channel returns a channel by id.
func (d *Server) Channel(id string) (Channel, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	c, ok := d.channels[id]
	if !ok {
		return Channel{}, false
	}
	return *c, true
}

// Threads returns the threads opened in channel, oldest first.
func (d *Server) Threads(channel string) []Channel {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []Channel
	for _, c := range d.channels {
		if c.ParentID == channel {
			out = append(out, *c)
		}
	}
	slices.SortFunc(out, func(a, b Channel) int { return compareSnowflakes(a.ID, b.ID) })
	return out
}

func compareSnowflakes(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

// Calls returns every REST call so far, in the order they completed.
func (d *Server) Calls() []Call {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.calls)
}

// CallsTo returns the calls with method whose path matches pattern.
func (d *Server) CallsTo(method, pattern string) []Call {
	return fakeserver.Keep(d.Calls(), func(c Call) bool { return c.Is(method, pattern) })
}

// Messages returns the messages in channel, oldest first, as they are now.
func (d *Server) Messages(channel string) []Message {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []Message
	for _, id := range d.order {
		if m := d.messages[id]; m.ChannelID == channel {
			out = append(out, *m)
		}
	}
	return out
}

// Commands returns the application commands of the last bulk overwrite.
func (d *Server) Commands() []json.RawMessage {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.commands)
}

// WaitFor blocks until cond holds, checking it now and after every
// change to the fake (a REST call, a gateway event); it fails the test
// after a generous timeout. cond may call the fake's methods.
func (d *Server) WaitFor(what string, cond func() bool) {
	d.t.Helper()
	if !d.changes.WaitFor(cond) {
		d.t.Fatalf("fake discord: timed out waiting for %s", what)
	}
}

// WaitCall waits for the first call with method matching pattern for
// which match (nil: any) holds, and returns it.
func (d *Server) WaitCall(method, pattern string, match func(Call) bool) Call {
	d.t.Helper()
	var found Call
	d.WaitFor(method+" "+pattern, func() bool {
		for _, c := range d.CallsTo(method, pattern) {
			if match == nil || match(c) {
				found = c
				return true
			}
		}
		return false
	})
	return found
}

// WaitMessage waits until a message in channel satisfies match, and
// returns it.
func (d *Server) WaitMessage(channel string, match func(Message) bool) Message {
	d.t.Helper()
	var found Message
	d.WaitFor("a message in "+channel, func() bool {
		for _, m := range d.Messages(channel) {
			if match(m) {
				found = m
				return true
			}
		}
		return false
	})
	return found
}
