package workspace_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/jake-bot/jake-bot/core/workspace"
)

// An agent that swaps a folder for a symlink out of the roots between
// /file's check and its opening of the file (a race it wins in about
// 0.1 s) does not have the file it points to read: the file is opened
// through the root, not by its name again (issue 34).
func TestOpenFileThroughASwappedSymlink(t *testing.T) {
	// Not parallel: the hook is the package's.
	root, outside := tempDir(t), tempDir(t)
	mkdirAll(t, filepath.Join(root, "dir"))
	write(t, filepath.Join(root, "dir", "f.txt"), "inside\n")
	write(t, filepath.Join(outside, "f.txt"), "outside\n")
	s := workspace.Space{Roots: workspace.Roots{root}}
	if f, err := s.ReadFile("dir/f.txt", root, 100); err != nil || string(f.Data) != "inside\n" {
		t.Fatalf("ReadFile before the swap = %q, %v", f.Data, err)
	}
	workspace.SetBeforeOpen(t, func() {
		if err := os.Rename(filepath.Join(root, "dir"), filepath.Join(root, "old")); err != nil {
			t.Error(err)
		}
		if err := os.Symlink(outside, filepath.Join(root, "dir")); err != nil {
			t.Error(err)
		}
	})
	if f, err := s.ReadFile("dir/f.txt", root, 100); err == nil {
		t.Errorf("ReadFile through the swapped symlink read %q", f.Data)
	}
}

func tempDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func mkdirAll(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
