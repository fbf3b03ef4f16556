package remote_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
	w := &world{t: t, url: runNATS(t, &server.Options{MaxPayload: 64 << 10}), convs: core.NewState()}
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

	// A forged request for a later part of it gets no secret either: each
	// part is checked, with its edges. (Parts hold 36 KiB here.)
	fi, err := os.Stat(filepath.Join(app, "notes.txt"))
	if err != nil {
		t.Fatal(err)
	}
	forger := connect(t, w.url)
	for _, offset := range []int64{1, 36_000, 50_005} {
		reply := request(t, forger, "jakebot.v4.runner.box2.file", fmt.Sprintf(`{"workdir":%q,"path":"notes.txt","admin":true,"max":1000000,"offset":%d,"size":%d,"mod_time":%d}`,
			app, offset, fi.Size(), fi.ModTime().UnixNano()))
		e, _ := reply["error"].(map[string]any)
		data, _ := reply["data"].(string)
		switch {
		case offset == 1 && (e != nil || data == ""):
			t.Errorf("the part at 1, which holds no secret: %.200v", reply)
		case offset > 1 && (e == nil || !strings.Contains(e["message"].(string), "holds one of box2's secrets")):
			t.Errorf("a forged part at %d, which holds the secret or its end: %.200v", offset, reply)
		}
	}

	plain := mkdir(t, box2.roots[0], "plain")
	w.say("/claude start box2:" + plain)
	w.expect("conversation started in box2:" + plain)
	w.say("/diff")
	w.expect("not in a git repository")
}

// attachment is a file sent with a message.
func attachment(name string, kind core.AttachmentKind, data []byte) core.Attachment {
	return core.Attachment{Name: name, Kind: kind, Size: int64(len(data)), Open: func(context.Context) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}}
}

// Files sent with a message in a conversation on a runner are saved in
// the workdir's uploads folder there, in parts when larger than a NATS
// message, under clean names that overwrite nothing, and named in the
// prompt; images are passed to the CLI there. Over the runner's own limit
// nothing is saved, partial files included, and the message is not sent.
func TestFilesSentToARunner(t *testing.T) {
	t.Parallel()
	w := &world{t: t, url: runNATS(t, &server.Options{MaxPayload: 64 << 10}), convs: core.NewState()}
	box2 := w.startRunner(runnerOpts{name: "box2", maxUpload: 300_000})
	w.startGateway()
	w.waitOnline("box2")
	app := box2.app()
	w.say("/claude start box2:" + app)
	w.expect("conversation started in box2:" + app)

	shot := make([]byte, 150_000) // five parts
	for i := range shot {
		shot[i] = byte(rand.IntN(256))
	}
	w.gw.rec.Say(core.Message{Key: key(admin), Text: "what is wrong here?", Files: []core.Attachment{
		attachment("shot.png", core.FileImage, shot), attachment("../../etc/passwd", core.FileDocument, []byte("root:x")),
		attachment("shot.png", core.FileImage, []byte("PNG2")), attachment("empty.txt", core.FileDocument, nil)}})
	turn := recv(t, box2.plugin.Started(), "a turn on box2")
	w.expect("box2 echo: what is wrong here?")
	uploads, err := filepath.Glob(filepath.Join(app, ".jakebot", "uploads", "*"))
	if err != nil || len(uploads) != 1 {
		t.Fatalf("uploads folders: %v, %v", uploads, err)
	}
	rel, _ := filepath.Rel(app, uploads[0])
	want := "what is wrong here?\n\nFiles I sent, saved in the workdir:\n" +
		"- " + rel + "/shot.png (image)\n- " + rel + "/_.._etc_passwd\n- " + rel + "/shot-1.png (image)\n- " + rel + "/empty.txt"
	if turn.Prompt != want {
		t.Errorf("prompt = %q, want %q", turn.Prompt, want)
	}
	if len(turn.Images) != 2 || turn.Images[0] != filepath.Join(uploads[0], "shot.png") || turn.Images[1] != filepath.Join(uploads[0], "shot-1.png") {
		t.Errorf("images = %q", turn.Images)
	}
	for name, data := range map[string][]byte{"shot.png": shot, "_.._etc_passwd": []byte("root:x"), "shot-1.png": []byte("PNG2"), "empty.txt": nil} {
		if got, err := os.ReadFile(filepath.Join(uploads[0], name)); err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s: %d bytes, %v; want %d", name, len(got), err, len(data))
		}
	}

	// Over box2's 300,000 bytes together: refused when the second file
	// passes it, the first one not kept.
	w.gw.rec.Say(core.Message{Key: key(admin), Text: "and these?", Files: []core.Attachment{
		attachment("one.bin", core.FileDocument, shot), attachment("two.bin", core.FileDocument, append(slices.Clone(shot), 1))}})
	w.expect("over box2's limit of 300000 bytes", "your message was not sent")
	left, _ := os.ReadDir(uploads[0])
	if len(left) != 4 {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		t.Errorf("the uploads folder holds %q, want the 4 files of the first message only", names)
	}

	// A voice note is heard here, where TRANSCRIBE_CMD is (none in this
	// test), and kept there.
	w.gw.rec.Say(core.Message{Key: key(admin), Files: []core.Attachment{attachment("note.ogg", core.FileVoice, []byte("OGG"))}})
	w.expect("voice notes need TRANSCRIBE_CMD", "Your note is saved at "+filepath.Join(uploads[0], "note.ogg"))
	select {
	case turn := <-box2.plugin.Started():
		t.Errorf("a refused message ran a turn: %q", turn.Prompt)
	default:
	}
}

// An event larger than the server's max_payload still reaches the chat: a
// text in pieces, whole; a tool's output cut short, saying so. (It could
// not be sent at all, and the turn never ended.)
func TestEventsLargerThanAMessage(t *testing.T) {
	t.Parallel()
	// Room for 8 KiB of events a message.
	w := &world{t: t, url: runNATS(t, &server.Options{MaxPayload: 24 << 10}), convs: core.NewState()}
	box2 := w.startRunner(runnerOpts{name: "box2"})
	w.startGateway()
	w.waitOnline("box2")
	w.startOn(box2)
	wire := sniff(t, w.url)
	w.say("big")
	w.expect("$0.0100") // the end
	if n := strings.Count(strings.Join(w.gw.rec.Messages(), ""), "<a & b>"); n != 3_750 {
		t.Errorf("the chat shows the text's line %d times, want 3750", n)
	}
	if !strings.Contains(wire(), "bytes cut: too large for one NATS message") {
		t.Error("the tool's output was not said to be cut")
	}
}
