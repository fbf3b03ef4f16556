package core_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
)

// file is an attachment whose download returns data, or fails.
func file(name string, kind core.AttachmentKind, data string, declared int64) core.Attachment {
	return core.Attachment{Name: name, Kind: kind, Size: declared, Open: func(ctx context.Context) (io.ReadCloser, error) {
		if data == "FAIL" {
			return nil, errors.New("connection reset")
		}
		return io.NopCloser(strings.NewReader(data)), nil
	}}
}

func (f *routerFixture) send(text string, files ...core.Attachment) {
	f.handle(context.Background(), core.Message{Key: core.ConversationKey{Platform: "fake", User: "alice", Channel: "c"}, Text: text, Files: files})
}

func TestFilesAreSavedAndNamedInThePrompt(t *testing.T) {
	t.Parallel()
	f := newRouterFixtureWith(t, echo, nil, func(cfg *core.RouterConfig) {
		cfg.AttachmentMaxBytes = 10
		cfg.Transcribe = func(ctx context.Context, path string) (string, error) {
			data, err := os.ReadFile(path)
			return "heard " + string(data), err
		}
	})
	f.say("alice", "/fake start")
	f.expect("conversation started")
	uploads := filepath.Join(f.root, ".jakebot", "uploads", core.Day(coretest.Epoch))

	f.send("what is wrong here?", file("screen shot.png", core.FileImage, "PNG", 3), file("../../etc/passwd", core.FileDocument, "root:x", 0),
		file("screen shot.png", core.FileImage, "PNG2", 4))
	turn := <-f.plugin.Started()
	f.next()
	want := "what is wrong here?\n\nFiles I sent, saved in the workdir:\n" +
		"- .jakebot/uploads/" + core.Day(coretest.Epoch) + "/screen shot.png (image)\n" +
		"- .jakebot/uploads/" + core.Day(coretest.Epoch) + "/_.._etc_passwd\n" +
		"- .jakebot/uploads/" + core.Day(coretest.Epoch) + "/screen shot-1.png (image)"
	if turn.Prompt != want {
		t.Errorf("prompt = %q, want %q", turn.Prompt, want)
	}
	if len(turn.Images) != 2 || turn.Images[1] != filepath.Join(uploads, "screen shot-1.png") {
		t.Errorf("images = %q", turn.Images)
	}
	for name, data := range map[string]string{"screen shot.png": "PNG", "_.._etc_passwd": "root:x", "screen shot-1.png": "PNG2"} {
		if got, err := os.ReadFile(filepath.Join(uploads, name)); err != nil || string(got) != data {
			t.Errorf("%s = %q, %v; want %q", name, got, err, data)
		}
	}

	// A voice note's text is the prompt, shown back first.
	f.send("", file("my $(voice) note.ogg", core.FileVoice, "hello", 5))
	f.expect("🎤 Heard: heard hello")
	if turn := <-f.plugin.Started(); !strings.HasPrefix(turn.Prompt, "heard hello\n\nFiles I sent") {
		t.Errorf("voice prompt = %q", turn.Prompt)
	}
	f.next()

	// Too large (as declared, or as downloaded) or failed: refused, the
	// turn not run, nothing left on disk.
	for _, tc := range []struct {
		file core.Attachment
		want string
	}{
		{file("big.bin", core.FileDocument, "x", 11<<20), "big.bin is 11 MB, over the 10 bytes limit (ATTACHMENT_MAX_BYTES)"},
		{file("liar.bin", core.FileDocument, "01234567890", 1), "liar.bin is over the 10 bytes limit"},
		{file("broken.txt", core.FileDocument, "FAIL", 0), "broken.txt could not be downloaded (connection reset)"},
	} {
		f.send("look", file("ok.txt", core.FileDocument, "fine", 4), tc.file)
		f.expect(tc.want)
	}
	entries, _ := os.ReadDir(uploads)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "_.._etc_passwd my___voice__note.ogg screen shot-1.png screen shot.png" {
		t.Errorf("uploads = %q, want nothing from the refused messages", names)
	}
	select {
	case turn := <-f.plugin.Started():
		t.Errorf("a refused message ran a turn: %q", turn.Prompt)
	default:
	}
}

// A workdir whose .jakebot is a symlink (a repository may hold one) gets
// no file through it: the message is refused, and nothing is written
// where the link points.
func TestUploadsFollowNoSymlink(t *testing.T) {
	t.Parallel()
	f := newRouterFixture(t, echo)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(f.root, ".jakebot")); err != nil {
		t.Fatal(err)
	}
	f.say("alice", "/fake start")
	f.expect("conversation started")
	f.send("look", file("authorized_keys", core.FileDocument, "ssh-ed25519 AAAA", 16))
	f.expect(".jakebot is not a folder (a symlink?)")
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("written where the symlink points: %v", entries)
	}
	select {
	case turn := <-f.plugin.Started():
		t.Errorf("a refused message ran a turn: %q", turn.Prompt)
	default:
	}
}

func TestVoiceWithoutTranscriber(t *testing.T) {
	t.Parallel()
	f := newRouterFixture(t, echo)
	f.say("alice", "/fake start")
	f.expect("conversation started")
	f.send("", file("voice.ogg", core.FileVoice, "hello", 5))
	f.expect("voice notes need TRANSCRIBE_CMD")
}

func TestFileCommand(t *testing.T) {
	t.Parallel()
	f := newRouterFixtureWith(t, echo, nil, func(cfg *core.RouterConfig) {
		cfg.AttachmentMaxBytes = 100
		cfg.Redactor = core.NewRedactor([]string{"s3cr3t-token-value"})
	})
	f.say("alice", "/fake start")
	f.expect("conversation started")
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(f.root, "report.md"), []byte("# Report\n"), 0o644))
	must(os.WriteFile(filepath.Join(f.root, "big.log"), bytes.Repeat([]byte("x"), 101), 0o644))
	must(os.WriteFile(filepath.Join(f.root, "leak.txt"), []byte("token s3cr3t-token-value"), 0o644))
	must(os.Symlink("/etc/hostname", filepath.Join(f.root, "escape")))
	must(os.Mkdir(filepath.Join(f.root, "dir"), 0o755))
	// Opening a named pipe would wait for a writer: it is never opened.
	must(syscall.Mkfifo(filepath.Join(f.root, "pipe"), 0o644))
	must(os.WriteFile(filepath.Join(f.root, "empty"), nil, 0o644))
	f.say("alice", "/file report.md")
	sent := <-f.rec.Files()
	if sent.Name != "report.md" || string(sent.Data) != "# Report\n" {
		t.Errorf("sent %q %q", sent.Name, sent.Data)
	}
	for _, tc := range []struct{ arg, want string }{
		{"big.log", "big.log is 101 bytes, over the 100 bytes limit"},
		{"escape", "escape is outside the directories you may work in"},
		{"/etc/hostname", "outside the directories you may work in"},
		{"dir", "dir is not a file"},
		{"pipe", "pipe is not a file"},
		{"empty", "empty is empty"},
		{"missing.txt", "missing.txt: no such file or directory"},
		{"leak.txt", "holds one of the bot's secrets"},
	} {
		f.say("alice", "/file "+tc.arg)
		f.expect(tc.want)
	}
}

// A long /diff attaches the whole patch, secrets blanked, and keeps the
// summary in the message.
func TestDiffAttachesALongPatch(t *testing.T) {
	t.Parallel()
	f := newRouterFixtureWith(t, echo, nil, func(cfg *core.RouterConfig) {
		cfg.Redactor = core.NewRedactor([]string{"s3cr3t-token-value"})
	})
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", f.root, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v: %s", args, err, out)
		}
	}
	git("init", "-q")
	notes := filepath.Join(f.root, "notes.txt")
	if err := os.WriteFile(notes, []byte("first\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", ".")
	git("commit", "-qm", "first")
	var long strings.Builder
	for i := range 100 {
		fmt.Fprintf(&long, "line %d, s3cr3t-token-value\n", i)
	}
	if err := os.WriteFile(notes, []byte(long.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	f.say("alice", "/fake start")
	f.expect("conversation started")
	f.say("alice", "/diff")
	sent := <-f.rec.Files()
	if !strings.HasSuffix(sent.Name, ".diff") || !strings.Contains(string(sent.Data), "+line 99, [REDACTED]") ||
		strings.Contains(string(sent.Data), "s3cr3t") {
		t.Errorf("sent %s:\n%s", sent.Name, sent.Data)
	}
	f.expect("is attached as " + sent.Name)
}

// stallingReader gives its first half, then calls check once before the
// rest: a look at the disk in the middle of a download.
type stallingReader struct {
	data    string
	check   func()
	started bool
}

func (r *stallingReader) Read(p []byte) (int, error) {
	if r.data == "" {
		return 0, io.EOF
	}
	chunk := r.data
	if !r.started {
		chunk = r.data[:len(r.data)/2]
	} else if r.check != nil {
		r.check()
		r.check = nil
	}
	n := copy(p, chunk)
	r.data, r.started = r.data[n:], true
	return n, nil
}

// A download is written under a temporary name and takes its own only
// when complete: a crash midway leaves nothing half-written under it.
func TestADownloadTakesItsNameWhenComplete(t *testing.T) {
	t.Parallel()
	f := newRouterFixture(t, echo)
	f.say("alice", "/fake start")
	f.expect("conversation started")
	uploads := filepath.Join(f.root, ".jakebot", "uploads", core.Day(coretest.Epoch))
	var during []string
	checked := false
	slow := core.Attachment{Name: "log.txt", Open: func(context.Context) (io.ReadCloser, error) {
		return io.NopCloser(&stallingReader{data: "first half, second half", check: func() {
			checked = true
			entries, _ := os.ReadDir(uploads)
			for _, e := range entries {
				during = append(during, e.Name())
			}
		}}), nil
	}}
	f.send("read it", slow)
	<-f.plugin.Started()
	f.next()
	if !checked || slices.Contains(during, "log.txt") {
		t.Errorf("mid-download (checked: %v) the uploads folder held %q, want no log.txt yet", checked, during)
	}
	entries, _ := os.ReadDir(uploads)
	if len(entries) != 1 || entries[0].Name() != "log.txt" {
		t.Errorf("after the download the uploads folder holds %v, want log.txt alone", entries)
	}
	if got, err := os.ReadFile(filepath.Join(uploads, "log.txt")); err != nil || string(got) != "first half, second half" {
		t.Errorf("log.txt = %q, %v", got, err)
	}
}

// A conversation working in a subdirectory of a repository keeps its
// uploads (in <subdirectory>/.jakebot/) out of git: git status, /diff and
// so /merge never see them.
func TestUploadsInASubdirectoryStayOutOfGit(t *testing.T) {
	t.Parallel()
	f := newRouterFixture(t, echo)
	repo := gitRepo(t, f.root)
	sub := filepath.Join(repo, "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "b.txt"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "add", ".")
	git(t, repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "sub")
	f.say("alice", "/fake start "+sub)
	f.expect("conversation started in " + sub)
	f.send("look", file("shot.png", core.FileImage, "PNG", 3))
	<-f.plugin.Started()
	f.next()
	if _, err := os.Stat(filepath.Join(sub, ".jakebot", "uploads", core.Day(coretest.Epoch), "shot.png")); err != nil {
		t.Fatal(err)
	}
	if out := git(t, repo, "status", "--porcelain", "--untracked-files=all"); out != "" {
		t.Errorf("git status shows the upload:\n%s", out)
	}
	f.say("alice", "/diff")
	f.expect("No changes since HEAD.")
}

// A download a crash left unfinished (a .partial-* file in any day's
// uploads folder, not written for an hour) is removed when the next upload
// to that workdir starts; one still being written, by this process or
// another, stays, as do the user's own files and anything that is not a
// regular file.
func TestStalePartialDownloadsAreRemoved(t *testing.T) {
	t.Parallel()
	clock := coretest.NewManualClock()
	f := newRouterFixtureWith(t, echo, clock, nil)
	f.say("alice", "/fake start")
	f.expect("conversation started")
	uploads := filepath.Join(f.root, ".jakebot", "uploads")
	today, yesterday := filepath.Join(uploads, core.Day(coretest.Epoch)), filepath.Join(uploads, core.Day(coretest.Epoch.AddDate(0, 0, -1)))
	outside := filepath.Join(t.TempDir(), "target")
	put := func(path string, age time.Duration) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, coretest.Epoch.Add(-age), coretest.Epoch.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	put(filepath.Join(yesterday, ".partial-1"), 20*time.Hour)
	put(filepath.Join(today, ".partial-2"), 61*time.Minute)
	put(filepath.Join(today, ".partial-3"), time.Minute) // being written
	put(filepath.Join(today, "notes.txt"), 20*time.Hour)
	put(outside, 20*time.Hour)
	if err := os.Symlink(outside, filepath.Join(today, ".partial-4")); err != nil {
		t.Fatal(err)
	}

	f.send("look", file("ok.txt", core.FileDocument, "fine", 4))
	<-f.plugin.Started()
	f.expect("echo: look")
	for path, want := range map[string]bool{
		filepath.Join(yesterday, ".partial-1"): false,
		filepath.Join(today, ".partial-2"):     false,
		filepath.Join(today, ".partial-3"):     true,
		filepath.Join(today, ".partial-4"):     true,
		filepath.Join(today, "notes.txt"):      true,
		filepath.Join(today, "ok.txt"):         true,
		outside:                                true,
	} {
		if _, err := os.Lstat(path); (err == nil) != want {
			t.Errorf("%s is there: %v, want %v", path, err == nil, want)
		}
	}
}

// An agent that swaps the uploads folder for a symlink out of the roots
// while a message's files are saved (here, while the first downloads)
// does not have the next written where it points: the files are written
// through the root, not by their names again (issue 34).
func TestUploadsThroughASwappedSymlink(t *testing.T) {
	t.Parallel()
	f := newRouterFixture(t, echo)
	outside := t.TempDir()
	day := filepath.Join(f.root, ".jakebot", "uploads", core.Day(coretest.Epoch))
	// The folder moves out, the partial download with it, and a symlink
	// takes its place.
	moved := filepath.Join(outside, "day")
	swap := core.Attachment{Name: "first.txt", Kind: core.FileDocument, Open: func(context.Context) (io.ReadCloser, error) {
		if err := os.Rename(day, moved); err != nil {
			return nil, err
		}
		if err := os.Symlink(moved, day); err != nil {
			return nil, err
		}
		return io.NopCloser(strings.NewReader("first")), nil
	}}
	f.say("alice", "/fake start")
	f.expect("conversation started")
	f.send("look", swap, file("second.txt", core.FileDocument, "second", 6))
	f.expect("could not be downloaded")
	entries, _ := os.ReadDir(moved)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".partial-") {
			t.Errorf("%s written where the symlink points", e.Name())
		}
	}
}
