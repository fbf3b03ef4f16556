package slack_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/platformtest"
)

// Files both ways through slack-go: files shared in the thread are
// downloaded with the bot token and saved in the workdir, an image also
// reaches the turn natively, an audio clip without TRANSCRIBE_CMD says so,
// a file over the limit is refused, and /file uploads through
// files.getUploadURLExternal and files.completeUploadExternal.
func TestFilesBothWays(t *testing.T) {
	t.Parallel()
	h := start(t, setup{})
	thread := h.startThread(alice, general)
	uploads := filepath.Join(".jakebot", "uploads", core.Day(h.clock.Now()))

	png := []byte("\x89PNG fake image bytes")
	notes := []byte("line one\nline two\n")
	h.fake.PostFiles(t, alice, general, thread, "what is wrong here?",
		platformtest.SlackFile{Name: "screen.png", Mimetype: "image/png", Data: png},
		platformtest.SlackFile{Name: "notes.txt", Mimetype: "text/plain", Data: notes})
	h.waitReply(general, thread, "echo: what is wrong here?")
	turn := h.plugin.ran()[0]
	want := "what is wrong here?\n\nFiles I sent, saved in the workdir:\n- " + filepath.Join(uploads, "screen.png") +
		" (image)\n- " + filepath.Join(uploads, "notes.txt")
	if turn.Prompt != want {
		t.Errorf("prompt = %q, want %q", turn.Prompt, want)
	}
	if len(turn.Images) != 1 || turn.Images[0] != filepath.Join(h.root, uploads, "screen.png") {
		t.Errorf("images = %q", turn.Images)
	}
	for name, data := range map[string][]byte{"screen.png": png, "notes.txt": notes} {
		if got, err := os.ReadFile(filepath.Join(h.root, uploads, name)); err != nil || !bytes.Equal(got, data) {
			t.Errorf("saved %s = %q, %v", name, got, err)
		}
	}
	for _, auth := range h.fake.Downloads() {
		if auth != "Bearer "+platformtest.SlackBotToken {
			t.Errorf("a download sent Authorization %q, want the bot token", auth)
		}
	}

	h.fake.PostFiles(t, alice, general, thread, "", platformtest.SlackFile{Name: "clip.m4a", Mimetype: "audio/mp4", Data: []byte("m4a")})
	h.waitReply(general, thread, "voice notes need TRANSCRIBE_CMD")
	h.fake.PostFiles(t, alice, general, thread, "", platformtest.SlackFile{Name: "huge.bin", Mimetype: "application/octet-stream",
		Data: make([]byte, core.DefaultAttachmentMaxBytes+1)})
	h.waitReply(general, thread, "huge.bin is 20 MB, over the 20 MB limit")
	if _, err := os.Stat(filepath.Join(h.root, uploads, "huge.bin")); !os.IsNotExist(err) {
		t.Errorf("huge.bin was written: %v", err)
	}

	h.fake.Post(t, alice, general, thread, "/file "+filepath.Join(uploads, "notes.txt"))
	h.until("the upload", func() bool { return len(h.fake.Uploads(general)) == 1 })
	up := h.fake.Uploads(general)[0]
	if up.File.Name != "notes.txt" || !bytes.Equal(up.File.Data, notes) || up.ThreadTS != thread {
		t.Errorf("uploaded %q to thread %q: %q", up.File.Name, up.ThreadTS, up.File.Data)
	}
	if strings.Contains(up.Comment, platformtest.SlackBotToken) {
		t.Error("the upload's comment holds the token")
	}
}
