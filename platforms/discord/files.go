package discord

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/jake-bot/jake-bot/core"
)

var _ core.FileSender = (*Adapter)(nil)

// attachments returns m's attachments as files the router can download.
// A voice message's one attachment is a voice note.
func (a *Adapter) attachments(m *discordgo.Message) []core.Attachment {
	var out []core.Attachment
	for _, at := range m.Attachments {
		if at == nil {
			continue
		}
		kind := core.FileDocument
		switch {
		case m.Flags&discordgo.MessageFlagsIsVoiceMessage != 0 || strings.HasPrefix(at.ContentType, "audio/"):
			kind = core.FileVoice
		case strings.HasPrefix(at.ContentType, "image/"):
			kind = core.FileImage
		}
		link := at.URL
		out = append(out, core.Attachment{Name: at.Filename, Size: int64(at.Size), Kind: kind,
			Open: func(ctx context.Context) (io.ReadCloser, error) { return a.download(ctx, link) }})
	}
	return out
}

// download fetches an attachment from Discord's CDN. Attachment URLs are
// signed and public: the bot token is not sent.
func (a *Adapter) download(ctx context.Context, link string) (io.ReadCloser, error) {
	u, err := url.Parse(link)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("discord: attachment URL %q is not http(s)", link)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, link, nil)
	if err != nil {
		return nil, fmt.Errorf("discord: download: %w", err)
	}
	resp, err := a.files.Do(req)
	if err != nil {
		return nil, fmt.Errorf("discord: download: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("discord: download: %s", resp.Status)
	}
	return resp.Body, nil
}

// SendFile posts data as an attachment in to's channel, with caption.
func (a *Adapter) SendFile(ctx context.Context, to core.Target, name string, data []byte, caption string) (core.MessageRef, error) {
	msg, err := a.api.ChannelMessageSendComplex(channelOf(to), &discordgo.MessageSend{Content: caption,
		Files:           []*discordgo.File{{Name: name, ContentType: http.DetectContentType(data), Reader: bytes.NewReader(data)}},
		AllowedMentions: noMentions()}, discordgo.WithContext(ctx))
	if err != nil {
		return core.MessageRef{}, apiError("send file", err)
	}
	return core.MessageRef{Target: to, ID: msg.ID}, nil
}
