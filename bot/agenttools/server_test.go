package agenttools

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jake-bot/jake-bot/core"
)

// fakeActions records the calls a turn's tools make.
type fakeActions struct {
	mu     sync.Mutex
	calls  []string
	asking chan struct{}
}

func (f *fakeActions) record(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, s)
}

func (f *fakeActions) SendFile(_ context.Context, path, caption string) error {
	if strings.HasPrefix(path, "/etc") {
		return core.Errorf("%s is outside the allowed roots", path)
	}
	f.record("send_file " + path + " " + caption)
	return nil
}

func (f *fakeActions) Notify(_ context.Context, text string) error {
	f.record("notify " + text)
	return nil
}

func (f *fakeActions) Ask(ctx context.Context, question string, options []string) (string, error) {
	close(f.asking)
	<-ctx.Done()
	return "", context.Cause(ctx)
}

func (f *fakeActions) Schedule(_ context.Context, when, message string) (string, error) {
	f.record("schedule " + when + " " + message)
	return "Scheduled #1", nil
}

func start(t *testing.T, tools []string) *Server {
	t.Helper()
	s, err := Start(tools, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// bearer adds a token to every request, and a naming of the tools
// (core.ToolNamesHeader) unless "".
type bearer struct{ token, names string }

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	if b.names != "" {
		req.Header.Set(core.ToolNamesHeader, b.names)
	}
	return http.DefaultTransport.RoundTrip(req)
}

func connect(t *testing.T, url, token string) (*mcp.ClientSession, error) {
	return connectAs(t, url, bearer{token: token})
}

func connectAs(t *testing.T, url string, b bearer) (*mcp.ClientSession, error) {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	return c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: b}}, nil)
}

// toolNames lists the session's tools' names, sorted.
func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// listTools posts tools/list to url with headers, and returns the answer's
// status and body.
func listTools(t *testing.T, url string, headers map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func newBearerClient(token string) *http.Client { return &http.Client{Transport: bearer{token: token}} }

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

func TestToolsActOnlyWithTheTurnsLiveToken(t *testing.T) {
	s := start(t, core.AllAgentTools)
	f := &fakeActions{}
	access, closeTurn := openHere(s, f, nil)
	other, closeOther := openHere(s, &fakeActions{}, nil)
	defer closeOther()
	if access.Token == other.Token || len(access.Token) < 32 {
		t.Fatalf("tokens %q and %q: want two long random ones", access.Token, other.Token)
	}
	for _, auth := range []map[string]string{nil, {"Authorization": "Bearer nope"}} {
		if status, _ := listTools(t, access.URL, auth); status != http.StatusUnauthorized {
			t.Errorf("%v: status %d, want 401", auth, status)
		}
	}
	cs, err := connect(t, access.URL, access.Token)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if names := toolNames(t, cs); len(names) != 4 {
		t.Errorf("tools %q, want 4", names)
	}
	tests := []struct {
		tool    string
		args    map[string]any
		want    string
		isError bool
	}{
		{"send_file", map[string]any{"path": "out.png", "caption": "the chart"}, "sent out.png", false},
		{"send_file", map[string]any{"path": "/etc/passwd"}, "/etc/passwd is outside the allowed roots", true},
		{"notify", map[string]any{"text": "tests pass"}, "notified", false},
		{"schedule", map[string]any{"when": "30m", "message": "check CI"}, "Scheduled #1", false},
	}
	for _, tt := range tests {
		got, isErr := call(t, cs, tt.tool, tt.args)
		if got != tt.want || isErr != tt.isError {
			t.Errorf("%s(%v) = %q, error %v; want %q, error %v", tt.tool, tt.args, got, isErr, tt.want, tt.isError)
		}
	}
	want := []string{"send_file out.png the chart", "notify tests pass", "schedule 30m check CI"}
	if strings.Join(f.calls, "|") != strings.Join(want, "|") {
		t.Errorf("calls %q, want %q", f.calls, want)
	}
	closeTurn()
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "notify", Arguments: map[string]any{"text": "late"}}); err == nil {
		t.Error("a call after the turn ended was served")
	}
	if _, err := connect(t, access.URL, access.Token); err == nil {
		t.Error("the ended turn's token opened a session")
	}
}

func TestAQuestionEndsWithItsTurn(t *testing.T) {
	s := start(t, []string{core.ToolAskUser})
	f := &fakeActions{asking: make(chan struct{})}
	access, closeTurn := openHere(s, f, nil)
	cs, err := connect(t, access.URL, access.Token)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	go func() {
		<-f.asking
		closeTurn()
	}()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask_user", Arguments: map[string]any{"question": "which?"}})
	if err == nil && (!res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, errTurnEnded.Error())) {
		t.Errorf("ask_user after the turn ended: %+v, want the turn's end", res.Content)
	}
}

func TestStartRefusesAnUnknownTool(t *testing.T) {
	if _, err := Start([]string{"send_file", "rm_rf"}, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "rm_rf") {
		t.Errorf("err %v, want one naming rm_rf", err)
	}
}

// A client may ask for tools under other names (core.ToolNamesHeader, as
// Gemini CLI needs for ask_user): the tool is listed and called by its
// new name only; a naming of no served tool, of a name taken or not a
// tool name, is refused with the reason.
func TestToolsUnderOtherNames(t *testing.T) {
	s := start(t, []string{core.ToolNotify, core.ToolAskUser})
	f := &fakeActions{}
	access, closeTurn := openHere(s, f, nil)
	defer closeTurn()
	cs, err := connectAs(t, access.URL, bearer{access.Token, "ask_user=ask_the_user, notify=tell"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if names := toolNames(t, cs); !slices.Equal(names, []string{"ask_the_user", "tell"}) {
		t.Errorf("tools %q, want ask_the_user and tell", names)
	}
	if got, isErr := call(t, cs, "tell", map[string]any{"text": "hi"}); got != "notified" || isErr {
		t.Errorf("tell = %q, error %v", got, isErr)
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "notify", Arguments: map[string]any{"text": "hi"}}); err == nil {
		t.Error("notify answered under its own name too")
	}
	for _, names := range []string{"send_file=give", "notify=ask_user", "notify=a b", "notify=", "notify"} {
		status, body := listTools(t, access.URL, map[string]string{"Authorization": "Bearer " + access.Token, core.ToolNamesHeader: names})
		if status != http.StatusBadRequest || !strings.Contains(body, core.ToolNamesHeader) {
			t.Errorf("%s %q: %d %s, want 400 saying why", core.ToolNamesHeader, names, status, body)
		}
	}
}

// A turn opened for some of the server's tools (a runner's, narrowed to
// those its gateway answers) lists and is told only those.
func TestATurnSeesOnlyTheToolsItWasOpenedFor(t *testing.T) {
	for _, tc := range []struct {
		name string
		only []string
		want []string
	}{
		{"all", nil, []string{core.ToolAskUser, core.ToolNotify, core.ToolSchedule, core.ToolSendFile}},
		{"narrowed", []string{core.ToolNotify, core.ToolSendFile, "unknown"}, []string{core.ToolNotify, core.ToolSendFile}},
		{"none", []string{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t, core.AllAgentTools)
			access, closeTurn := openHere(s, &fakeActions{}, tc.only)
			defer closeTurn()
			cs, err := connect(t, access.URL, access.Token)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			listed := toolNames(t, cs)
			told := slices.Sorted(slices.Values(access.Tools))
			if !slices.Equal(listed, tc.want) || !slices.Equal(told, tc.want) {
				t.Errorf("listed %q, told %q; want %q", listed, told, tc.want)
			}
		})
	}
}

// A connection that never finishes its request's headers is closed: any
// process of the machine may connect, token or not. Before, 500 such
// connections stayed open for as long as their clients liked.
func TestHalfSentRequestsAreClosed(t *testing.T) {
	t.Parallel()
	s, err := StartWithin(core.AllAgentTools, slog.New(slog.DiscardHandler),
		Timeouts{ReadHeader: 50 * time.Millisecond, Read: time.Second, Idle: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	access, closeTurn := openHere(s, &fakeActions{}, nil)
	t.Cleanup(closeTurn)
	u, err := url.Parse(access.URL)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "POST /mcp HTTP/1.1\r\nHost: "+u.Host+"\r\nAuthor"); err != nil {
		t.Fatal(err)
	}
	// The deadline only keeps a failing test from hanging: the server
	// closes the connection long before it.
	conn.SetReadDeadline(time.Now().Add(time.Minute))
	n, err := io.Copy(io.Discard, conn)
	if err != nil {
		t.Errorf("reading the half-sent request's connection: %d bytes, %v; want it closed by the server", n, err)
	}
}
