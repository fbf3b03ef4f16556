package remote_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jake-bot/jake-bot/core"
)

// twoRoots is a runner's roots: default (the first, with app/) and other
// (with other/), which only admins may work in.
func twoRoots(t *testing.T) (def, other string) {
	def, other = tempDir(t), tempDir(t)
	mkdir(t, def, "app")
	mkdir(t, other, "other")
	return def, other
}

// The gateway's rule for who works where holds on a runner too: users
// other than admins work only in the runner's default root, at /start,
// /workdir, every turn, listing and resuming; admins in all its roots.
func TestNonAdminsOnARunner(t *testing.T) {
	t.Parallel()
	def, other := twoRoots(t)
	w := newWorld(t)
	box2 := w.startRunner(runnerOpts{name: "box2", roots: []string{def, other}})
	w.startGateway()
	w.waitOnline("box2")
	app, elsewhere := filepath.Join(def, "app"), filepath.Join(other, "other")
	mine := key(user)

	w.sayAs(mine, "", "/claude start box2:"+elsewhere)
	w.expect("only admins may work in the other allowed roots")
	w.sayAs(mine, "", "/claude start box2:"+app)
	w.expect("started in box2:" + app)
	w.sayAs(mine, "", "/workdir set box2:"+elsewhere)
	w.expect("only admins may work in the other allowed roots")
	w.sayAs(mine, "", "hello")
	w.expect("box2 echo: hello")
	recv(t, box2.plugin.Started(), "a turn on box2")

	// An admin's conversation in the other root, in a thread anyone may
	// write in: the admin's turns run, another user's are refused.
	shared := core.ConversationKey{Platform: "fake", Channel: "c", Thread: "t"}
	w.sayAs(shared, admin, "/claude start box2:"+elsewhere)
	w.expect("started in box2:" + elsewhere)
	w.sayAs(shared, admin, "from the admin")
	w.expect("box2 echo: from the admin", "$0.0100") // the turn's end: the conversation may move
	recv(t, box2.plugin.Started(), "a turn on box2")
	w.sayAs(shared, user, "from someone else")
	w.expect("only admins may work in the other allowed roots")
	w.sayAs(shared, user, "/claude conversations")
	w.expect("only admins may work in the other allowed roots")
	w.sayAs(shared, user, "/resume "+session)
	w.expect("only admins may work in the other allowed roots")
	w.sayAs(shared, admin, "/claude conversations")
	w.expect("earlier in other")
	select {
	case turn := <-box2.plugin.Started():
		t.Errorf("the runner ran a refused turn: %+v", turn)
	default:
	}
}

// request sends a request straight to a runner, as a forger with the
// server's leave would, and decodes the reply.
func request(t *testing.T, nc *nats.Conn, subject, data string) map[string]any {
	t.Helper()
	m, err := nc.Request(subject, []byte(data), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var reply map[string]any
	if err := json.Unmarshal(m.Data, &reply); err != nil {
		t.Fatal(err)
	}
	return reply
}

// A runner keeps its own rules whatever a request says: no workdir
// outside its roots (a symlink out of them included), the other roots
// and bypass modes only for admins.
func TestRunnerRefusesForgedRequests(t *testing.T) {
	t.Parallel()
	def, other := twoRoots(t)
	outside := tempDir(t)
	if err := os.Symlink(outside, filepath.Join(def, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := newWorld(t)
	box2 := w.startRunner(runnerOpts{name: "box2", roots: []string{def, other}})
	w.startGateway() // makes the event stream
	w.waitOnline("box2")
	forger := connect(t, w.url)
	app, elsewhere := filepath.Join(def, "app"), filepath.Join(other, "other")
	turn := func(admin bool, workdir, mode string) string {
		req, _ := json.Marshal(map[string]any{"id": "forged" + strings.ReplaceAll(mode, "-", ""), "plugin": "claude", "admin": admin,
			"turn": map[string]any{"Workdir": workdir, "Prompt": "hello", "Mode": mode}})
		return string(req)
	}
	for _, tc := range []struct {
		name, subject, data, want string
	}{
		{"outside the roots", "turn", turn(true, outside, ""), "outside the allowed roots"},
		{"a symlink out of them", "turn", turn(true, filepath.Join(def, "link"), ""), "outside the allowed roots"},
		{"dot-dot out of them", "turn", turn(true, app+"/../../..", ""), "outside the allowed roots"},
		{"another root, not an admin", "turn", turn(false, elsewhere, ""), "only admins may work in the other allowed roots"},
		{"a bypass mode, not an admin", "turn", turn(false, app, "yolo"), "only admins may choose it"},
		{"another plugin", "turn", `{"id":"x1","plugin":"rm","turn":{"Workdir":"` + app + `"}}`, `no plugin "rm"`},
		{"malformed", "turn", `{"id":`, "malformed turn request"},
		{"a bad turn id", "turn", `{"id":"a.b","plugin":"claude","turn":{"Workdir":"` + app + `"}}`, "malformed turn request"},
		{"resolve, not an admin", "resolve", `{"path":"` + elsewhere + `"}`, "only admins"},
		{"resolve outside", "resolve", `{"path":"/etc","admin":true}`, "outside the allowed roots"},
		{"listing, not an admin", "conversations", `{"plugin":"claude","workdir":"` + elsewhere + `"}`, "only admins"},
		{"diff, not an admin", "diff", `{"workdir":"` + elsewhere + `"}`, "only admins"},
		{"diff outside", "diff", `{"workdir":"/etc","admin":true}`, "outside the allowed roots"},
		{"a file, not an admin", "file", `{"workdir":"` + elsewhere + `","path":"x","max":100}`, "only admins"},
		{"a file out of the workdir", "file", `{"workdir":"` + app + `","path":"../link/secret","max":100,"admin":true}`, "outside the directories you may work in"},
		{"an upload, not an admin", "upload", `{"id":"u1","workdir":"` + elsewhere + `","name":"x"}`, "only admins"},
		{"an upload outside", "upload", `{"id":"u2","workdir":"` + outside + `","name":"x","admin":true}`, "outside the allowed roots"},
		{"a part of no upload", "upload", `{"id":"u3","file":1,"offset":5,"data":"eA=="}`, "no such upload"},
		{"a commit of no upload", "upload", `{"id":"u4","commit":true}`, "no such upload"},
		{"a bad upload id", "upload", `{"id":"a.b","workdir":"` + app + `"}`, "malformed upload"},
	} {
		reply := request(t, forger, "jakebot.v4.runner.box2."+tc.subject, tc.data)
		if msg, _ := reply["error"].(map[string]any)["message"].(string); !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, reply, tc.want)
		}
	}
	// One message's files are bounded in number as well as in bytes:
	// empty ones would otherwise hold a descriptor each.
	for i := 0; ; i++ {
		reply := request(t, forger, "jakebot.v4.runner.box2.upload", fmt.Sprintf(`{"id":"many","workdir":%q,"file":%d,"name":"f"}`, app, i))
		e, _ := reply["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if i < 64 && msg != "" || i == 64 && !strings.Contains(msg, "takes at most 64 files") {
			t.Fatalf("file %d of one upload: %v", i+1, reply)
		}
		if i == 64 {
			break
		}
	}
	select {
	case turn := <-box2.plugin.Started():
		t.Fatalf("the runner ran a forged turn: %+v", turn)
	default:
	}
	// An admin may: the other root, and a bypass mode. A turn's images
	// are only what was uploaded to its workdir.
	uploaded := filepath.Join(mkdir(t, elsewhere, ".jakebot", "uploads", "2026-01-02"), "shot.png")
	if err := os.WriteFile(uploaded, []byte("PNG"), 0o644); err != nil {
		t.Fatal(err)
	}
	req, _ := json.Marshal(map[string]any{"id": "forgedimages", "plugin": "claude", "admin": true,
		"turn": map[string]any{"Workdir": elsewhere, "Prompt": "hello", "Mode": "yolo",
			"Images": []string{"/etc/hostname", filepath.Join(outside, "secret"), uploaded, filepath.Join(def, "link", "secret")}}})
	if reply := request(t, forger, "jakebot.v4.runner.box2.turn", string(req)); reply["error"] != nil {
		t.Fatalf("an admin's turn was refused: %v", reply)
	}
	if got := recv(t, box2.plugin.Started(), "a turn on box2"); got.Workdir != elsewhere || got.Mode != "yolo" ||
		len(got.Images) != 1 || got.Images[0] != uploaded {
		t.Errorf("the runner ran %+v", got)
	}
}

// sniff records every message the server carries.
func sniff(t *testing.T, url string) (all func() string) {
	nc := connect(t, url)
	var mu sync.Mutex
	var b strings.Builder
	if _, err := nc.Subscribe(">", func(m *nats.Msg) {
		mu.Lock()
		defer mu.Unlock()
		b.WriteString(m.Subject + " " + string(m.Data) + "\n")
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return func() string {
		nc.Flush()
		mu.Lock()
		defer mu.Unlock()
		return b.String()
	}
}

// Secrets never travel: a runner blanks its own out of everything it
// sends (a CLI printing the runner's API key, a question, an error, its
// history's titles), and a gateway blanks its own out of the prompts and
// answers it sends.
func TestSecretsStayOnTheirMachine(t *testing.T) {
	t.Parallel()
	const runnerKey, gatewayToken = "sk-runner-key-0123456789", "gw-token-abcdefgh"
	w := newWorld(t)
	wire := sniff(t, w.url)
	w.gwSecrets = []string{gatewayToken}
	box2 := w.startRunner(runnerOpts{name: "box2", secret: runnerKey})
	w.startGateway()
	w.waitOnline("box2")

	w.startOn(box2)
	w.say("leak")
	w.expect("failed with " + core.Redacted)
	w.say("/claude conversations")
	w.expect("earlier in app " + core.Redacted)
	w.say("ask")
	w.expect("rm -rf build " + core.Redacted)
	w.say("/deny not with " + gatewayToken)
	w.expect("the answer was deny: not with " + core.Redacted)
	w.say("use " + gatewayToken + " please")
	w.expect("box2 echo: use " + core.Redacted + " please")

	for _, m := range w.gw.rec.Messages() {
		if strings.Contains(m, runnerKey) {
			t.Errorf("the chat got the runner's key: %s", m)
		}
	}
	seen := wire()
	if !strings.Contains(seen, "my key is "+core.Redacted) {
		t.Error("the sniffer saw no turn message: it proves nothing")
	}
	for _, secret := range []string{runnerKey, gatewayToken} {
		if strings.Contains(seen, secret) {
			t.Errorf("%s travelled over NATS", secret)
		}
	}
}

// A session runs one turn at a time on a runner: a turn that resumes a
// session whose earlier turn still runs there (its gateway gave up on it)
// stops that one first.
func TestOneTurnPerSession(t *testing.T) {
	t.Parallel()
	w, box2 := newWorldWithBox2(t)
	forger := connect(t, w.url)
	turn := func(id, prompt string) {
		req := `{"id":"` + id + `","plugin":"claude","admin":true,"turn":{"Workdir":"` + box2.app() + `","Prompt":"` + prompt + `","ResumeToken":"` + session + `"}}`
		if reply := request(t, forger, "jakebot.v4.runner.box2.turn", req); reply["error"] != nil {
			t.Fatalf("turn %s refused: %v", id, reply)
		}
	}
	turn("first", "wait")
	recv(t, box2.plugin.Started(), "a turn on box2")
	turn("second", "hello")
	if cause := recv(t, box2.stopped, "the turn to stop"); cause == nil || !strings.Contains(cause.Error(), "newer turn of its session") {
		t.Errorf("the first turn ended by %v", cause)
	}
	recv(t, box2.plugin.Started(), "a turn on box2")
}
