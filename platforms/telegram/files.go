package telegram

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/jake-bot/jake-bot/core"
)

var _ core.FileSender = (*Adapter)(nil)

// attachments returns msg's photo (its largest size), document and voice
// note as files the router can download.
func (a *Adapter) attachments(msg *message) []core.Attachment {
	var out []core.Attachment
	if n := len(msg.Photo); n > 0 {
		p := msg.Photo[n-1]
		out = append(out, a.attachment(p.FileID, "photo-"+strconv.Itoa(msg.MessageID)+".jpg", int64(p.FileSize), core.FileImage))
	}
	if d := msg.Document; d != nil {
		kind := core.FileDocument
		if strings.HasPrefix(d.MimeType, "image/") {
			kind = core.FileImage
		}
		name := d.FileName
		if name == "" {
			name = "document-" + strconv.Itoa(msg.MessageID)
		}
		out = append(out, a.attachment(d.FileID, name, int64(d.FileSize), kind))
	}
	if v := msg.Voice; v != nil {
		out = append(out, a.attachment(v.FileID, "voice-"+strconv.Itoa(msg.MessageID)+".ogg", int64(v.FileSize), core.FileVoice))
	}
	return out
}

func (a *Adapter) attachment(id, name string, size int64, kind core.AttachmentKind) core.Attachment {
	return core.Attachment{Name: name, Size: size, Kind: kind, Open: func(ctx context.Context) (io.ReadCloser, error) {
		return a.download(ctx, id)
	}}
}

// download asks getFile for the file's path and fetches it from the file
// URL, on the host TELEGRAM_API_ENDPOINT names (a local Bot API server
// works too). Errors never carry the token, which the URL holds.
func (a *Adapter) download(ctx context.Context, fileID string) (io.ReadCloser, error) {
	var path string
	err := a.call(func() error {
		resp, err := a.api.MakeRequest("getFile", tgbotapi.Params{"file_id": fileID})
		if err != nil {
			return err
		}
		var f tgbotapi.File
		if err := json.Unmarshal(resp.Result, &f); err != nil {
			return fmt.Errorf("decode getFile: %w", err)
		}
		path = f.FilePath
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("telegram: getFile: %w", err)
	}
	url := fmt.Sprintf(fileEndpoint(a.cfg.APIEndpoint), string(a.cfg.Token), path)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("telegram: download: %w", redact(err, string(a.cfg.Token)))
	}
	resp, err := a.client.base.Do(req)
	if err != nil {
		return nil, fmt.Errorf("telegram: download: %w", redact(err, string(a.cfg.Token)))
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("telegram: download: HTTP %d", resp.StatusCode)
	}
	return resp.Body, nil
}

// fileEndpoint turns the Bot API endpoint (https://host/bot%s/%s) into its
// file URL (https://host/file/bot%s/%s).
func fileEndpoint(api string) string {
	if i := strings.LastIndex(api, "/bot%s/%s"); i >= 0 {
		return api[:i] + "/file/bot%s/%s"
	}
	return tgbotapi.FileEndpoint
}

// SendFile sends data as a document in to (its topic included), with
// caption.
func (a *Adapter) SendFile(ctx context.Context, to core.Target, name string, data []byte, caption string) (core.MessageRef, error) {
	p, release, err := a.hold(to)
	if err != nil {
		return core.MessageRef{}, err
	}
	defer release()
	ps := p.params()
	ps.AddNonEmpty("caption", caption)
	var m tgbotapi.Message
	err = a.call(func() error {
		resp, err := a.api.UploadFiles("sendDocument", ps, []tgbotapi.RequestFile{{Name: "document", Data: tgbotapi.FileBytes{Name: name, Bytes: data}}})
		if err != nil {
			return err
		}
		return json.Unmarshal(resp.Result, &m)
	})
	if err != nil {
		return core.MessageRef{}, fmt.Errorf("telegram: sendDocument: %w", err)
	}
	return core.MessageRef{Target: to, ID: strconv.Itoa(m.MessageID)}, nil
}
