package mattermost

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/jake-bot/jake-bot/core"
)

// fileInfo is a file's metadata, as a post's metadata and an upload's
// answer carry it.
type fileInfo struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Size     int64  `json:"size"`
	MimeType string `json:"mime_type"`
}

// attachments returns p's files as files the router can download with
// the bot's token (GET /files/{id}).
func (a *Adapter) attachments(p post) []core.Attachment {
	infos := map[string]fileInfo{}
	if p.Metadata != nil {
		for _, f := range p.Metadata.Files {
			infos[f.ID] = f
		}
	}
	var out []core.Attachment
	for _, id := range p.FileIDs {
		if !validID(id) {
			continue
		}
		f := infos[id]
		name := f.Name
		if name == "" {
			name = id
		}
		kind := core.FileDocument
		switch {
		case strings.HasPrefix(f.MimeType, "audio/"):
			kind = core.FileVoice
		case strings.HasPrefix(f.MimeType, "image/"):
			kind = core.FileImage
		}
		out = append(out, core.Attachment{Name: name, Size: f.Size, Kind: kind,
			Open: func(ctx context.Context) (io.ReadCloser, error) {
				body, err := a.api.download(ctx, "/files/"+id)
				if err != nil {
					return nil, fmt.Errorf("mattermost: download %s: %w", name, err)
				}
				return body, nil
			}})
	}
	return out
}

// SendFile uploads data (POST /files) and posts it in to's thread with
// caption as the post's text.
func (a *Adapter) SendFile(ctx context.Context, to core.Target, name string, data []byte, caption string) (core.MessageRef, error) {
	if err := a.api.gate.wait(ctx); err != nil {
		return core.MessageRef{}, err
	}
	var up struct {
		FileInfos []fileInfo `json:"file_infos"`
	}
	if err := a.api.upload(ctx, "/files", map[string]string{"channel_id": to.Channel}, name, data, &up); err != nil {
		return core.MessageRef{}, fmt.Errorf("mattermost: upload %s: %w", name, err)
	}
	if len(up.FileInfos) != 1 {
		return core.MessageRef{}, fmt.Errorf("mattermost: upload %s: the server answered %d files", name, len(up.FileInfos))
	}
	if err := a.api.gate.wait(ctx); err != nil {
		return core.MessageRef{}, err
	}
	id, err := a.create(ctx, post{ChannelID: to.Channel, RootID: to.Thread, Message: caption, FileIDs: []string{up.FileInfos[0].ID}})
	if err != nil {
		return core.MessageRef{}, fmt.Errorf("mattermost: post %s: %w", name, err)
	}
	return core.MessageRef{Target: to, ID: id}, nil
}
