package workspace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// File is a file /file sends: where it is, its size and its bytes.
type File struct {
	Path string
	Size int64
	Data []byte
}

// ReadFile reads path, relative to workdir, for /file: with its symlinks
// resolved it must be inside s's roots, and a regular file neither empty
// nor over max bytes.
func (s Space) ReadFile(path, workdir string, max int64) (File, error) {
	f, fi, err := s.OpenFile(path, workdir, max)
	if err != nil {
		return File{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return File{}, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > max {
		return File{}, refuse("%s grew over the %s limit (ATTACHMENT_MAX_BYTES) while it was read", path, Size(max))
	}
	return File{Path: f.Name(), Size: fi.Size(), Data: data}, nil
}

// beforeOpen runs between a file's check and its opening: tests swap a
// folder for a symlink there.
var beforeOpen = func() {}

// OpenFile opens path as ReadFile checks it. It is opened through the
// root that holds it (os.Root), not by its name again: a folder on the way
// swapped for a symlink between the check and the opening (an agent's
// race) cannot lead outside that root.
func (s Space) OpenFile(path, workdir string, max int64) (*os.File, os.FileInfo, error) {
	real, err := realPath(path, workdir)
	if errors.Is(err, ErrNoSuchDir) {
		return nil, nil, refuse("%s: no such file or directory", path)
	}
	if err != nil {
		return nil, nil, refuse("%s: %v", path, err)
	}
	top := s.Roots.holding(real)
	if top == "" {
		return nil, nil, refuse("%s is outside the directories you may work in", path)
	}
	beforeOpen()
	root, err := os.OpenRoot(top)
	if err != nil {
		return nil, nil, fmt.Errorf("open root %s: %w", top, err)
	}
	defer root.Close()
	rel, err := filepath.Rel(top, real)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", path, err)
	}
	// Checked before it is opened: opening a named pipe would wait for a
	// writer. Checked again once open, in case it was swapped meanwhile.
	fi, err := root.Stat(rel)
	if err != nil {
		return nil, nil, refuse("%s: %v", path, bareError(err))
	}
	if err := checkFile(path, fi, max); err != nil {
		return nil, nil, err
	}
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, refuse("%s: %v", path, bareError(err))
	}
	opened, err := f.Stat()
	if err == nil && !os.SameFile(fi, opened) {
		err = refuse("%s changed while it was opened; try again", path)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// checkFile says what keeps fi from being sent as path, if anything.
func checkFile(path string, fi os.FileInfo, max int64) error {
	switch {
	case !fi.Mode().IsRegular():
		return refuse("%s is not a file", path)
	case fi.Size() == 0:
		// Every platform refuses an empty upload; say so before asking.
		return refuse("%s is empty: there is nothing to send", path)
	case fi.Size() > max:
		return refuse("%s is %s, over the %s limit (ATTACHMENT_MAX_BYTES)", path, Size(fi.Size()), Size(max))
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

// Size says n bytes in words: 20 MB, 512 KB.
func Size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.0f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
