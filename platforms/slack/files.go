package slack

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/slack-go/slack"

	"github.com/jake-bot/jake-bot/core"
)

var _ core.FileSender = (*Adapter)(nil)

// attachments returns a message's shared files as files the router can
// download. An audio clip (audio/*) is a voice note.
func (a *Adapter) attachments(m *slack.Msg) []core.Attachment {
	if m == nil {
		return nil
	}
	var out []core.Attachment
	for _, f := range m.Files {
		kind := core.FileDocument
		switch {
		case strings.HasPrefix(f.Mimetype, "audio/"):
			kind = core.FileVoice
		case strings.HasPrefix(f.Mimetype, "image/"):
			kind = core.FileImage
		}
		link := f.URLPrivateDownload
		if link == "" {
			link = f.URLPrivate
		}
		name := f.Name
		out = append(out, core.Attachment{Name: name, Size: int64(f.Size), Kind: kind,
			Open: func(ctx context.Context) (io.ReadCloser, error) { return a.download(ctx, name, link) }})
	}
	return out
}

// download fetches a file with the bot token (files:read). slack-go sends
// the token only to Slack's own hosts or SLACK_API_URL's, and it never
// appears in an error.
func (a *Adapter) download(ctx context.Context, name, link string) (io.ReadCloser, error) {
	if link == "" {
		return nil, fmt.Errorf("slack: %s has no download URL", name)
	}
	r, w := io.Pipe()
	go func() { w.CloseWithError(a.api.GetFileContext(ctx, link, w)) }()
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
		return core.MessageRef{}, translate("files.uploadV2", err)
	}
	return core.MessageRef{Target: to, ID: f.ID}, nil
}
