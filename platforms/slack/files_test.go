package slack_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	slackapi "github.com/slack-go/slack"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/formatter"
	"github.com/jake-bot/jake-bot/platforms/slack/slacktest"
)

// TestFilesIn shares files with the bot through slack-go against the
// fake: each is downloaded once with the bot token and saved under
// .jakebot/uploads/<day>/, named in the prompt, an image also reaching the
// turn natively; a voice clip without TRANSCRIBE_CMD says so, and a file
// declared over the limit is refused unread.
func TestFilesIn(t *testing.T) {
	t.Parallel()
	const dm = "DALICE"
	png := []byte("\x89PNG fake image bytes")
	notes := []byte("line one\nline two\n")
	clip := []byte("mp4 voice clip")
	image := slacktest.File{Name: "screen.png", Mimetype: "image/png", Data: png}
	text := slacktest.File{Name: "notes.txt", Mimetype: "text/plain", Data: notes}
	inThread := func(text string, files ...slacktest.File) func(h *harness) (string, string) {
		return func(h *harness) (string, string) {
			thread := h.startThread(alice, general)
			h.fake.PostFiles(h.t, alice, general, thread, text, files...)
			return general, thread
		}
	}
	cases := []struct {
		name string
		// send shares the files and returns where the bot answers.
		send  func(h *harness) (channel, thread string)
		reply string // part of the answer
		// prompt is the turn's, with the uploads folder written <uploads>;
		// "" when no turn runs.
		prompt string
		images []string          // the turn's images, in the uploads folder
		saved  map[string][]byte // all the uploads folder holds
	}{{
		name:   "an image and a file with text in a thread",
		send:   inThread("what is wrong here?", image, text),
		reply:  "echo: what is wrong here?",
		prompt: "what is wrong here?\n\nFiles I sent, saved in the workdir:\n- <uploads>/screen.png (image)\n- <uploads>/notes.txt",
		images: []string{"screen.png"},
		saved:  map[string][]byte{"screen.png": png, "notes.txt": notes},
	}, {
		name: "a file without text in a direct message",
		send: func(h *harness) (string, string) {
			h.fake.SlashCommand(h.t, alice, dm, "/claude", "start")
			h.waitReply(dm, "", "conversation started")
			h.fake.PostFiles(h.t, alice, dm, "", "", text)
			return dm, ""
		},
		reply:  "echo: Files I sent",
		prompt: "Files I sent, saved in the workdir:\n- <uploads>/notes.txt",
		saved:  map[string][]byte{"notes.txt": notes},
	}, {
		name:   "a file with a mention in a thread",
		send:   inThread(mention+" read this", text),
		reply:  "echo: read this",
		prompt: "read this\n\nFiles I sent, saved in the workdir:\n- <uploads>/notes.txt",
		saved:  map[string][]byte{"notes.txt": notes},
	}, {
		name:   "a file with a bare mention in a thread",
		send:   inThread(mention, text),
		reply:  "echo: Files I sent",
		prompt: "Files I sent, saved in the workdir:\n- <uploads>/notes.txt",
		saved:  map[string][]byte{"notes.txt": notes},
	}, {
		name: "a file with a mention that starts a conversation",
		send: func(h *harness) (string, string) {
			m := h.fake.PostFiles(h.t, alice, general, "", mention+" read this", text)
			return general, m.TS
		},
		reply:  "echo: read this",
		prompt: "read this\n\nFiles I sent, saved in the workdir:\n- <uploads>/notes.txt",
		saved:  map[string][]byte{"notes.txt": notes},
	}, {
		name: "a voice clip recorded in Slack",
		send: inThread("", slacktest.File{Name: "audio_message.mp4", Mimetype: "video/mp4", Subtype: "slack_audio",
			Data: clip}),
		reply: "voice notes need TRANSCRIBE_CMD",
		saved: map[string][]byte{"audio_message.mp4": clip},
	}, {
		name: "a file over the limit",
		send: inThread("look", slacktest.File{Name: "huge.bin", Mimetype: "application/octet-stream",
			Size: core.DefaultAttachmentMaxBytes + 1, Data: []byte("never read")}),
		reply: "huge.bin is 20 MB, over the 20 MB limit",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := start(t, setup{})
			uploads := filepath.Join(".jakebot", "uploads", core.Day(h.clock.Now()))
			channel, thread := tc.send(h)
			h.waitReply(channel, thread, tc.reply)

			turns := h.plugin.Turns()
			switch {
			case tc.prompt == "" && len(turns) > 0:
				t.Errorf("a turn ran with prompt %q, want none", turns[0].Prompt)
			case tc.prompt != "" && len(turns) != 1:
				t.Errorf("%d turns ran, want 1", len(turns))
			case tc.prompt != "":
				if want := strings.ReplaceAll(tc.prompt, "<uploads>", uploads); turns[0].Prompt != want {
					t.Errorf("prompt = %q, want %q", turns[0].Prompt, want)
				}
				var images []string
				for _, name := range tc.images {
					images = append(images, filepath.Join(h.root, uploads, name))
				}
				if diff := cmp.Diff(images, turns[0].Images); diff != "" {
					t.Errorf("images (-want +got):\n%s", diff)
				}
			}
			if diff := cmp.Diff(tc.saved, readDir(t, filepath.Join(h.root, uploads))); diff != "" {
				t.Errorf("uploads folder (-want +got):\n%s", diff)
			}
			downloads := h.fake.Downloads()
			if len(downloads) != len(tc.saved) {
				t.Errorf("%d downloads, want one per saved file: %+v", len(downloads), downloads)
			}
			for _, d := range downloads {
				if d.Authorization != "Bearer "+slacktest.BotToken {
					t.Errorf("download of %s sent Authorization %q, want the bot token", d.FileID, d.Authorization)
				}
			}
		})
	}
}

// readDir returns the files in dir and their contents, nil when there is
// none.
func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out map[string][]byte
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if out == nil {
			out = make(map[string][]byte)
		}
		out[e.Name()] = data
	}
	return out
}

// TestFilesNeedTheBotToken checks the fake the tests above rely on: a
// shared file's private URL serves the file to the bot token only, and
// slack-go reports Slack's sign-in page as an error, not as the file.
func TestFilesNeedTheBotToken(t *testing.T) {
	t.Parallel()
	h := start(t, setup{})
	data := []byte("secret plans")
	// Top-level chatter: the bot ignores it, and downloads nothing.
	h.fake.PostFiles(t, alice, general, "", "", slacktest.File{ID: "FPLANS", Name: "plans.txt", Mimetype: "text/plain", Data: data})
	link := h.fake.FileURL("FPLANS")
	for _, tc := range []struct {
		token string
		want  []byte // nil: refused
	}{
		{slacktest.BotToken, data},
		{"xoxb-someone-else", nil},
	} {
		var buf bytes.Buffer
		err := slackapi.New(tc.token, slackapi.OptionAPIURL(h.fake.URL)).GetFileContext(context.Background(), link, &buf)
		switch {
		case tc.want == nil && err == nil:
			t.Errorf("GetFile with %s = %q, want an error", tc.token, buf.Bytes())
		case tc.want != nil && (err != nil || !bytes.Equal(buf.Bytes(), tc.want)):
			t.Errorf("GetFile with %s = %q, %v; want %q", tc.token, buf.Bytes(), err, tc.want)
		}
	}
}

// TestFilesOut sends a workdir's file back with /file: slack-go's
// external upload puts the same bytes in the conversation's thread or
// direct message; an empty file, which Slack refuses, is refused first.
func TestFilesOut(t *testing.T) {
	t.Parallel()
	const dm = "DALICE"
	data := []byte("package main\n")
	cases := []struct {
		name string
		// open starts the conversation and returns where it is.
		open func(h *harness) (channel, thread string)
		file string
		data []byte
		// reply is part of the bot's answer when nothing is uploaded.
		reply string
	}{{
		name: "a file in a thread",
		open: func(h *harness) (string, string) { return general, h.startThread(alice, general) },
		file: "main.go", data: data,
	}, {
		name: "a file in a direct message",
		open: func(h *harness) (string, string) {
			h.fake.SlashCommand(h.t, alice, dm, "/claude", "start")
			h.waitReply(dm, "", "conversation started")
			return dm, ""
		},
		file: "main.go", data: data,
	}, {
		name:  "an empty file",
		open:  func(h *harness) (string, string) { return general, h.startThread(alice, general) },
		file:  "empty.txt",
		reply: "empty.txt is empty",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := start(t, setup{})
			if err := os.WriteFile(filepath.Join(h.root, tc.file), tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			channel, thread := tc.open(h)
			h.fake.Post(t, alice, channel, thread, "/file "+tc.file)
			if tc.reply != "" {
				h.waitReply(channel, thread, tc.reply)
				if ups := h.fake.Uploads(channel); len(ups) != 0 {
					t.Errorf("uploaded %+v, want nothing", ups)
				}
				return
			}
			h.until("the upload", func() bool { return len(h.fake.Uploads(channel)) == 1 })
			up := h.fake.Uploads(channel)[0]
			if up.File.Name != tc.file || !bytes.Equal(up.File.Data, tc.data) || up.ThreadTS != thread {
				t.Errorf("uploaded %q = %q to thread %q, want %q = %q to thread %q", up.File.Name, up.File.Data, up.ThreadTS,
					tc.file, tc.data, thread)
			}
		})
	}
}

// TestLongAnswerComesAsAFile: past LONG_REPLY_PAGES messages, an answer is
// its first page and a note in the thread, and the whole of it is
// uploaded there as answer.md through slack-go's external upload.
func TestLongAnswerComesAsAFile(t *testing.T) {
	t.Parallel()
	h := start(t, setup{limit: 500, router: func(rc *core.RouterConfig) {
		rc.LongReplyPages, rc.Document = 2, formatter.MarkdownText
	}})
	events, lines := longAnswer()
	h.plugin.answer = func(string) []core.Event { return events }
	thread := h.startThread(alice, general)
	h.fake.Post(t, alice, general, thread, "tell me a long story")
	h.until("the upload", func() bool { return len(h.fake.Uploads(general)) == 1 })
	up := h.fake.Uploads(general)[0]
	if up.File.Name != "answer.md" || up.ThreadTS != thread {
		t.Errorf("uploaded %q to thread %q, want answer.md to %q", up.File.Name, up.ThreadTS, thread)
	}
	for _, line := range lines {
		if !bytes.Contains(up.File.Data, []byte(line)) {
			t.Errorf("answer.md lacks %q", line)
		}
	}
	replies := h.waitReply(general, thread, "all of it is in answer.md")
	if len(replies) != 3 || !strings.HasPrefix(replies[1].Text, "line 00:") {
		t.Errorf("replies = %+v, want the start notice, the first page and the note", replies)
	}
}
