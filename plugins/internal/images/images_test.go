package images

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"
)

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	png := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 16)...)
	jpeg := append([]byte("\xff\xd8\xff"), make([]byte, 16)...)
	paths := []string{
		write("a.png", png),
		write("b.jpg", jpeg),
		write("notes.txt", []byte("not an image")),
		write("huge.png", append(png, make([]byte, MaxBytes)...)),
		filepath.Join(dir, "missing.png"),
		dir,
	}
	got := Load(paths)
	if len(got) != 2 {
		t.Fatalf("Load gave %d images, want the png and the jpeg: %+v", len(got), got)
	}
	for i, want := range []struct {
		mt   string
		data []byte
	}{{"image/png", png}, {"image/jpeg", jpeg}} {
		if got[i].MediaType != want.mt || got[i].Base64 != base64.StdEncoding.EncodeToString(want.data) || got[i].Path != paths[i] {
			t.Errorf("image %d = %s %s, want %s", i, got[i].Path, got[i].MediaType, want.mt)
		}
	}
}
