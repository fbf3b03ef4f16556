package web_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/web"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

const token = "correct-horse-battery-staple-42"

// echoPlugin answers "echo: <prompt>"; a prompt "wait" runs until the
// turn is stopped, "long" answers longAnswer, and "stream" writes
// streamedLines a line at a time.
type echoPlugin struct {
	*plugintest.Scripted
	// next lets a "stream" turn write its next line.
	next chan struct{}
}

func newEchoPlugin() *echoPlugin {
	p := &echoPlugin{Scripted: &plugintest.Scripted{}}
	p.Script = p.run
	return p
}

func (p *echoPlugin) run(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	switch t.Prompt {
	case "wait":
		emit(core.TextEvent("waiting…"))
		<-ctx.Done()
		return core.TurnResult{}, context.Cause(ctx)
	case "long":
		emit(core.TextEvent(longAnswer))
		return core.TurnResult{SessionID: p.Session(t)}, nil
	case "stream":
		// A line at a time, each once the page has it: every line is an
		// edit of its own, as when a CLI writes slowly.
		for i := range streamedLines {
			emit(core.TextEvent(streamedLine(i)))
			select {
			case <-p.next:
			case <-ctx.Done():
				return core.TurnResult{}, context.Cause(ctx)
			}
		}
		return core.TurnResult{SessionID: p.Session(t)}, nil
	}
	return p.Echo(ctx, t, emit)
}

func (p *echoPlugin) lastTurn() core.Turn {
	turns := p.Turns()
	return turns[len(turns)-1]
}

// site is the web platform on a real router, on a free loopback port.
type site struct {
	t       *testing.T
	url     string
	root    string
	plugin  *echoPlugin
	logs    *bytes.Buffer
	logMu   *sync.Mutex
	printed *bytes.Buffer
	// client reaches the site (with its certificate under TLS).
	client *http.Client
	// stop stops it, as at shutdown; the test's cleanup calls it too.
	stop func()
}

func newSite(t *testing.T) *site {
	t.Helper()
	p := newEchoPlugin()
	s := newSiteFrom(t, siteConfig{plugin: p})
	s.plugin = p
	return s
}

// siteConfig varies a site; zero fields take the defaults.
type siteConfig struct {
	plugin core.Plugin
	// root is the allowed root (default: a new temporary directory).
	root string
	// convs is the router's map, as loaded from STATE_FILE.
	convs *core.State
	// web adjusts the platform's configuration.
	web func(*web.Config)
	// client is the HTTP client (default: a plain one).
	client *http.Client
	// router adjusts the router's configuration.
	router func(*core.RouterConfig)
	// opts adjusts the platform's options.
	opts func(*web.Options)
}

func newSiteFrom(t *testing.T, sc siteConfig) *site {
	t.Helper()
	s := &site{t: t, logs: &bytes.Buffer{}, logMu: &sync.Mutex{}, printed: &bytes.Buffer{}, root: sc.root, client: sc.client}
	if s.client == nil {
		s.client = &http.Client{}
	}
	if s.root == "" {
		root, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		s.root = root
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(lockedWriter{s.logMu, s.logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg := web.Config{Addr: ln.Addr().String(), Token: token}
	if sc.web != nil {
		sc.web(&cfg)
	}
	s.url = "http://" + ln.Addr().String()
	if cfg.TLSCert != "" {
		s.url = "https://" + ln.Addr().String()
	}
	reg, err := core.NewRegistry(sc.plugin)
	if err != nil {
		t.Fatal(err)
	}
	access := core.NewAccess()
	cfg.Grant(access)
	roots, err := core.NewRoots([]string{s.root})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rc := core.RouterConfig{Plugins: reg, Access: access, Roots: roots, Logger: logger}
	if sc.router != nil {
		sc.router(&rc)
	}
	router := core.NewRouter(ctx, rc, sc.convs)
	opts := web.Options{Logger: logger, SignIn: s.printed, Listener: ln, Lookup: router, Plugins: []core.Plugin{sc.plugin}}
	if sc.opts != nil {
		sc.opts(&opts)
	}
	a, err := web.New(cfg, opts)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, router.Attach(a)) }()
	var once sync.Once
	s.stop = func() {
		once.Do(func() {
			cancel()
			router.Shutdown()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
			router.Wait()
			if strings.Contains(s.logged(), token) {
				t.Errorf("the token is in the logs:\n%s", s.logs)
			}
		})
	}
	t.Cleanup(s.stop)
	return s
}

// logged is what the site logged so far.
func (s *site) logged() string {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return s.logs.String()
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// browser is a signed-in client: its cookie and the page's CSRF token.
type browser struct {
	s    *site
	http *http.Client
	csrf string
}

func (s *site) signIn() *browser {
	s.t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Transport: s.client.Transport}
	resp, err := c.Get(s.url + "/login?token=" + token)
	if err != nil {
		s.t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/" {
		s.t.Fatalf("sign-in ended at %s with %s", resp.Request.URL, resp.Status)
	}
	_, rest, ok := strings.Cut(string(page), `name="csrf-token" content="`)
	if !ok {
		s.t.Fatalf("the page has no CSRF token:\n%s", page)
	}
	csrf, _, _ := strings.Cut(rest, `"`)
	return &browser{s: s, http: c, csrf: csrf}
}

func (b *browser) post(path, contentType string, body io.Reader, header http.Header) *http.Response {
	b.s.t.Helper()
	req, _ := http.NewRequest("POST", b.s.url+path, body)
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("X-CSRF-Token", b.csrf)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := b.http.Do(req)
	if err != nil {
		b.s.t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func (b *browser) newChannel() string {
	b.s.t.Helper()
	req, _ := http.NewRequest("POST", b.s.url+"/api/channels", nil)
	req.Header.Set("X-CSRF-Token", b.csrf)
	resp, err := b.http.Do(req)
	if err != nil {
		b.s.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ ID string }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.ID == "" {
		b.s.t.Fatalf("new channel: %s, %v", resp.Status, err)
	}
	return out.ID
}

func (b *browser) say(channel, text string) {
	b.s.t.Helper()
	body, _ := json.Marshal(map[string]string{"channel": channel, "text": text})
	if resp := b.post("/api/messages", "application/json", bytes.NewReader(body), nil); resp.StatusCode != http.StatusAccepted {
		b.s.t.Fatalf("say %q: %s", text, resp.Status)
	}
}

// stream is an open event stream. It keeps each message as the events so
// far make it (a message, then what appends add).
type stream struct {
	t      *testing.T
	events chan map[string]any
	// msgs are the messages seen, by id; read them in until's callback.
	msgs map[string]*wireMessage
	// bytes counts what the stream carried; read it once it ended.
	bytes atomic.Int64
}

type wireMessage struct {
	ID, From, Text string
	Mark           string
	Choices        []struct{ Label, Command string }
	File           *struct {
		ID, Name string
		Size     int
	}
	// in is the message's channel.
	in string
}

func (b *browser) events() *stream {
	b.s.t.Helper()
	req, _ := http.NewRequest("GET", b.s.url+"/api/events", nil)
	ctx, cancel := context.WithCancel(context.Background())
	b.s.t.Cleanup(cancel)
	resp, err := b.http.Do(req.WithContext(ctx))
	if err != nil || resp.StatusCode != http.StatusOK {
		b.s.t.Fatalf("events: %v %v", resp, err)
	}
	st := &stream{t: b.s.t, events: make(chan map[string]any, 1<<14), msgs: map[string]*wireMessage{}}
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			st.bytes.Add(int64(len(sc.Bytes()) + 1))
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var ev map[string]any
				json.Unmarshal([]byte(data), &ev)
				st.events <- ev
			}
		}
	}()
	return st
}

// apply keeps the messages up to date with ev.
func (st *stream) apply(ev map[string]any) {
	switch ev["type"] {
	case "message":
		var m wireMessage
		data, _ := json.Marshal(ev["message"])
		json.Unmarshal(data, &m)
		m.in, _ = ev["in"].(string)
		st.msgs[m.ID] = &m
	case "append":
		if m := st.msgs[ev["id"].(string)]; m != nil {
			m.Text += ev["text"].(string)
		}
	}
}

// until reads events until one satisfies ok; it returns that event.
func (st *stream) until(what string, ok func(ev map[string]any) bool) map[string]any {
	st.t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case ev := <-st.events:
			st.apply(ev)
			if ok(ev) {
				return ev
			}
		case <-timeout:
			st.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// botSays waits until a bot message in channel contains text, as sent
// whole or appended to, and returns it.
func (st *stream) botSays(channel, text string) wireMessage {
	st.t.Helper()
	var found *wireMessage
	st.until("a bot message with "+text, func(ev map[string]any) bool {
		id, _ := ev["id"].(string)
		if m, ok := ev["message"].(map[string]any); ok {
			id, _ = m["id"].(string)
		}
		found = st.msgs[id]
		return found != nil && found.in == channel && found.From == "bot" && strings.Contains(found.Text, text)
	})
	return *found
}

// Without the cookie nothing answers but 401, and does nothing; a wrong
// token signs nobody in; the sign-in URL is printed, never logged.
func TestSignInIsDefaultDeny(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	stranger := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tc := range []struct{ method, path string }{
		{"GET", "/"}, {"GET", "/static/app.js"}, {"GET", "/api/events"}, {"GET", "/api/files/f1"},
		{"POST", "/api/channels"}, {"POST", "/api/messages"}, {"POST", "/api/upload"},
		{"GET", "/login"}, {"GET", "/login?token=wrong"}, {"GET", "/login?token=" + token[:len(token)-1]},
	} {
		req, _ := http.NewRequest(tc.method, s.url+tc.path, strings.NewReader(`{"channel":"c1","text":"/claude start"}`))
		resp, err := stranger.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("Set-Cookie") != "" {
			t.Errorf("%s %s = %s (cookie %q), want 401 and no cookie", tc.method, tc.path, resp.Status, resp.Header.Get("Set-Cookie"))
		}
	}
	if n := len(s.plugin.Turns()); n != 0 {
		t.Errorf("%d turns ran for strangers", n)
	}
	if want := "Web: sign in at " + s.url + "/login?token=" + token + "\n"; s.printed.String() != want {
		t.Errorf("printed %q, want %q", s.printed.String(), want)
	}

	for _, proxied := range []bool{false, true} {
		req, _ := http.NewRequest("GET", s.url+"/login?token="+token, nil)
		if proxied {
			req.Header.Set("X-Forwarded-Proto", "https") // a TLS reverse proxy in front
		}
		resp, err := stranger.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		cookie := resp.Header.Get("Set-Cookie")
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" ||
			!strings.Contains(cookie, "HttpOnly") || !strings.Contains(cookie, "SameSite=Strict") ||
			strings.Contains(cookie, "Secure") != proxied {
			t.Errorf("sign-in (proxied %v) = %s, Location %q, cookie %q", proxied, resp.Status, resp.Header.Get("Location"), cookie)
		}
	}
}

// A request that changes something needs the page's CSRF token and its
// own origin; a stream refuses a foreign origin.
func TestCSRFAndOrigin(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	b := s.signIn()
	c := b.newChannel()
	body := func() io.Reader { return strings.NewReader(`{"channel":"` + c + `","text":"/claude start"}`) }
	for _, tc := range []struct {
		name   string
		header http.Header
		csrf   string
		want   int
	}{
		{"no token", nil, "", http.StatusForbidden},
		{"wrong token", nil, "forged", http.StatusForbidden},
		{"foreign origin", http.Header{"Origin": {"https://evil.example"}}, b.csrf, http.StatusForbidden},
		{"own origin", http.Header{"Origin": {s.url}}, b.csrf, http.StatusAccepted},
	} {
		saved := b.csrf
		b.csrf = tc.csrf
		if resp := b.post("/api/messages", "application/json", body(), tc.header); resp.StatusCode != tc.want {
			t.Errorf("%s: %s, want %d", tc.name, resp.Status, tc.want)
		}
		b.csrf = saved
	}
	req, _ := http.NewRequest("GET", s.url+"/api/events", nil)
	req.Header.Set("Origin", "https://evil.example")
	resp, err := b.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a foreign stream: %s, want 403", resp.Status)
	}
}

// A conversation through the page: commands and messages go to the
// router, replies stream back, Stop stops, and a new stream (a reloaded
// page) starts with the conversation so far.
func TestConversationStreams(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	b := s.signIn()
	st := b.events()
	st.until("the snapshot", func(ev map[string]any) bool { return ev["type"] == "snapshot" })
	c := b.newChannel()
	b.say(c, "/claude start")
	st.botSays(c, "conversation started")
	b.say(c, "hello there")
	st.until("the title", func(ev map[string]any) bool {
		ch, _ := ev["channel"].(map[string]any)
		return ev["type"] == "channel" && ch["title"] == "hello there"
	})
	st.botSays(c, "echo: hello there")

	b.say(c, "wait")
	st.botSays(c, "waiting…")
	b.say(c, "/stop")
	st.botSays(c, "Stopped")

	again := b.events()
	snap := again.until("the snapshot", func(ev map[string]any) bool { return ev["type"] == "snapshot" })
	data, _ := json.Marshal(snap)
	for _, want := range []string{`"text":"hello there"`, `echo: hello there`, `"title":"hello there"`, "Stopped"} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("the snapshot lacks %s:\n%s", want, data)
		}
	}
}

// Files both ways: an upload is saved in the workdir and named in the
// prompt; /file sends one back, to download.
func TestFilesBothWays(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	b := s.signIn()
	st := b.events()
	c := b.newChannel()
	b.say(c, "/claude start")
	st.botSays(c, "conversation started")

	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	mw.WriteField("channel", c)
	mw.WriteField("text", "read this")
	fw, _ := mw.CreateFormFile("file", "notes.txt")
	fw.Write([]byte("line one\n"))
	mw.Close()
	if resp := b.post("/api/upload", mw.FormDataContentType(), &form, nil); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("upload: %s", resp.Status)
	}
	st.botSays(c, "echo: read this")
	saved := filepath.Join(".jakebot", "uploads", core.Day(time.Now()), "notes.txt")
	if p := s.plugin.lastTurn().Prompt; !strings.Contains(p, "- "+saved) {
		t.Errorf("prompt = %q, want it to name %s", p, saved)
	}
	if data, err := os.ReadFile(filepath.Join(s.root, saved)); err != nil || string(data) != "line one\n" {
		t.Errorf("saved %q, %v", data, err)
	}

	b.say(c, "/file "+saved)
	data, resp := b.download(st.file(c, "notes.txt"))
	if string(data) != "line one\n" || !strings.Contains(resp.Header.Get("Content-Disposition"), `filename=notes.txt`) {
		t.Errorf("download = %q (%s)", data, resp.Header.Get("Content-Disposition"))
	}
}

// file waits for a bot message in channel with a file named name, and
// returns the file's id.
func (st *stream) file(channel, name string) string {
	st.t.Helper()
	ev := st.until("the file "+name, func(ev map[string]any) bool {
		msg, _ := ev["message"].(map[string]any)
		f, _ := msg["file"].(map[string]any)
		return ev["type"] == "message" && ev["in"] == channel && f != nil && f["name"] == name
	})
	return ev["message"].(map[string]any)["file"].(map[string]any)["id"].(string)
}

// download fetches a file the bot sent.
func (b *browser) download(id string) ([]byte, *http.Response) {
	b.s.t.Helper()
	resp, err := b.http.Get(b.s.url + "/api/files/" + url.PathEscape(id))
	if err != nil {
		b.s.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		b.s.t.Fatal(err)
	}
	return data, resp
}

// After a restart, the conversations kept in STATE_FILE are listed again
// under their ids, each continuing its session; a new page conversation
// gets an id of its own rather than an old one's, and so starts afresh.
func TestConversationsOutliveARestart(t *testing.T) {
	t.Parallel()
	convs := core.NewState()
	p := newEchoPlugin()
	first := newSiteFrom(t, siteConfig{plugin: p, convs: convs})
	b := first.signIn()
	st := b.events()
	b.newChannel() // left empty, so not kept
	old := b.newChannel()
	b.say(old, "/claude start")
	st.botSays(old, "conversation started")
	b.say(old, "remember this")
	st.botSays(old, "echo: remember this")
	first.stop()

	again := newSiteFrom(t, siteConfig{plugin: p, convs: convs, root: first.root})
	b = again.signIn()
	st = b.events()
	snap := st.until("the snapshot", func(ev map[string]any) bool { return ev["type"] == "snapshot" })
	chans, _ := snap["channels"].([]any)
	if len(chans) != 1 {
		t.Fatalf("after the restart the page lists %v, want the one conversation", chans)
	}
	c := chans[0].(map[string]any)
	msgs, _ := c["messages"].([]any)
	if c["id"] != old || c["title"] != "claude in "+filepath.Base(first.root) || len(msgs) != 1 ||
		!strings.Contains(msgs[0].(map[string]any)["text"].(string), "jakebot restarted. This claude conversation in "+first.root+" continues") {
		t.Errorf("after the restart the page lists %v", c)
	}

	fresh := b.newChannel()
	if fresh == old {
		t.Fatalf("a new conversation got the old one's id %s", old)
	}
	b.say(fresh, "hello")
	st.botSays(fresh, "No conversation here yet")
	b.say(old, "and now?")
	st.botSays(old, "echo: and now?")
	if turn := p.lastTurn(); turn.SessionID != "session-1" || turn.Key.Channel != old {
		t.Errorf("the old conversation's turn = %+v, want it to resume session-1", turn)
	}
}

// streamedLines is how many lines the echo plugin streams for "stream":
// about 60 KB, the most one message of the page holds.
const streamedLines = 850

func streamedLine(i int) string {
	return fmt.Sprintf("line %04d of a reply streamed a line at a time, as a CLI writes it\n", i)
}

// A reply streamed a line at a time crosses the stream about once (with
// each event's envelope): each edit sends only what it adds to the message,
// not the whole of it again, which for this reply was 24.7 MB.
func TestStreamingSendsOnlyWhatAReplyAdds(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	b := s.signIn()
	st := b.events()
	c := b.newChannel()
	b.say(c, "/claude start")
	st.botSays(c, "conversation started")
	s.plugin.next = make(chan struct{})
	before := st.bytes.Load()
	b.say(c, "stream")
	for i := range streamedLines {
		st.botSays(c, strings.TrimSpace(streamedLine(i)))
		s.plugin.next <- struct{}{}
	}
	m := st.botSays(c, "— ") // the footer: the reply is whole
	carried := st.bytes.Load() - before
	if !strings.Contains(m.Text, fmt.Sprintf("line %04d of a reply", streamedLines-1)) {
		t.Fatalf("the reply lacks its last line:\n%.200s", m.Text)
	}
	t.Logf("a reply of %d bytes took %d bytes of the stream", len(m.Text), carried)
	if limit := int64(3 * len(m.Text)); carried > limit {
		t.Errorf("a reply of %d bytes took %d bytes of the stream, want at most %d", len(m.Text), carried, limit)
	}
}

// The page's start form offers the plugins and the directories the web
// user may work in.
func TestThePageOffersTheStartForm(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	b := s.signIn()
	resp, err := b.http.Get(s.url + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`<form id="start"`, `<option value="claude">Claude Code</option>`,
		`<datalist id="workdirs"><option value="` + s.root + `">`, `<input id="worktree" type="checkbox">`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks %s", want)
		}
	}
}

// With REACTIONS on, the user's message carries its turn's state as a
// mark, as a reaction does on a chat platform: 👀 while it runs, then ✅
// done or 🛑 stopped, each sent on the stream as the message again (issue
// 30).
func TestTurnStateMarksTheMessage(t *testing.T) {
	t.Parallel()
	s := newSiteFrom(t, siteConfig{plugin: newEchoPlugin(), router: func(rc *core.RouterConfig) { rc.Reactions = true }})
	b := s.signIn()
	st := b.events()
	c := b.newChannel()
	b.say(c, "/claude start")
	st.botSays(c, "conversation started")
	marked := func(text, mark string) {
		t.Helper()
		st.until(mark+" on "+text, func(map[string]any) bool {
			for _, m := range st.msgs {
				if m.in == c && m.From == "user" && m.Text == text && m.Mark == mark {
					return true
				}
			}
			return false
		})
	}
	b.say(c, "hello there")
	st.botSays(c, "echo: hello there")
	marked("hello there", "✅")
	b.say(c, "wait")
	marked("wait", "👀")
	b.say(c, "/stop")
	marked("wait", "🛑")
	for _, m := range st.msgs {
		if m.Mark != "" && (m.From != "user" || strings.HasPrefix(m.Text, "/")) {
			t.Errorf("%s message %q is marked %s: only a turn's message is", m.From, m.Text, m.Mark)
		}
	}
}
