package workspace

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"
)

// Folder is a folder the bot writes files in, opened through a root
// holding it (os.Root): a folder on the way swapped for a symlink after
// the checks (an agent's race) cannot lead a file outside that root.
type Folder struct {
	// Path is the folder's path.
	Path string
	root *os.Root
	rel  string // Path, relative to root
}

// OpenFolder opens dir, which must be top or inside it, through top.
func OpenFolder(top, dir string) (*Folder, error) {
	rel, err := filepath.Rel(top, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("%s is not inside %s", dir, top)
	}
	root, err := os.OpenRoot(top)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", top, err)
	}
	return &Folder{Path: dir, root: root, rel: rel}, nil
}

// Close closes the folder; its files stay.
func (f *Folder) Close() error { return f.root.Close() }

// CreateTemp creates a file of a temporary name, .partial-*, in f and
// returns it and its name.
func (f *Folder) CreateTemp() (*os.File, string, error) {
	for range 10 {
		b := make([]byte, 8)
		_, _ = rand.Read(b)
		name := ".partial-" + hex.EncodeToString(b)
		file, err := f.root.OpenFile(filepath.Join(f.rel, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return file, name, err
	}
	return nil, "", fmt.Errorf("no free temporary name in %s", f.Path)
}

// Remove removes f's file name.
func (f *Folder) Remove(name string) error { return f.root.Remove(filepath.Join(f.rel, name)) }

// Place gives f's file tmp the name name, or name-1, name-2… when it is
// taken: an upload never overwrites. A hard link claims a name
// atomically; tmp, if still there, is the caller's to remove. It returns
// the file's path.
func (f *Folder) Place(tmp, name string) (string, error) {
	ext := filepath.Ext(name)
	base := strings.TrimSuffix(name, ext)
	from := filepath.Join(f.rel, tmp)
	for i := 0; i < 1000; i++ {
		candidate := name
		if i > 0 {
			candidate = fmt.Sprintf("%s-%d%s", base, i, ext)
		}
		to := filepath.Join(f.rel, candidate)
		err := f.root.Link(from, to)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			// A file system without hard links: check, then rename.
			if _, lerr := f.root.Lstat(to); lerr == nil {
				continue
			}
			if err := f.root.Rename(from, to); err != nil {
				return "", fmt.Errorf("name %s: %w", candidate, err)
			}
		}
		return filepath.Join(f.Path, candidate), nil
	}
	return "", fmt.Errorf("too many files named %s", name)
}

// PrepareUploads opens the folder for the files sent with messages on
// day in workdir, .jakebot/uploads/<day>/, making it through the root of
// s's that holds workdir, with .jakebot/ excluded from git where it can
// be, and removes the partial downloads a crash left in any day's folder.
func (s Space) PrepareUploads(ctx context.Context, workdir, day string, now time.Time, logger *slog.Logger) (*Folder, error) {
	top := s.Roots.holding(workdir)
	if top == "" {
		return nil, refuse("%s is outside the directories you may work in", workdir)
	}
	f, err := OpenFolder(top, workdir)
	if err != nil {
		return nil, err
	}
	uploads, err := f.mkdirs(".jakebot", "uploads")
	if err == nil {
		f.rel, err = f.mkdirs(".jakebot", "uploads", day)
	}
	if err != nil {
		f.Close()
		return nil, refuse("%w: files sent with a message are not saved there, and your message was not sent", err)
	}
	f.Path = filepath.Join(workdir, ".jakebot", "uploads", day)
	if n := removeStalePartials(f.root, uploads, now); n > 0 {
		logger.Info("removed downloads a crash left unfinished", "workdir", workdir, "files", n)
	}
	if err := s.Exclude(ctx, workdir); err != nil {
		logger.Warn("exclude .jakebot/ from git", "workdir", workdir, "err", err)
	}
	return f, nil
}

// mkdirsIn makes the folders parts in dir, one inside the other (mkdirs).
func mkdirsIn(dir string, parts ...string) (string, error) {
	f, err := OpenFolder(dir, dir)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if _, err := f.mkdirs(parts...); err != nil {
		return "", err
	}
	return filepath.Join(append([]string{dir}, parts...)...), nil
}

// mkdirs makes the folders parts in f, one inside the other, following
// no symlink: a repository that holds .jakebot as a symlink must not have
// the files users send, or worktrees, written where it points. It
// returns the last one's path relative to f's root.
func (f *Folder) mkdirs(parts ...string) (string, error) {
	dir := f.rel
	for _, p := range parts {
		dir = filepath.Join(dir, p)
		shown := filepath.Join(f.root.Name(), dir)
		fi, err := f.root.Lstat(dir)
		if errors.Is(err, fs.ErrNotExist) {
			if err := f.root.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				return "", fmt.Errorf("make folder %s: %w", shown, bareError(err))
			}
			fi, err = f.root.Lstat(dir)
		}
		if err != nil {
			return "", fmt.Errorf("make folder %s: %w", shown, bareError(err))
		}
		if !fi.IsDir() {
			return "", refuse("%s is not a folder (a symlink?)", shown)
		}
	}
	return dir, nil
}

// stalePartial is how long a download's temporary file may go unwritten
// before it is taken for one that a crash left behind: a download in
// progress, in this process or another, writes to it all along.
const stalePartial = time.Hour

// removeStalePartials removes, from every day's folder in uploads (in
// root), the temporary files (.partial-*) of downloads not written to for
// stalePartial, and returns how many. It removes only regular files.
func removeStalePartials(root *os.Root, uploads string, now time.Time) int {
	days, _ := fs.ReadDir(root.FS(), filepath.ToSlash(uploads))
	n := 0
	for _, day := range days {
		if !day.IsDir() {
			continue
		}
		files, _ := fs.ReadDir(root.FS(), filepath.ToSlash(filepath.Join(uploads, day.Name())))
		for _, f := range files {
			if !strings.HasPrefix(f.Name(), ".partial-") || !f.Type().IsRegular() {
				continue
			}
			path := filepath.Join(uploads, day.Name(), f.Name())
			if fi, err := root.Lstat(path); err == nil && now.Sub(fi.ModTime()) > stalePartial && root.Remove(path) == nil {
				n++
			}
		}
	}
	return n
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

// UploadFile is a file sent with a message, downloaded here, to save in a
// workdir: the name it is to have there and where its copy is.
type UploadFile struct {
	Name, Path string
}

// SaveUploads copies files into workdir's uploads folder for day
// (PrepareUploads), each under its name or a free one like it
// (Folder.Place): all or none. It returns their paths, in order.
func (s Space) SaveUploads(ctx context.Context, workdir, day string, now time.Time, files []UploadFile, logger *slog.Logger) ([]string, error) {
	dir, err := s.PrepareUploads(ctx, workdir, day, now, logger)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	var paths []string
	for _, u := range files {
		path, err := dir.copyIn(u)
		if err != nil {
			for _, p := range paths {
				dir.Remove(filepath.Base(p))
			}
			return nil, fmt.Errorf("save %s: %w", u.Name, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// copyIn copies u's file into f under a temporary name, then gives it its
// own (Place).
func (f *Folder) copyIn(u UploadFile) (string, error) {
	in, err := os.Open(u.Path)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, tmp, err := f.CreateTemp()
	if err != nil {
		return "", err
	}
	defer f.Remove(tmp)
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	return f.Place(tmp, u.Name)
}
