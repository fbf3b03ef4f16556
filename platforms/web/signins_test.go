package web_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/jake-bot/jake-bot/platforms/web"
	"github.com/jake-bot/jake-bot/plugins/remote"
	"github.com/jake-bot/jake-bot/plugins/remote/remotetest"
)

// signInsOn returns a web.SignIns in the NATS server at url, on a
// connection of its own, as each gateway has.
func signInsOn(t *testing.T, url string) web.SignIns {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	s, err := remote.OpenWebSignIns(context.Background(), nc, web.SessionTTL)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A browser signed in on one gateway is signed in on another on the same
// NATS server (a standby that took over): its page and its CSRF token
// work there. A cookie neither gateway made is refused by both.
func TestSignInsSharedThroughNATS(t *testing.T) {
	t.Parallel()
	url := remotetest.NATS(t)
	site := func() *site {
		return newSiteFrom(t, siteConfig{plugin: newEchoPlugin(), opts: func(o *web.Options) { o.SignIns = signInsOn(t, url) }})
	}
	first, second := site(), site()
	b := first.signIn()

	// The jar holds the cookie for 127.0.0.1, whatever the port: the
	// second gateway gets the first one's cookie.
	resp, err := b.http.Get(second.url + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), b.csrf) {
		t.Fatalf("the second gateway answered the first one's sign-in with %s, want the page with its CSRF token", resp.Status)
	}
	b.s = second
	b.newChannel() // a change, its CSRF token checked

	req, _ := http.NewRequest(http.MethodGet, second.url+"/", nil)
	req.AddCookie(&http.Cookie{Name: "jakebot_session", Value: strings.Repeat("ab", 32)})
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a made-up cookie: %s; want 401", resp.Status)
	}
}
