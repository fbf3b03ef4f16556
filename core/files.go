package core

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/jake-bot/jake-bot/core/gitrepo"
)

// AttachmentKind says what a user's file is, for what the bot does with
// it beyond saving it.
type AttachmentKind int

const (
	// FileDocument is any file: saved and named in the prompt.
	FileDocument AttachmentKind = iota
	// FileImage is also passed to CLIs that take images (Turn.Images).
	FileImage
	// FileVoice is a voice note: transcribed, and the text is the prompt.
	FileVoice
)

// Attachment is a file a user sent with a message.
type Attachment struct {
	// Name is the file's name as sent; the router cleans it.
	Name string
	// Size is what the platform declared, 0 when it did not.
	Size int64
	Kind AttachmentKind
	// Open downloads the file. The adapter's closure holds what that needs
	// (a token, which never leaves it).
	Open func(ctx context.Context) (io.ReadCloser, error)
}

// DefaultAttachmentMaxBytes is Telegram's own getFile limit.
const DefaultAttachmentMaxBytes = 20 << 20

// FileSender is implemented by platforms that can post a file.
type FileSender interface {
	SendFile(ctx context.Context, to Target, name string, data []byte, caption string) (MessageRef, error)
}

// Transcriber turns a voice note into text (TRANSCRIBE_CMD).
type Transcriber func(ctx context.Context, file string) (string, error)

func (r *Router) maxAttachment() int64 {
	if r.cfg.AttachmentMaxBytes > 0 {
		return r.cfg.AttachmentMaxBytes
	}
	return DefaultAttachmentMaxBytes
}

// takeFiles saves m's files in .jakebot/uploads/<day>/ in the workdir
// (here, or on conv's runner) and returns the prompt that names them,
// with a voice note's text in place of an empty message, and the images'
// paths. A file over the size limit, a failed download or a voice note
// that cannot be heard fails the whole message, and nothing half-written
// is left.
func (r *Router) takeFiles(ctx context.Context, a *attached, m Message, conv Conversation, workdir string) (prompt string, images []string, err error) {
	prompt = m.Text
	if len(m.Files) == 0 {
		return prompt, nil, nil
	}
	var saved []savedFile
	if runner, _, remote := r.remoteWorkdir(conv.Workdir); remote {
		tmp, terr := os.MkdirTemp("", "jakebot-upload-")
		if terr != nil {
			return "", nil, fmt.Errorf("uploads folder: %w", terr)
		}
		defer os.RemoveAll(tmp)
		saved, err = r.uploadFiles(ctx, m, runner, workdir, tmp)
	} else {
		saved, err = r.saveFiles(ctx, m, workdir)
	}
	if err != nil {
		return "", nil, err
	}
	var lines []string
	for _, s := range saved {
		rel, _ := filepath.Rel(workdir, s.path)
		switch s.kind {
		case FileVoice:
			text, err := r.transcribe(ctx, s.local, s.path)
			if err != nil {
				return "", nil, err
			}
			r.reply(a, m.Target(), "🎤 Heard: "+text)
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
// (on the workdir's machine), with a copy here at local (path itself for
// a workdir here).
type savedFile struct {
	kind        AttachmentKind
	path, local string
}

// saveFiles saves m's files in workdir's uploads folder here: all or
// none.
func (r *Router) saveFiles(ctx context.Context, m Message, workdir string) ([]savedFile, error) {
	dir, err := PrepareUploads(ctx, workdir, r.clock.Now(), r.logger)
	if err != nil {
		return nil, err
	}
	var saved []savedFile
	for _, f := range m.Files {
		path, err := r.saveFile(ctx, dir, f)
		if err != nil {
			for _, s := range saved {
				os.Remove(s.path)
			}
			return nil, err
		}
		saved = append(saved, savedFile{kind: f.Kind, path: path, local: path})
	}
	return saved, nil
}

// uploadFiles downloads m's files to tmp here, then has runner save them
// in workdir's uploads folder there: all or none. The copies here stay
// until the turn has its prompt: a voice note is heard here, by
// TRANSCRIBE_CMD.
func (r *Router) uploadFiles(ctx context.Context, m Message, runner, workdir, tmp string) ([]savedFile, error) {
	rf, ok := r.cfg.Runners.(RunnerFiles)
	if !ok {
		return nil, errLocalOnly("sending files", runner)
	}
	var saved []savedFile
	var files []UploadFile
	for _, f := range m.Files {
		local, err := r.saveFile(ctx, tmp, f)
		if err != nil {
			return nil, err
		}
		saved = append(saved, savedFile{kind: f.Kind, local: local})
		files = append(files, UploadFile{Name: filepath.Base(local), Path: local})
	}
	paths, err := rf.Upload(ctx, runner, workdir, r.isAdmin(m), files)
	if err == nil && len(paths) != len(saved) {
		err = fmt.Errorf("runner %s saved %d files of %d", runner, len(paths), len(saved))
	}
	if err != nil {
		return nil, err
	}
	for i := range saved {
		saved[i].path = paths[i]
	}
	return saved, nil
}

// UploadFile is a file to send to a runner: its name and its copy here.
type UploadFile struct {
	Name, Path string
}

// PrepareUploads makes the folder for today's files sent with messages in
// workdir, .jakebot/uploads/<day>/, with .jakebot/ excluded from git
// where it can be, and removes the partial downloads a crash left in any
// day's folder.
func PrepareUploads(ctx context.Context, workdir string, now time.Time, logger *slog.Logger) (dir string, err error) {
	uploads, err := mkdirsIn(workdir, ".jakebot", "uploads")
	if err == nil {
		dir, err = mkdirsIn(uploads, Day(now))
	}
	if err != nil {
		return "", Errorf("%w: files sent with a message are not saved there, and your message was not sent", err)
	}
	if n := removeStalePartials(uploads, now); n > 0 {
		logger.Info("removed downloads a crash left unfinished", "workdir", workdir, "files", n)
	}
	if err := gitrepo.Exclude(ctx, workdir); err != nil {
		logger.Warn("exclude .jakebot/ from git", "workdir", workdir, "err", err)
	}
	return dir, nil
}

// saveFile downloads f into dir under a clean name of its own.
func (r *Router) saveFile(ctx context.Context, dir string, f Attachment) (string, error) {
	max := r.maxAttachment()
	name := CleanFileName(f.Name)
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
	out, err := os.CreateTemp(dir, ".partial-*")
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
		path, err = PlaceUnique(out.Name(), dir, name)
	}
	os.Remove(out.Name())
	if err != nil {
		var ue *UserError
		if errors.As(err, &ue) {
			return "", err
		}
		return "", Errorf("%s could not be downloaded (%v): nothing was saved, and your message was not sent", name, err)
	}
	return path, nil
}

// stalePartial is how long a download's temporary file may go unwritten
// before it is taken for one that a crash left behind: a download in
// progress, in this process or another, writes to it all along.
const stalePartial = time.Hour

// removeStalePartials removes, from every day's folder in uploads, the
// temporary files (.partial-*) of downloads not written to for
// stalePartial, and returns how many. It follows no symlink and removes
// only regular files.
func removeStalePartials(uploads string, now time.Time) int {
	days, _ := os.ReadDir(uploads)
	n := 0
	for _, day := range days {
		if !day.IsDir() {
			continue
		}
		files, _ := os.ReadDir(filepath.Join(uploads, day.Name()))
		for _, f := range files {
			if !strings.HasPrefix(f.Name(), ".partial-") || !f.Type().IsRegular() {
				continue
			}
			path := filepath.Join(uploads, day.Name(), f.Name())
			if fi, err := os.Lstat(path); err == nil && now.Sub(fi.ModTime()) > stalePartial && os.Remove(path) == nil {
				n++
			}
		}
	}
	return n
}

// transcribe runs the Transcriber on the voice note at local, or says how
// to get one; saved is where the note stays, for the user.
func (r *Router) transcribe(ctx context.Context, local, saved string) (string, error) {
	if r.cfg.Transcribe == nil {
		return "", Errorf("voice notes need TRANSCRIBE_CMD, a command that prints the text of {file} (a local whisper.cpp, for one): see README, Files and voice. Your note is saved at %s", saved)
	}
	text, err := r.cfg.Transcribe(ctx, local)
	text = strings.TrimSpace(text)
	if err != nil {
		return "", Errorf("the voice note could not be transcribed: %v", err)
	}
	if text == "" {
		return "", Errorf("nothing was heard in the voice note")
	}
	return text, nil
}

// mkdirsIn makes the folders parts in dir, one inside the other, following
// no symlink: a repository that holds .jakebot as a symlink must not have
// the files users send, or worktrees, written where it points.
func mkdirsIn(dir string, parts ...string) (string, error) {
	for _, p := range parts {
		dir = filepath.Join(dir, p)
		fi, err := os.Lstat(dir)
		if errors.Is(err, fs.ErrNotExist) {
			if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				return "", fmt.Errorf("make folder %s: %w", dir, err)
			}
			fi, err = os.Lstat(dir)
		}
		if err != nil {
			return "", fmt.Errorf("make folder %s: %w", dir, err)
		}
		if !fi.IsDir() {
			return "", Errorf("%s is not a folder (a symlink?)", dir)
		}
	}
	return dir, nil
}

// CleanFileName keeps a sent name's letters, digits and punctuation, with
// path separators and control characters replaced: a name never climbs
// out of the uploads folder nor hides as a dot file.
func CleanFileName(name string) string {
	name = strings.Map(func(c rune) rune {
		switch {
		case c == '/' || c == '\\' || unicode.IsControl(c) || c == 0x7f:
			return '_'
		case unicode.IsSpace(c):
			return ' '
		}
		return c
	}, name)
	name = strings.TrimSpace(strings.TrimLeft(name, ". "))
	if len(name) > 120 {
		ext := filepath.Ext(name)
		if len(ext) > 16 {
			ext = ""
		}
		name = name[:120-len(ext)] + ext
	}
	if name == "" {
		return "file"
	}
	return strings.ToValidUTF8(name, "_")
}

// PlaceUnique gives the file at tmp the name dir/name, or name-1,
// name-2… when it is taken: an upload never overwrites. A hard link
// claims a name atomically; tmp, if still there, is the caller's to
// remove.
func PlaceUnique(tmp, dir, name string) (string, error) {
	ext := filepath.Ext(name)
	base := strings.TrimSuffix(name, ext)
	for i := 0; i < 1000; i++ {
		candidate := name
		if i > 0 {
			candidate = fmt.Sprintf("%s-%d%s", base, i, ext)
		}
		path := filepath.Join(dir, candidate)
		err := os.Link(tmp, path)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			// A file system without hard links: check, then rename.
			if _, lerr := os.Lstat(path); lerr == nil {
				continue
			}
			if err := os.Rename(tmp, path); err != nil {
				return "", fmt.Errorf("name %s: %w", candidate, err)
			}
		}
		return path, nil
	}
	return "", fmt.Errorf("too many files named %s", name)
}

// size says n bytes in words: 20 MB, 512 KB.
func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.0f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// sendFile answers /file <path>: the file from the conversation's
// workdir, here or on its runner, as a document.
func (r *Router) sendFile(ctx context.Context, a *attached, m Message, arg string) (string, error) {
	conv, ok := r.convs.Get(m.Key)
	if !ok {
		return r.noConversation(), nil
	}
	f, err := r.workFile(ctx, m, conv, arg)
	if err != nil {
		return "", err
	}
	fs, ok := a.p.(FileSender)
	if !ok {
		return fmt.Sprintf("This platform cannot send files. The file is %s (%s).", f.Path, size(f.Size)), nil
	}
	if r.cfg.Redactor.Redact(string(f.Data)) != string(f.Data) {
		return "", Errorf("%s holds one of the bot's secrets: it is not sent", arg)
	}
	name := filepath.Base(f.Path)
	if _, err := fs.SendFile(ctx, m.Target(), name, f.Data, ""); err != nil {
		return "", fmt.Errorf("send %s: %w", name, err)
	}
	return "", nil
}

// workFile reads arg for /file from conv's workdir: on this machine, or
// on its runner, which checks it against the author's roots there.
func (r *Router) workFile(ctx context.Context, m Message, conv Conversation, arg string) (WorkFile, error) {
	if runner, workdir, remote := r.remoteWorkdir(conv.Workdir); remote {
		rf, ok := r.cfg.Runners.(RunnerFiles)
		if !ok {
			return WorkFile{}, errLocalOnly("/file", runner)
		}
		f, err := rf.ReadFile(ctx, runner, workdir, arg, r.isAdmin(m), r.maxAttachment())
		f.Path = runner + ":" + f.Path
		return f, err
	}
	workdir, err := r.conversationWorkdir(m, conv.Workdir)
	if err != nil {
		return WorkFile{}, err
	}
	return ReadWorkFile(arg, workdir, r.userRoots(m), r.maxAttachment())
}

// WorkFile is a file /file sends: where it is, its size and its bytes.
type WorkFile struct {
	Path string
	Size int64
	Data []byte
}

// ReadWorkFile reads path, relative to workdir, for /file: with its
// symlinks resolved it must be inside roots, and a regular file neither
// empty nor over max bytes. Its errors are the user's to read.
func ReadWorkFile(path, workdir string, roots Roots, max int64) (WorkFile, error) {
	f, fi, err := OpenWorkFile(path, workdir, roots, max)
	if err != nil {
		return WorkFile{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return WorkFile{}, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > max {
		return WorkFile{}, Errorf("%s grew over the %s limit (ATTACHMENT_MAX_BYTES) while it was read", path, size(max))
	}
	return WorkFile{Path: f.Name(), Size: fi.Size(), Data: data}, nil
}

// OpenWorkFile opens path as ReadWorkFile checks it.
func OpenWorkFile(path, workdir string, roots Roots, max int64) (*os.File, os.FileInfo, error) {
	real, err := realPath(path, workdir)
	if errors.Is(err, ErrNoSuchDir) {
		return nil, nil, Errorf("%s: no such file or directory", path)
	}
	if err != nil {
		return nil, nil, Errorf("%s: %v", path, err)
	}
	if !roots.Contains(real) {
		return nil, nil, Errorf("%s is outside the directories you may work in", path)
	}
	// Checked before it is opened: opening a named pipe would wait for a
	// writer. Checked again once open, in case it was swapped meanwhile.
	fi, err := os.Stat(real)
	if err != nil {
		return nil, nil, Errorf("%s: %v", path, bareError(err))
	}
	if err := checkWorkFile(path, fi, max); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(real, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, Errorf("%s: %v", path, bareError(err))
	}
	opened, err := f.Stat()
	if err == nil && !os.SameFile(fi, opened) {
		err = Errorf("%s changed while it was opened; try again", path)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// checkWorkFile says what keeps fi from being sent as path, if anything.
func checkWorkFile(path string, fi os.FileInfo, max int64) error {
	switch {
	case !fi.Mode().IsRegular():
		return Errorf("%s is not a file", path)
	case fi.Size() == 0:
		// Every platform refuses an empty upload; say so before asking.
		return Errorf("%s is empty: there is nothing to send", path)
	case fi.Size() > max:
		return Errorf("%s is %s, over the %s limit (ATTACHMENT_MAX_BYTES)", path, size(fi.Size()), size(max))
	}
	return nil
}

// bareError is err without the path a *fs.PathError names: the path the
// user wrote is shown instead.
func bareError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
