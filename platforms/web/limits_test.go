package web_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/platforms/web"
)

// A message holds at most 64 files, as on a runner: a body of tiny parts
// is refused whole, before anything is saved or run.
func TestUploadFilesAreCapped(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	b := s.signIn()
	st := b.events()
	c := b.newChannel()
	b.say(c, "/claude start")
	st.botSays(c, "conversation started")
	uploads := filepath.Join(s.root, ".jakebot", "uploads")

	files := make([]upFile, 65)
	for i := range files {
		files[i] = upFile{"tiny.txt", "text/plain", ""}
	}
	status, text := b.upload(c, "sixty-five", files...)
	if status != http.StatusRequestEntityTooLarge || text != "At most 64 files in one message: nothing was sent." {
		t.Errorf("65 files: %d %q", status, text)
	}
	if _, err := os.Stat(uploads); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused files were saved (%v)", err)
	}
	if status, _ := b.upload(c, "sixty-four", files[:64]...); status != http.StatusAccepted {
		t.Fatalf("64 files: %d", status)
	}
	st.botSays(c, "echo: sixty-four")
	if turns := s.plugin.Turns(); len(turns) != 1 || strings.Count(turns[0].Prompt, "tiny") != 64 {
		t.Errorf("%d turns, want the one of 64 files", len(turns))
	}
}

// Wrong sign-ins are throttled per client address: after five in a
// minute the address gets 429, even with the right token, until the
// minute ends; another address is not held up; each address's minute is
// logged once, not each failure.
func TestWrongSignInsAreThrottled(t *testing.T) {
	t.Parallel()
	clock := coretest.NewManualClock()
	s := newSiteFrom(t, siteConfig{plugin: newEchoPlugin(), opts: func(o *web.Options) { o.Clock = clock }})
	from := func(ip string) *http.Client {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
		return &http.Client{Transport: &http.Transport{DialContext: d.DialContext},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	one, two := from("127.0.0.1"), from("127.0.0.2")
	signIn := func(c *http.Client, tok string, want int) {
		t.Helper()
		resp, err := c.Get(s.url + "/login?token=" + tok)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("sign-in with %q: %s %q, want %d", tok, resp.Status, body, want)
		}
		if want == http.StatusTooManyRequests && (resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "Too many wrong sign-ins")) {
			t.Errorf("429 with Retry-After %q: %q", resp.Header.Get("Retry-After"), body)
		}
	}
	refusals := func() int { return strings.Count(s.logged(), "web sign-in refused") }

	for range 5 {
		signIn(one, "wrong", http.StatusUnauthorized)
	}
	signIn(one, "wrong", http.StatusTooManyRequests)
	signIn(one, token, http.StatusTooManyRequests)
	signIn(two, "wrong", http.StatusUnauthorized)
	signIn(two, token, http.StatusSeeOther)
	if n := refusals(); n != 2 {
		t.Errorf("%d refusals logged, want one per address:\n%s", n, s.logged())
	}

	clock.Advance(time.Minute)
	signIn(one, "wrong", http.StatusUnauthorized)
	signIn(one, token, http.StatusSeeOther)
	if n := refusals(); n != 3 || !strings.Contains(s.logged(), "refused_in_the_window_before=5") {
		t.Errorf("%d refusals logged, want a third saying how many the minute before had:\n%s", n, s.logged())
	}
}

// A connection that sends half a request's headers, or none after a
// request, is closed by the server: neither holds a connection for ever.
func TestIdleConnectionsAreClosed(t *testing.T) {
	t.Parallel()
	s := newSiteFrom(t, siteConfig{plugin: newEchoPlugin(), opts: func(o *web.Options) {
		o.ReadHeaderTimeout, o.IdleTimeout = 50*time.Millisecond, 50*time.Millisecond
	}})
	host := strings.TrimPrefix(s.url, "http://")
	for _, tc := range []struct{ name, send string }{
		{"half a request", "GET /login HTTP/1.1\r\nHost: " + host + "\r\n"},
		{"idle after a request", "GET /login HTTP/1.1\r\nHost: " + host + "\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", host)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			// Only a bound on the test, never reached when the server
			// closes the connection.
			conn.SetReadDeadline(time.Now().Add(30 * time.Second))
			if _, err := io.WriteString(conn, tc.send); err != nil {
				t.Fatal(err)
			}
			r := bufio.NewReader(conn)
			if strings.HasSuffix(tc.send, "\r\n\r\n") {
				resp, err := http.ReadResponse(r, nil)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			_, err = io.Copy(io.Discard, r)
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Errorf("the server kept the connection open: %v", err)
			}
		})
	}
}

// Without a terminal to print it on, the sign-in URL is not printed and
// the log says how to get it; the token is nowhere in the log (checked
// when the site stops).
func TestSignInURLOnlyWhereAsked(t *testing.T) {
	t.Parallel()
	s := newSiteFrom(t, siteConfig{plugin: newEchoPlugin(), opts: func(o *web.Options) { o.SignIn = nil }})
	s.signIn() // the server is up
	if !strings.Contains(s.logged(), "`jakebot web-url` prints it") {
		t.Errorf("the log does not say how to get the sign-in URL:\n%s", s.logged())
	}
	s.stop()
	if s.printed.Len() != 0 {
		t.Errorf("printed %q", s.printed)
	}
}
