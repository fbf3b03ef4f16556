package matrix

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/jake-bot/jake-bot/core"
)

// attachments returns a message's file (m.file, m.image, m.audio,
// m.video) as a file the router downloads from the homeserver's media
// repository; an m.audio (a voice message among them) is a voice note for
// TRANSCRIBE_CMD.
func (a *Adapter) attachments(c *event.MessageEventContent) []core.Attachment {
	kind := core.FileDocument
	switch c.MsgType {
	case event.MsgFile, event.MsgVideo:
	case event.MsgImage:
		kind = core.FileImage
	case event.MsgAudio:
		kind = core.FileVoice
	default:
		return nil
	}
	if c.URL == "" {
		return nil // an encrypted file (c.File): never in a room the bot reads
	}
	uri, err := c.URL.Parse()
	if err != nil {
		return nil
	}
	name := c.FileName
	if name == "" {
		name = c.Body
	}
	var size int64
	if c.Info != nil {
		size = int64(c.Info.Size)
	}
	return []core.Attachment{{Name: name, Size: size, Kind: kind,
		Open: func(ctx context.Context) (io.ReadCloser, error) {
			resp, err := a.cli.Download(ctx, uri)
			if err != nil {
				return nil, fmt.Errorf("matrix: download %s: %w", name, a.apiError(err))
			}
			return resp.Body, nil
		}}}
}

// SendFile uploads data to the media repository and sends it in to's
// thread, as m.image when it is an image, else m.file, with caption as
// its body (the spec's captions: the file's name apart).
func (a *Adapter) SendFile(ctx context.Context, to core.Target, name string, data []byte, caption string) (core.MessageRef, error) {
	mime := http.DetectContentType(data)
	if err := a.gate.wait(ctx); err != nil {
		return core.MessageRef{}, err
	}
	up, err := a.cli.UploadBytesWithName(ctx, data, mime, name)
	if err != nil {
		return core.MessageRef{}, fmt.Errorf("matrix: upload %s: %w", name, a.apiError(err))
	}
	c := &event.MessageEventContent{
		MsgType: event.MsgFile, Body: name, FileName: name, URL: id.ContentURIString(up.ContentURI.String()),
		Info: &event.FileInfo{MimeType: mime, Size: len(data)}, Mentions: &event.Mentions{},
	}
	if strings.HasPrefix(mime, "image/") {
		c.MsgType = event.MsgImage
	}
	if caption != "" {
		c.Body = caption
	}
	inThread(c, to)
	if err := a.gate.wait(ctx); err != nil {
		return core.MessageRef{}, err
	}
	eventID, err := a.send(ctx, to.Channel, event.EventMessage, c)
	if err != nil {
		return core.MessageRef{}, fmt.Errorf("matrix: send %s: %w", name, err)
	}
	return core.MessageRef{Target: to, ID: eventID}, nil
}
