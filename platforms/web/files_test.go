package web_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/formatter"
	"github.com/jake-bot/jake-bot/platforms/web"
)

// longAnswer is what the echo plugin answers to "long": three pages of
// the page's 60 KB.
var longAnswer = func() string {
	var b strings.Builder
	for i := 0; b.Len() < 150_000; i++ {
		fmt.Fprintf(&b, "line %05d of a long answer, long enough to need several pages\n", i)
	}
	return b.String()
}()

// upFile is a file the page sends.
type upFile struct{ name, contentType, data string }

// upload sends files with text from the page, as its form does, and
// returns the response's status and text.
func (b *browser) upload(channel, text string, files ...upFile) (int, string) {
	b.s.t.Helper()
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	mw.WriteField("channel", channel)
	mw.WriteField("text", text)
	for _, f := range files {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, f.name))
		h.Set("Content-Type", f.contentType)
		w, _ := mw.CreatePart(h)
		w.Write([]byte(f.data))
	}
	mw.Close()
	req, _ := http.NewRequest("POST", b.s.url+"/api/upload", &form)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("X-CSRF-Token", b.csrf)
	resp, err := b.http.Do(req)
	if err != nil {
		b.s.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(body))
}

// An image from the page is saved and reaches the turn as an image; a
// voice note is heard by TRANSCRIBE_CMD and its text is the prompt;
// files over the page's or the bot's limit are refused, and nothing of
// them is saved or run.
func TestImagesVoiceAndLimitsFromThePage(t *testing.T) {
	t.Parallel()
	p := newEchoPlugin()
	s := newSiteFrom(t, siteConfig{plugin: p,
		web: func(c *web.Config) { c.MaxUploadBytes = 1000 },
		router: func(rc *core.RouterConfig) {
			rc.AttachmentMaxBytes = 100
			rc.Transcribe = func(ctx context.Context, path string) (string, error) {
				data, err := os.ReadFile(path)
				return "heard " + string(data), err
			}
		}})
	s.plugin = p
	b := s.signIn()
	st := b.events()
	c := b.newChannel()
	b.say(c, "/claude start")
	st.botSays(c, "conversation started")
	uploads := filepath.Join(s.root, ".jakebot", "uploads", core.Day(time.Now()))

	if status, _ := b.upload(c, "what is wrong?", upFile{"shot.png", "image/png", "\x89PNG bytes"}); status != http.StatusAccepted {
		t.Fatalf("image upload: %d", status)
	}
	st.botSays(c, "echo: what is wrong?")
	if turn := p.lastTurn(); len(turn.Images) != 1 || turn.Images[0] != filepath.Join(uploads, "shot.png") {
		t.Errorf("the turn's images = %q, want the upload", turn.Images)
	}
	if data, err := os.ReadFile(filepath.Join(uploads, "shot.png")); err != nil || string(data) != "\x89PNG bytes" {
		t.Errorf("saved image = %q, %v", data, err)
	}

	if status, _ := b.upload(c, "", upFile{"note.ogg", "audio/ogg", "fix the tests"}); status != http.StatusAccepted {
		t.Fatalf("voice upload: %d", status)
	}
	st.botSays(c, "🎤 Heard: heard fix the tests")
	st.botSays(c, "echo: heard fix the tests")

	turns := len(p.Turns())
	status, text := b.upload(c, "too big for the page", upFile{"big.bin", "application/octet-stream", strings.Repeat("x", 2000)})
	if status != http.StatusRequestEntityTooLarge || !strings.Contains(text, "over the 1000 bytes limit (WEB_MAX_UPLOAD_BYTES): nothing was sent") {
		t.Errorf("an upload over WEB_MAX_UPLOAD_BYTES: %d %q", status, text)
	}
	if status, _ := b.upload(c, "too big for the bot", upFile{"log.txt", "text/plain", strings.Repeat("y", 500)}); status != http.StatusAccepted {
		t.Fatalf("upload: %d", status)
	}
	st.botSays(c, "log.txt is 500 bytes, over the 100 bytes limit (ATTACHMENT_MAX_BYTES)")
	b.say(c, "/status")
	st.botSays(c, "State: idle")
	if len(p.Turns()) != turns {
		t.Errorf("a refused upload ran a turn: %+v", p.lastTurn())
	}
	for _, name := range []string{"big.bin", "log.txt"} {
		if _, err := os.Stat(filepath.Join(uploads, name)); !os.IsNotExist(err) {
			t.Errorf("the refused %s was saved (%v)", name, err)
		}
	}
}

// An answer longer than LONG_REPLY_PAGES messages shows as its first page
// and a note, and comes whole as answer.md to download.
func TestLongAnswerComesAsAFileOnThePage(t *testing.T) {
	t.Parallel()
	p := newEchoPlugin()
	s := newSiteFrom(t, siteConfig{plugin: p, router: func(rc *core.RouterConfig) {
		rc.LongReplyPages, rc.Document = 2, formatter.MarkdownText
	}})
	b := s.signIn()
	st := b.events()
	c := b.newChannel()
	b.say(c, "/claude start")
	st.botSays(c, "conversation started")
	b.say(c, "long")
	data, _ := b.download(st.file(c, "answer.md"))
	if !strings.HasPrefix(string(data), strings.TrimSpace(longAnswer)) {
		t.Errorf("answer.md has %d bytes, ending %q, want the whole answer's %d", len(data), data[max(0, len(data)-80):], len(strings.TrimSpace(longAnswer)))
	}
	again := b.events()
	snap := again.until("the snapshot", func(ev map[string]any) bool { return ev["type"] == "snapshot" })
	var bot []string
	for _, ch := range snap["channels"].([]any) {
		for _, msg := range ch.(map[string]any)["messages"].([]any) {
			if m := msg.(map[string]any); m["from"] == "bot" && m["file"] == nil {
				bot = append(bot, m["text"].(string))
			}
		}
	}
	if len(bot) != 3 || !strings.HasPrefix(bot[1], "line 00000 of") ||
		!strings.HasPrefix(bot[2], "📎 The answer ran to 3 messages: the first is above, and all of it is in answer.md.") {
		t.Errorf("the page's bot messages = %.80q, want the start notice, the first page and the note", bot)
	}
}
