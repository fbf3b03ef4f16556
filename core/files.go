package core

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/jake-bot/jake-bot/core/workspace"
)

// DefaultAttachmentMaxBytes is Telegram's own getFile limit.
const DefaultAttachmentMaxBytes = 20 << 20

// files carries files between the chat and a conversation's workdir: a
// user's attachments saved for the turn (voice notes transcribed), and a
// workdir's file sent for /file and the agent's send_file. It is given at
// construction what it uses, rather than the router.
type files struct {
	chat chat
	// place is the machine a conversation works on for a user of rights
	// who (Router.placeOf); rights are the author's (Access.RightsOf).
	place  func(conv Conversation, who Rights) Place
	rights func(m Message) Rights
	// maxBytes is ATTACHMENT_MAX_BYTES; hear TRANSCRIBE_CMD, or nil.
	maxBytes int64
	hear     Transcriber
	redactor *Redactor
}

func (fl *files) maxAttachment() int64 {
	if fl.maxBytes > 0 {
		return fl.maxBytes
	}
	return DefaultAttachmentMaxBytes
}

// takeFiles saves m's files in .jakebot/uploads/<day>/ in the workdir,
// on conv's machine, and returns the prompt that names them, with a voice
// note's text in place of an empty message, and the images' paths. A
// file over the size limit, a failed download or a voice note that cannot
// be heard fails the whole message, and nothing half-written is left.
func (fl *files) takeFiles(ctx context.Context, a *attached, m Message, conv Conversation, workdir string) (prompt string, images []string, err error) {
	prompt = m.Text
	if len(m.Files) == 0 {
		return prompt, nil, nil
	}
	tmp, err := os.MkdirTemp("", "jakebot-upload-")
	if err != nil {
		return "", nil, fmt.Errorf("uploads folder: %w", err)
	}
	defer os.RemoveAll(tmp)
	saved, err := fl.uploadFiles(ctx, m, conv, workdir, tmp)
	if err != nil {
		return "", nil, err
	}
	var lines []string
	for _, s := range saved {
		rel, _ := filepath.Rel(workdir, s.path)
		switch s.kind {
		case FileVoice:
			text, err := fl.transcribe(ctx, s.local, s.path)
			if err != nil {
				return "", nil, err
			}
			fl.chat.reply(a, m.Target(), "🎤 Heard: "+text)
			prompt = strings.TrimSpace(prompt + "\n\n" + text)
			lines = append(lines, fmt.Sprintf("- %s (the voice note this text was heard from)", rel))
		case FileImage:
			images = append(images, s.path)
			lines = append(lines, fmt.Sprintf("- %s (image)", rel))
		default:
			lines = append(lines, "- "+rel)
		}
	}
	prompt = strings.TrimSpace(prompt + "\n\nFiles I sent, saved in the workdir:\n" + strings.Join(lines, "\n"))
	return prompt, images, nil
}

// savedFile is a file sent with a message, saved in the workdir at path
// (on the workdir's machine), with a copy here at local.
type savedFile struct {
	kind        AttachmentKind
	path, local string
}

// uploadFiles downloads m's files to tmp here, then has conv's machine
// save them in workdir's uploads folder (Place.Upload): all or none. The
// copies here stay until the turn has its prompt: a voice note is heard
// here, by TRANSCRIBE_CMD.
func (fl *files) uploadFiles(ctx context.Context, m Message, conv Conversation, workdir, tmp string) ([]savedFile, error) {
	dir, err := workspace.OpenFolder(tmp, tmp)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	var saved []savedFile
	var files []UploadFile
	for _, f := range m.Files {
		local, err := fl.saveFile(ctx, dir, f)
		if err != nil {
			return nil, err
		}
		saved = append(saved, savedFile{kind: f.Kind, local: local})
		files = append(files, UploadFile{Name: filepath.Base(local), Path: local})
	}
	paths, err := fl.place(conv, fl.rights(m)).Upload(ctx, workdir, files)
	if err == nil && len(paths) != len(saved) {
		err = fmt.Errorf("saved %d files of %d", len(paths), len(saved))
	}
	if err != nil {
		return nil, err
	}
	for i := range saved {
		saved[i].path = paths[i]
	}
	return saved, nil
}

// saveFile downloads f into dir under a clean name of its own.
func (fl *files) saveFile(ctx context.Context, dir *workspace.Folder, f Attachment) (string, error) {
	max := fl.maxAttachment()
	name := workspace.CleanFileName(f.Name)
	if f.Kind == FileVoice {
		// TRANSCRIBE_CMD may put {file} inside a shell string: a voice
		// note's name keeps no character a shell would read.
		name = strings.Map(func(c rune) rune {
			if c < 0x80 && (unicode.IsLetter(c) || unicode.IsDigit(c) || strings.ContainsRune("._-", c)) {
				return c
			}
			return '_'
		}, name)
	}
	if f.Size > max {
		return "", Errorf("%s is %s, over the %s limit (ATTACHMENT_MAX_BYTES): it was not saved, and your message was not sent", name, size(f.Size), size(max))
	}
	if f.Open == nil {
		return "", Errorf("%s cannot be downloaded from this platform", name)
	}
	// The download goes to a temporary name and takes its own only once
	// complete: a crash midway leaves nothing half-written under it.
	out, tmp, err := dir.CreateTemp()
	if err != nil {
		return "", fmt.Errorf("save %s: %w", name, err)
	}
	body, err := f.Open(ctx)
	if err == nil {
		var n int64
		n, err = io.Copy(out, io.LimitReader(body, max+1))
		body.Close()
		if err == nil && n > max {
			err = Errorf("%s is over the %s limit (ATTACHMENT_MAX_BYTES): it was not saved, and your message was not sent", name, size(max))
		}
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	path := ""
	if err == nil {
		path, err = dir.Place(tmp, name)
	}
	dir.Remove(tmp)
	if err != nil {
		var ue *UserError
		if errors.As(err, &ue) {
			return "", err
		}
		return "", Errorf("%s could not be downloaded (%v): nothing was saved, and your message was not sent", name, err)
	}
	return path, nil
}

// transcribe runs the Transcriber on the voice note at local, or says how
// to get one; saved is where the note stays, for the user.
func (fl *files) transcribe(ctx context.Context, local, saved string) (string, error) {
	if fl.hear == nil {
		return "", Errorf("voice notes need TRANSCRIBE_CMD, a command that prints the text of {file} (a local whisper.cpp, for one): see README, Files and voice. Your note is saved at %s", saved)
	}
	text, err := fl.hear(ctx, local)
	text = strings.TrimSpace(text)
	if err != nil {
		return "", Errorf("the voice note could not be transcribed: %v", err)
	}
	if text == "" {
		return "", Errorf("nothing was heard in the voice note")
	}
	return text, nil
}

// fileWithoutSending says where arg of conv's workdir is, its size and
// caption, on a platform that cannot send files (the console), once it
// passes the checks a file sent would.
func (fl *files) fileWithoutSending(ctx context.Context, m Message, conv Conversation, arg, caption string) (string, error) {
	if err := acquire(ctx, fileSends); err != nil {
		return "", fmt.Errorf("waiting to read %s: %w", arg, err)
	}
	defer func() { <-fileSends }()
	f, err := fl.workFile(ctx, m, conv, arg)
	if err != nil {
		return "", err
	}
	text := fmt.Sprintf("This platform cannot send files. The file is %s (%s).", f.Path, size(f.Size))
	if caption = strings.TrimSpace(fl.redactor.Redact(caption)); caption != "" {
		text += " Caption: " + caption
	}
	return text, nil
}

// sendWorkFile sends arg from conv's workdir to m's place through fs, for
// /file and the agent's send_file: inside the roots, within
// ATTACHMENT_MAX_BYTES, never one holding a secret.
func (fl *files) sendWorkFile(ctx context.Context, fs FileSender, m Message, conv Conversation, arg, caption string) error {
	if err := acquire(ctx, fileSends); err != nil {
		return fmt.Errorf("waiting to send %s: %w", arg, err)
	}
	defer func() { <-fileSends }()
	f, err := fl.workFile(ctx, m, conv, arg)
	if err != nil {
		return err
	}
	if fl.redactor.holdsSecret(f.Data) {
		return Errorf("%s holds one of the bot's secrets: it is not sent", arg)
	}
	name := filepath.Base(f.Path)
	if _, err := fs.SendFile(ctx, m.Target(), name, f.Data, fl.redactor.Redact(caption)); err != nil {
		return fmt.Errorf("send %s: %w", name, err)
	}
	return nil
}

// workFile reads arg for /file from conv's workdir: on this machine, or
// on its runner, which checks it against the author's roots there.
func (fl *files) workFile(ctx context.Context, m Message, conv Conversation, arg string) (WorkFile, error) {
	f, err := fl.place(conv, fl.rights(m)).ReadFile(ctx, conv.Workdir, arg, fl.maxAttachment())
	f.Path = conv.Shown(f.Path)
	return f, err
}
