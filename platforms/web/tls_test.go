package web_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/web"
)

// selfSigned writes a throwaway certificate for 127.0.0.1 and its key to
// dir, and returns their paths and a client that trusts the certificate.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, client *http.Client) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "jakebot test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	for path, block := range map[string]*pem.Block{certFile: {Type: "CERTIFICATE", Bytes: der}, keyFile: {Type: "EC PRIVATE KEY", Bytes: keyDER}} {
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

// With WEB_TLS_CERT and WEB_TLS_KEY the page is served over HTTPS: the
// sign-in URL says https, the session cookie is Secure, a conversation
// streams as over HTTP, and plain HTTP gets nothing.
func TestHTTPS(t *testing.T) {
	t.Parallel()
	certFile, keyFile, client := selfSigned(t, t.TempDir())
	s := newSiteFrom(t, siteConfig{plugin: newEchoPlugin(), client: client,
		web: func(c *web.Config) { c.TLSCert, c.TLSKey = certFile, keyFile }})
	noRedirect := *client
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := noRedirect.Get(s.url + "/login?token=" + token)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// Printed before serving, so by now.
	if !strings.HasPrefix(s.url, "https://") || !strings.HasPrefix(s.printed.String(), "Web: sign in at "+s.url+"/login?token=") {
		t.Errorf("site %s printed %q, want an https sign-in URL", s.url, s.printed.String())
	}
	if cookie := resp.Header.Get("Set-Cookie"); resp.StatusCode != http.StatusSeeOther || !strings.Contains(cookie, "; Secure") {
		t.Errorf("sign-in over HTTPS = %s, cookie %q; want a Secure cookie", resp.Status, cookie)
	}

	b := s.signIn()
	st := b.events()
	c := b.newChannel()
	b.say(c, "/claude start")
	st.botSays(c, "conversation started")
	b.say(c, "over TLS")
	st.botSays(c, "echo: over TLS")
	// The page's own https origin is its own; a foreign one is refused.
	if resp := b.post("/api/channels", "application/json", nil, http.Header{"Origin": {s.url}}); resp.StatusCode != http.StatusCreated {
		t.Errorf("a request from the page's https origin: %s", resp.Status)
	}
	if resp := b.post("/api/channels", "application/json", nil, http.Header{"Origin": {"http://" + strings.TrimPrefix(s.url, "https://")}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a request from the plain-HTTP origin: %s, want 403", resp.Status)
	}

	if resp, err := http.Get("http://" + strings.TrimPrefix(s.url, "https://") + "/login?token=" + token); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusSeeOther || resp.Header.Get("Set-Cookie") != "" {
			t.Errorf("plain HTTP to the TLS port signed in: %s", resp.Status)
		}
	}
}

// WEB_ADMIN makes the web user an admin: /status all and /cost all answer;
// without it they are refused.
func TestWebAdmin(t *testing.T) {
	t.Parallel()
	for _, admin := range []bool{false, true} {
		s := newSiteFrom(t, siteConfig{plugin: newEchoPlugin(), web: func(c *web.Config) { c.Admin = admin }})
		b := s.signIn()
		st := b.events()
		c := b.newChannel()
		for cmd, want := range map[string]string{"/status all": "active conversations", "/cost all": "Spend today"} {
			if !admin {
				want = cmd + " is for admins"
			}
			b.say(c, cmd)
			st.botSays(c, want)
		}
	}
	access := core.NewAccess()
	web.Config{Admin: true}.Grant(access)
	if !access.IsAdmin(web.Name, web.User) || !access.Allowed(web.Name, web.User) {
		t.Error("WEB_ADMIN=true does not make the web user an allowed admin")
	}
}
