package workspace_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core/workspace"
)

func TestRootsResolve(t *testing.T) {
	t.Parallel()
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(tmp, "root")
	outside := filepath.Join(tmp, "outside")
	for _, d := range []string{root + "/proj/sub", outside, tmp + "/rootsibling"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustSymlink(t, outside, root+"/escape")
	mustSymlink(t, root+"/proj", root+"/alias")
	mustSymlink(t, "../../outside", root+"/proj/relescape")
	if err := os.WriteFile(root+"/file.txt", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	roots, err := workspace.NewRoots([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, base string
		want             string // resolved path, or "" for a refusal
		wantErr          string
	}{
		{"root itself", root, "", root, ""},
		{"absolute inside", root + "/proj/sub", "", root + "/proj/sub", ""},
		{"relative to base", "sub", root + "/proj", root + "/proj/sub", ""},
		{"dot is base", ".", root + "/proj", root + "/proj", ""},
		{"relative without base is from the first root", "proj", "", root + "/proj", ""},
		{"symlink inside the root", root + "/alias/sub", "", root + "/proj/sub", ""},
		{"dotdot out of the root", "../outside", root, "", "outside the allowed roots"},
		{"dotdot chain", "../../../../../../../../../../../../etc", root + "/proj", "", "outside the allowed roots"},
		{"absolute outside", "/etc", "", "", "outside the allowed roots"},
		{"symlink pointing outside", root + "/escape", "", "", "outside the allowed roots"},
		{"relative symlink pointing outside", root + "/proj/relescape", "", "", "outside the allowed roots"},
		{"sibling sharing the prefix", tmp + "/rootsibling", "", "", "outside the allowed roots"},
		{"missing", root + "/nope", "", "", "no such directory"},
		{"missing names the roots", root + "/nope", "", "", "allowed roots: " + root},
		{"a file", root + "/file.txt", "", "", "not a directory"},
		{"roots are named in the refusal", "/", "", "", root},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := roots.Resolve(tt.path, tt.base)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Resolve(%q, %q) = %q, %v; want error containing %q", tt.path, tt.base, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Resolve(%q, %q) = %q, %v; want %q", tt.path, tt.base, got, err, tt.want)
			}
		})
	}
}

func TestNewRootsRefusesMissingRoot(t *testing.T) {
	t.Parallel()
	if _, err := workspace.NewRoots([]string{filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Fatal("NewRoots with a missing root: no error")
	}
	if _, err := workspace.NewRoots(nil); err == nil {
		t.Fatal("NewRoots with no roots: no error")
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
