package matrixtest

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/id"
)

// ServerName is the homeserver's name: users are @name:localhost.
const ServerName = "localhost"

// startTimeout bounds Dendrite's start and each registration.
const startTimeout = time.Minute

// Server is a Dendrite homeserver running for one test.
type Server struct {
	// URL is the client API's address, http://127.0.0.1:port.
	URL    string
	secret string
	logs   string
}

// User is an account registered on the server, with a client logged in
// as it.
type User struct {
	ID     id.UserID
	Token  string
	Client *mautrix.Client
}

// binary returns Dendrite's path, or skips t (fails it when
// JAKEBOT_REQUIRE_MATRIX=1).
func binary(t testing.TB) string {
	t.Helper()
	path := os.Getenv("JAKEBOT_DENDRITE")
	if path == "" {
		path, _ = exec.LookPath("dendrite")
	}
	if path != "" {
		return path
	}
	msg := "no Dendrite: set JAKEBOT_DENDRITE or put dendrite on PATH (go install github.com/matrix-org/dendrite/cmd/dendrite@v0.13.8)"
	if os.Getenv("JAKEBOT_REQUIRE_MATRIX") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// Start runs Dendrite on a free loopback port in a temporary directory
// until t ends, and returns once its client API answers. Its rate limit
// is Dendrite's own (20 requests per 500ms per client), for every user
// but those named exempt (their local parts): the people a test speaks
// for, so that only the bot meets it.
func Start(t testing.TB, exempt ...string) *Server {
	t.Helper()
	bin := binary(t)
	// A free port is not reserved: another test binary's Dendrite may
	// bind it first, and ours then exits. Try again on another port.
	for attempt := 1; ; attempt++ {
		if s := start(t, bin, exempt); s != nil {
			return s
		}
		if attempt == 5 {
			t.Fatal("dendrite exited at start 5 times")
		}
	}
}

// start is Start's one try: nil when this Dendrite exited at start.
func start(t testing.TB, bin string, exempt []string) *Server {
	t.Helper()
	dir := t.TempDir()
	port := freePort(t)
	key := filepath.Join(dir, "matrix_key.pem")
	seed := make([]byte, ed25519.SeedSize)
	_, _ = rand.Read(seed)
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "MATRIX PRIVATE KEY", Headers: map[string]string{"Key-ID": "ed25519:test"}, Bytes: seed}), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &Server{URL: "http://127.0.0.1:" + port, secret: hex.EncodeToString(seed[:16]), logs: filepath.Join(dir, "dendrite.log")}
	var ids []string
	for _, name := range exempt {
		ids = append(ids, fmt.Sprintf("%q", "@"+name+":"+ServerName))
	}
	config := regexp.MustCompile(`\{[a-z ]+\}`).ReplaceAllStringFunc(configTemplate, func(p string) string {
		switch p = strings.Trim(p, "{}"); p {
		case "key":
			return key
		case "dir":
			return dir
		case "secret":
			return fmt.Sprintf("%q", s.secret)
		case "exempt":
			return strings.Join(ids, ", ")
		}
		return "\n    connection_string: file:" + filepath.Join(dir, strings.TrimPrefix(p, "db ")+".db")
	})
	cfgPath := filepath.Join(dir, "dendrite.yaml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	logs, err := os.Create(s.logs)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", cfgPath, "--http-bind-address", "127.0.0.1:"+port)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, logs, logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start dendrite: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		logs.Close()
		if t.Failed() {
			s.dumpLogs(t)
		}
	})
	if !s.waitReady(t, exited, cmd.Process.Pid, port) {
		return nil
	}
	return s
}

// waitReady polls /_matrix/client/versions until Dendrite answers: it is
// another process, whose readiness nothing else tells. It reports false
// when the process exited at start; an answer counts only once the
// process holds the port's listening socket, since another Dendrite that
// took the port would answer in its stead (with another shared secret:
// "bad mac").
func (s *Server) waitReady(t testing.TB, exited <-chan error, pid int, port string) bool {
	t.Helper()
	deadline := time.Now().Add(startTimeout)
	for delay := 10 * time.Millisecond; ; delay = min(delay*2, 500*time.Millisecond) {
		resp, err := http.Get(s.URL + "/_matrix/client/versions")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && listensOn(pid, port) {
				return true
			}
		}
		select {
		case err := <-exited:
			s.dumpLogs(t)
			t.Logf("dendrite exited at start: %v", err)
			return false
		case <-time.After(delay):
		}
		if time.Now().After(deadline) {
			s.dumpLogs(t)
			t.Fatalf("dendrite did not answer within %v", startTimeout)
		}
	}
}

// listensOn reports whether process pid holds the socket listening on
// 127.0.0.1:port, from /proc (true where there is none to ask).
func listensOn(pid int, port string) bool {
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return false
	}
	table, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return true
	}
	local, inode := fmt.Sprintf("0100007F:%04X", n), ""
	for _, line := range strings.Split(string(table), "\n")[1:] {
		if f := strings.Fields(line); len(f) > 9 && f[1] == local && f[3] == "0A" { // 0A: LISTEN
			inode = f[9]
			break
		}
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if inode == "" || err != nil {
		return false
	}
	for _, fd := range fds {
		if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && l == "socket:["+inode+"]" {
			return true
		}
	}
	return false
}

func (s *Server) dumpLogs(t testing.TB) {
	data, _ := os.ReadFile(s.logs)
	if len(data) > 8000 {
		data = data[len(data)-8000:]
	}
	t.Logf("dendrite's log (its end):\n%s", data)
}

// Register creates the account @name:localhost through the shared-secret
// registration (/_synapse/admin/v1/register), and returns it with a
// client logged in as it.
func (s *Server) Register(t testing.TB, name string) User {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	var nonce struct {
		Nonce string `json:"nonce"`
	}
	if err := s.call(ctx, http.MethodGet, "/_synapse/admin/v1/register", nil, &nonce); err != nil {
		t.Fatalf("register %s: %v", name, err)
	}
	password := "password-" + name
	mac := hmac.New(sha1.New, []byte(s.secret))
	mac.Write([]byte(strings.Join([]string{nonce.Nonce, name, password, "notadmin"}, "\x00")))
	var reg struct {
		UserID      id.UserID `json:"user_id"`
		AccessToken string    `json:"access_token"`
	}
	body := map[string]any{"nonce": nonce.Nonce, "username": name, "password": password, "admin": false, "mac": hex.EncodeToString(mac.Sum(nil))}
	if err := s.call(ctx, http.MethodPost, "/_synapse/admin/v1/register", body, &reg); err != nil {
		t.Fatalf("register %s: %v", name, err)
	}
	cli, err := mautrix.NewClient(s.URL, reg.UserID, reg.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	return User{ID: reg.UserID, Token: reg.AccessToken, Client: cli}
}

func (s *Server) call(ctx context.Context, method, path string, in, out any) error {
	var body bytes.Buffer
	if in != nil {
		_ = json.NewEncoder(&body).Encode(in)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.URL+path, &body)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e bytes.Buffer
		_, _ = e.ReadFrom(resp.Body)
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, e.String())
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// freePort returns a loopback port nothing listens on now.
func freePort(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// configTemplate is Dendrite's configuration (version 2): a SQLite
// database per component (Dendrite's single database is PostgreSQL's
// only), an in-memory JetStream, no federation, registration by shared
// secret only. config fills in its {placeholders}.
const configTemplate = `version: 2
global:
  server_name: localhost
  private_key: {key}
  disable_federation: true
  jetstream:
    in_memory: true
    storage_path: {dir}
  presence:
    enable_inbound: false
    enable_outbound: false
  report_stats:
    enabled: false
client_api:
  registration_disabled: true
  guests_disabled: true
  registration_shared_secret: {secret}
  rate_limiting:
    enabled: true
    threshold: 20
    cooloff_ms: 500
    exempt_user_ids: [{exempt}]
federation_api:
  database: {db federationapi}
  key_perspectives: []
key_server:
  database: {db keyserver}
media_api:
  database: {db mediaapi}
  base_path: {dir}/media
  max_file_size_bytes: 10485760
mscs:
  database: {db mscs}
relay_api:
  database: {db relayapi}
room_server:
  database: {db roomserver}
sync_api:
  database: {db syncapi}
  search:
    enabled: false
user_api:
  account_database: {db userapi}
  bcrypt_cost: 4
logging:
  - type: std
    level: warn
`
