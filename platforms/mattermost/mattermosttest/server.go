package mattermosttest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
	"golang.org/x/time/rate"

	"github.com/jake-bot/jake-bot/platforms/internal/fakeserver"
)

// Token is the bot account's access token.
const Token = "tokenfakemattermostbot0001"

// MaxRunes is the most runes a post may hold, as the server's
// PostMessageMaxRunesV2.
const MaxRunes = 16383

// User is an account on the fake server.
type User struct {
	ID       string
	Username string
}

// Post is a post on the fake server, as it stands after edits.
type Post struct {
	ID, ChannelID, RootID, UserID string
	Message                       string
	Props                         map[string]any
	FileIDs                       []string
	// Edits counts the bot's patches, made at EditTimes.
	Edits     int
	EditTimes []time.Time
	Reactions []Reaction
}

// Reaction is one user's emoji on a post.
type Reaction struct{ User, Emoji string }

// Button is an interactive message button as a client shows it: its id
// and label (the server never shows clients its integration).
type Button struct{ ID, Name string }

// Buttons returns the post's buttons, in order.
func (p Post) Buttons() []Button {
	var out []Button
	atts, _ := p.Props["attachments"].([]any)
	for _, a := range atts {
		m, _ := a.(map[string]any)
		acts, _ := m["actions"].([]any)
		for _, act := range acts {
			am, _ := act.(map[string]any)
			id, _ := am["id"].(string)
			name, _ := am["name"].(string)
			out = append(out, Button{id, name})
		}
	}
	return out
}

// Call is one REST call the fake answered.
type Call struct {
	Method, Path string
	Status       int
	Body         string
	At           time.Time
	// Remaining is the X-Ratelimit-Remaining answered, -1 without.
	Remaining int
}

// File is a file uploaded to the server.
type File struct {
	ID, Name, MimeType, Channel, User string
	Data                              []byte
	// Post is the post it is attached to, once posted.
	Post string
}

// Ephemeral is a message only User sees: a button callback's
// ephemeral_text.
type Ephemeral struct{ User, Channel, Text string }

// channel is a channel: "O" open, "P" private, "D" direct, "G" group.
type channel struct{ id, typ, name string }

// Server is a fake Mattermost server. It is safe for concurrent use.
type Server struct {
	// URL is the server's address, for MATTERMOST_URL.
	URL string
	// Bot is the bot's account; Channel an open channel (town square)
	// where the bot and every user created are members.
	Bot     User
	Channel string

	srv      *httptest.Server
	upgrader websocket.Upgrader
	actions  *http.Client

	mu        sync.Mutex
	changes   fakeserver.Signal
	clock     func() time.Time
	seq       int
	users     map[string]User
	channels  map[string]channel
	posts     map[string]*Post
	order     []string
	files     map[string]*File
	calls     []Call
	sessions  map[string]*session
	connects  int
	resumes   int
	ephemeral []Ephemeral
	maxRunes  int
	limiter   *rate.Limiter
	burst     int
	forced    map[string][]int           // method → Retry-After seconds of its next 429s
	held      map[string][]chan struct{} // method → its next calls' answers, held until closed
	downloads []string
}

// New starts a fake server that stops when the test ends.
func New(t testing.TB) *Server {
	s := &Server{
		clock:    time.Now,
		users:    map[string]User{},
		channels: map[string]channel{},
		posts:    map[string]*Post{},
		files:    map[string]*File{},
		forced:   map[string][]int{},
		held:     map[string][]chan struct{}{},
		sessions: map[string]*session{},
		maxRunes: MaxRunes,
		upgrader: websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }},
		actions:  &http.Client{Timeout: 30 * time.Second},
	}
	s.Bot = s.NewUser("jakebot")
	s.Channel = s.newChannel("O", "town-square")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v4/websocket", s.serveSocket)
	for pattern, h := range map[string]func(*http.Request, *Call) (int, any){
		"GET /api/v4/users/me":              s.me,
		"GET /api/v4/users/{user_id}":       s.getUser,
		"POST /api/v4/posts":                s.createPost,
		"PUT /api/v4/posts/{post_id}/patch": s.patchPost,
		"POST /api/v4/reactions":            s.addReaction,
		"DELETE /api/v4/users/{user_id}/posts/{post_id}/reactions/{emoji}": s.deleteReaction,
		"POST /api/v4/users/{user_id}/typing":                              s.typing,
		"POST /api/v4/files":                                               s.uploadFiles,
		"GET /api/v4/files/{file_id}":                                      s.getFile,
	} {
		mux.HandleFunc(pattern, s.api(h))
	}
	mux.HandleFunc("/", s.api(func(r *http.Request, c *Call) (int, any) {
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete} {
			other := r.Clone(r.Context())
			other.Method = m
			if _, pattern := mux.Handler(other); pattern != "/" {
				return appError(http.StatusMethodNotAllowed, "api.context.405.app_error", "Method not allowed.")
			}
		}
		return appError(http.StatusNotFound, "api.context.404.app_error", "Sorry, we could not find the page.")
	}))
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL
	t.Cleanup(s.Close)
	return s
}

// Close disconnects the bot and stops the server.
func (s *Server) Close() {
	s.Disconnect()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// SetClock sets the clock of the rate limit and of the recorded calls.
func (s *Server) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock = now
}

// SetMaxRunes lowers the post size limit, for tests of long replies.
func (s *Server) SetMaxRunes(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.maxRunes = n
}

// SetRateLimit limits the bot's calls as the server's rate limiter does
// (RateLimitSettings PerSec and MaxBurst, on the fake's clock): every
// answer carries X-Ratelimit-Limit, -Remaining and -Reset, and a call
// over the limit is answered 429 with Retry-After.
func (s *Server) SetRateLimit(perSec float64, burst int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limiter, s.burst = rate.NewLimiter(rate.Limit(perSec), burst), burst
	s.limiter.AllowN(s.clock(), 0)
}

// RateLimit makes the next times calls of method (PUT: the edits) answer
// 429 with a Retry-After of retryAfter, whole seconds as the server sends
// it.
func (s *Server) RateLimit(method string, retryAfter time.Duration, times int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range times {
		s.forced[method] = append(s.forced[method], int(retryAfter/time.Second))
	}
}

// Hold makes the next call of method be counted against the rate limit
// and recorded as usual, but holds its answer until release is called
// (or its client hangs up), as an answer slow on its way back is.
func (s *Server) Hold(method string) (release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := make(chan struct{})
	s.held[method] = append(s.held[method], c)
	return sync.OnceFunc(func() { close(c) })
}

// nextID returns a new id of Mattermost's form, 26 letters and digits.
func (s *Server) nextID(kind byte) string {
	s.seq++
	return string(kind) + fmt.Sprintf("%025d", s.seq)
}

// NewUser creates a user, a member of the town square.
func (s *Server) NewUser(username string) User {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := User{ID: s.nextID('u'), Username: username}
	s.users[u.ID] = u
	return u
}

func (s *Server) newChannel(typ, name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := channel{id: s.nextID('c'), typ: typ, name: name}
	s.channels[c.id] = c
	return c.id
}

// DirectChannel returns a new direct message channel between u and the
// bot.
func (s *Server) DirectChannel(u User) string { return s.newChannel("D", s.Bot.ID+"__"+u.ID) }

// update runs f under the lock and wakes every waiter.
func (s *Server) update(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
	s.changes.Notify()
}

// Changed returns a channel closed at the fake's next change.
func (s *Server) Changed() <-chan struct{} { return s.changes.Next() }

// WaitFor waits until cond holds, re-checking it after every change, and
// fails the test if it does not in time. cond may call the accessors.
func (s *Server) WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	if !s.changes.WaitFor(cond) {
		t.Fatalf("fake mattermost: timed out waiting for %s; calls so far:\n%s", what, s.dump())
	}
}

// Calls returns every REST call so far, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// Failed returns the calls answered with an error other than a 429.
func (s *Server) Failed() []Call {
	return fakeserver.Keep(s.Calls(), func(c Call) bool { return c.Status >= 400 && c.Status != http.StatusTooManyRequests })
}

// Post returns the post id, as it stands.
func (s *Server) Post(id string) (Post, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.posts[id]
	if !ok {
		return Post{}, false
	}
	return clonePost(p), true
}

// Thread returns the replies in root's thread (root itself left out),
// or with root "" the posts at the top of channel, in order.
func (s *Server) Thread(channel, root string) []Post {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Post
	for _, id := range s.order {
		if p := s.posts[id]; p.ChannelID == channel && p.RootID == root {
			out = append(out, clonePost(p))
		}
	}
	return out
}

// BotReplies returns the bot's posts in root's thread.
func (s *Server) BotReplies(channel, root string) []Post {
	return fakeserver.Keep(s.Thread(channel, root), func(p Post) bool { return p.UserID == s.Bot.ID })
}

// Downloads returns the ids of the files the bot downloaded.
func (s *Server) Downloads() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.downloads)
}

// Ephemeral returns the ephemeral messages shown to users.
func (s *Server) Ephemeral() []Ephemeral {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ephemeral)
}

func clonePost(p *Post) Post {
	c := *p
	c.FileIDs = slices.Clone(p.FileIDs)
	c.EditTimes = slices.Clone(p.EditTimes)
	c.Reactions = slices.Clone(p.Reactions)
	return c
}

func (s *Server) dump() string {
	var b strings.Builder
	for _, c := range s.Calls() {
		body := c.Body
		if utf8.RuneCountInString(body) > 160 {
			body = string([]rune(body)[:160]) + "…"
		}
		fmt.Fprintf(&b, "  %s %s → %d %s\n", c.Method, c.Path, c.Status, body)
	}
	return b.String()
}

// appError is the server's JSON error.
func appError(status int, id, message string) (int, any) {
	return status, map[string]any{"id": id, "message": message, "detailed_error": "", "request_id": "fake", "status_code": status}
}

// api checks the bearer token and the rate limit, then runs h under the
// fake's lock and records the call.
func (s *Server) api(h func(*http.Request, *Call) (int, any)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		call := Call{Method: r.Method, Path: r.URL.Path}
		if !strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/") {
			b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			call.Body = string(b)
			r.Body = io.NopCloser(strings.NewReader(call.Body))
		}
		var status int
		var out any
		var held chan struct{}
		s.update(func() {
			call.At = s.clock()
			if q := s.held[r.Method]; len(q) > 0 {
				held, s.held[r.Method] = q[0], q[1:]
			}
			switch {
			case r.Header.Get("Authorization") != "Bearer "+Token:
				status, out = appError(http.StatusUnauthorized, "api.context.session_expired.app_error", "Invalid or expired session, please login again.")
			case !s.allow(w, r.Method):
				status = http.StatusTooManyRequests
			default:
				status, out = h(r, &call)
			}
			call.Status = status
			call.Remaining = -1
			if n, err := strconv.Atoi(w.Header().Get("X-Ratelimit-Remaining")); err == nil {
				call.Remaining = n
			}
			s.calls = append(s.calls, call)
		})
		if held != nil {
			select {
			case <-held:
			case <-r.Context().Done():
				return
			}
		}
		if status == http.StatusTooManyRequests {
			http.Error(w, "limit exceeded", status)
			return
		}
		if b, ok := out.([]byte); ok {
			w.WriteHeader(status)
			_, _ = w.Write(b)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(out)
	}
}

// allow applies the rate limit to a call, setting its headers, and
// reports whether the call goes through; s.mu is held.
func (s *Server) allow(w http.ResponseWriter, method string) bool {
	if q := s.forced[method]; len(q) > 0 {
		s.forced[method] = q[1:]
		w.Header().Set("Retry-After", strconv.Itoa(q[0]))
		return false
	}
	if s.limiter == nil {
		return true
	}
	now := s.clock()
	ok := s.limiter.AllowN(now, 1)
	remaining := int(s.limiter.TokensAt(now))
	h := w.Header()
	h.Set("X-Ratelimit-Limit", strconv.Itoa(s.burst))
	h.Set("X-Ratelimit-Remaining", strconv.Itoa(max(remaining, 0)))
	perToken := time.Duration(float64(time.Second) / float64(s.limiter.Limit()))
	h.Set("X-Ratelimit-Reset", strconv.Itoa(ceilSeconds(time.Duration(s.burst-max(remaining, 0))*perToken)))
	if !ok {
		r := s.limiter.ReserveN(now, 1)
		wait := r.DelayFrom(now)
		r.CancelAt(now)
		h.Set("Retry-After", strconv.Itoa(max(ceilSeconds(wait), 1)))
	}
	return ok
}

func ceilSeconds(d time.Duration) int { return int((d + time.Second - 1) / time.Second) }

var idRE = regexp.MustCompile(`^[a-z0-9]{26}$`)

// badID answers a path parameter that is not an id, as the server's
// router does.
func badID(name string) (int, any) {
	return appError(http.StatusBadRequest, "api.context.invalid_url_param.app_error", "Invalid or missing "+name+" parameter in request URL.")
}

func decode(r *http.Request, v any) bool { return json.NewDecoder(r.Body).Decode(v) == nil }

func (s *Server) me(r *http.Request, c *Call) (int, any) { return http.StatusOK, s.userJSON(s.Bot) }

func (s *Server) userJSON(u User) map[string]any {
	return map[string]any{"id": u.ID, "username": u.Username, "is_bot": u.ID == s.Bot.ID}
}

func (s *Server) getUser(r *http.Request, c *Call) (int, any) {
	id := r.PathValue("user_id")
	if !idRE.MatchString(id) {
		return badID("user_id")
	}
	u, ok := s.users[id]
	if !ok {
		return appError(http.StatusNotFound, "app.user.missing_account.const", "We couldn't find the existing account.")
	}
	return http.StatusOK, s.userJSON(u)
}

// File returns the file id.
func (s *Server) File(id string) (File, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.files[id]
	if !ok {
		return File{}, false
	}
	return *f, true
}
