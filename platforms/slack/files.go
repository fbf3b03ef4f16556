package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/slack-go/slack"

	"github.com/jake-bot/jake-bot/core"
)

var _ core.FileSender = (*Adapter)(nil)

// sharedFile is a file in a message or app_mention event, read from the
// raw payload: slack-go's File has no subtype, and a voice clip recorded
// in Slack is known by its subtype, slack_audio, as its mimetype may say
// video/mp4.
type sharedFile struct {
	ID                 string `json:"id"`
	Name               string `json:"name"`
	Mimetype           string `json:"mimetype"`
	Subtype            string `json:"subtype"`
	Size               int64  `json:"size"`
	URLPrivate         string `json:"url_private"`
	URLPrivateDownload string `json:"url_private_download"`
}

// eventFiles returns the files of an Events API payload's event, nil when
// it has none or cannot be read.
func eventFiles(payload json.RawMessage) []sharedFile {
	var p struct {
		Event struct {
			Files []sharedFile `json:"files"`
		} `json:"event"`
	}
	if len(payload) == 0 || json.Unmarshal(payload, &p) != nil {
		return nil
	}
	return p.Event.Files
}

// attachments returns the shared files as files the router can download.
func (a *Adapter) attachments(files []sharedFile) []core.Attachment {
	var out []core.Attachment
	for _, f := range files {
		kind := core.FileDocument
		switch {
		case f.Subtype == "slack_audio" || strings.HasPrefix(f.Mimetype, "audio/"):
			kind = core.FileVoice
		case strings.HasPrefix(f.Mimetype, "image/"):
			kind = core.FileImage
		}
		link := f.URLPrivateDownload
		if link == "" {
			link = f.URLPrivate
		}
		name := f.Name
		if name == "" {
			name = f.ID
		}
		out = append(out, core.Attachment{Name: name, Size: f.Size, Kind: kind,
			Open: func(ctx context.Context) (io.ReadCloser, error) { return a.download(ctx, name, link) }})
	}
	return out
}

// download fetches a file with the bot token (files:read) through
// slack-go, which sends the token only to Slack's own hosts or
// SLACK_API_URL's, in a header: it is in no URL, so no error carries it.
// A token that may not read the file gets Slack's sign-in page, which
// slack-go reports as an error rather than as the file.
func (a *Adapter) download(ctx context.Context, name, link string) (io.ReadCloser, error) {
	if link == "" {
		return nil, fmt.Errorf("slack: %s has no download URL", name)
	}
	r, w := io.Pipe()
	go func() {
		if err := a.api.GetFileContext(ctx, link, w); err != nil {
			w.CloseWithError(fmt.Errorf("slack download: %w", err))
			return
		}
		w.Close()
	}()
	return r, nil
}

// SendFile shares data as a file in to's thread, through Slack's external
// upload (files.getUploadURLExternal, the upload, then
// files.completeUploadExternal; files:write).
func (a *Adapter) SendFile(ctx context.Context, to core.Target, name string, data []byte, caption string) (core.MessageRef, error) {
	if len(data) == 0 {
		return core.MessageRef{}, core.Errorf("%s is empty: Slack takes no empty file", name)
	}
	f, err := a.api.UploadFileContext(ctx, slack.UploadFileParameters{Reader: bytes.NewReader(data), Filename: name,
		FileSize: len(data), Title: name, Channel: to.Channel, ThreadTimestamp: to.Thread, InitialComment: caption})
	if err != nil {
		return core.MessageRef{}, translate("file upload", err)
	}
	return core.MessageRef{Target: to, ID: f.ID}, nil
}
