package remote_test

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/jake-bot/jake-bot/core"
)

// gitInit makes dir a repository with every file in it committed.
func gitInit(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."},
		{"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "first"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// /diff and /file in a conversation on a runner read its workdir there,
// checked there: a file larger than a NATS message comes whole, in parts;
// a patch larger than one is shown cut, and said to be; the runner's
// secrets, paths outside the user's roots there and a workdir outside git
// are refused with the runner's words.
func TestDiffAndFileOnARunner(t *testing.T) {
	t.Parallel()
	// A small max_payload, so that a file and a patch need several.
	w := &world{t: t, url: runNATS(t, &server.Options{MaxPayload: 64 << 10}), convs: core.NewConversations()}
	box2 := w.startRunner(runnerOpts{name: "box2", secret: "box2-secret-value"})
	w.startGateway()
	w.waitOnline("box2")
	app := box2.app()
	writeFile(t, filepath.Join(app, "main.go"), []byte("package main\n"))
	gitInit(t, app)

	w.say("/claude start box2:" + app)
	w.expect("conversation started in box2:" + app)
	w.say("/diff")
	w.expect("No changes since HEAD")

	writeFile(t, filepath.Join(app, "main.go"), []byte("package main\n\nfunc main() { println(\"<hello & bye>\") }\n"))
	w.say("/diff")
	w.expect("Changes since HEAD", "main.go | 2 ++", `+func main() { println("<hello & bye>") }`)

	// 150 KB of lines that JSON would escape: five parts of a 64 KiB payload.
	big := bytes.Repeat([]byte("<a&b>\n"), 25_000)
	writeFile(t, filepath.Join(app, "main.go"), big)
	w.say("/diff")
	got := w.expect("Changes since HEAD", "The patch is 1")
	if !strings.Contains(got, "its first") || !strings.Contains(got, "+<a&b>") {
		t.Errorf("a cut patch shown as:\n%.300s", got)
	}
	select {
	case f := <-w.gw.rec.Files():
		t.Errorf("a cut patch was attached as %s", f.Name)
	default:
	}

	data := make([]byte, 200_000)
	for i := range data {
		data[i] = byte(rand.IntN(256))
	}
	writeFile(t, filepath.Join(app, "build.bin"), data)
	w.say("/file build.bin")
	if f := recv(t, w.gw.rec.Files(), "build.bin"); f.Name != "build.bin" || !bytes.Equal(f.Data, data) {
		t.Errorf("sent %s, %d bytes (equal: %v), want build.bin, %d bytes", f.Name, len(f.Data), bytes.Equal(f.Data, data), len(data))
	}

	writeFile(t, filepath.Join(app, "notes.txt"), append(bytes.Repeat([]byte("x"), 50_000), "key box2-secret-value\n"...))
	for _, tt := range []struct{ say, want string }{
		{"/file notes.txt", "notes.txt holds one of box2's secrets"},
		{"/file ../../../../../../etc/passwd", "outside the directories you may work in"},
		{"/file missing.txt", "missing.txt: no such file or directory"},
		{"/file .", "is not a file"},
	} {
		w.say(tt.say)
		w.expect(tt.want)
	}

	plain := mkdir(t, box2.roots[0], "plain")
	w.say("/claude start box2:" + plain)
	w.expect("conversation started in box2:" + plain)
	w.say("/diff")
	w.expect("not in a git repository")
}
