package bot

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/plugins/cliproc"
)

func TestTranscriber(t *testing.T) {
	t.Parallel()
	note := filepath.Join(t.TempDir(), "voice 1.ogg")
	if err := os.WriteFile(note, []byte("fix the build\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		cmd     cliproc.Args
		environ []string
		want    string
		wantErr string
	}{
		{name: "file in the template", cmd: cliproc.Args{"sh", "-c", `tr a-z A-Z < "$1"`, "sh", "{file}"}, want: "FIX THE BUILD\n"},
		{name: "file appended", cmd: cliproc.Args{"cat"}, want: "fix the build\n"},
		{name: "file inside a word", cmd: cliproc.Args{"sh", "-c", "cat '{file}'"}, want: "fix the build\n"},
		{name: "children's environment", cmd: cliproc.Args{"sh", "-c", `printf '%s' "$HEARD"`, "sh", "{file}"},
			environ: []string{"PATH=" + os.Getenv("PATH"), "HEARD=from the child env"}, want: "from the child env"},
		{name: "failure", cmd: cliproc.Args{"sh", "-c", "echo no model loaded >&2; exit 3"}, wantErr: "exited with status 3: no model loaded"},
		{name: "missing", cmd: cliproc.Args{"no-such-whisper"}, wantErr: "TRANSCRIBE_CMD: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := transcriber(tt.cmd, tt.environ)(context.Background(), note)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	if transcriber(nil, nil) != nil {
		t.Error("no TRANSCRIBE_CMD gave a transcriber")
	}
}

// TestTranscriberHidesTheNotesPath: {file} is a copy named by the bot in a
// folder of its own, removed afterwards, so a template that puts {file} in
// a shell line runs nothing a workdir's or a sender's file name spells.
func TestTranscriberHidesTheNotesPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, dir, file, wantBase string
	}{
		{name: "workdir spells a command", dir: "x$(touch $MARK)", file: "voice.ogg", wantBase: "voice.ogg"},
		{name: "file name spells a command", dir: "plain", file: "a$(touch $MARK).OGG", wantBase: "voice.ogg"},
		{name: "extension spells a command", dir: "plain", file: "note.$(touch $MARK)", wantBase: "voice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "marker")
			environ := []string{"PATH=" + os.Getenv("PATH"), "MARK=" + marker}
			dir := filepath.Join(t.TempDir(), tt.dir)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			note := filepath.Join(dir, tt.file)
			if err := os.WriteFile(note, []byte("heard\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := transcriber(cliproc.Args{"sh", "-c", "cat {file}; echo {file}"}, environ)(context.Background(), note)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatalf("the note's path ran as a command: %s exists", marker)
			}
			text, staged, _ := strings.Cut(got, "\n")
			staged = strings.TrimSpace(staged)
			if text != "heard" || filepath.Base(staged) != tt.wantBase {
				t.Errorf("printed %q; want the note's text and a copy named %s", got, tt.wantBase)
			}
			if _, err := os.Stat(filepath.Dir(staged)); err == nil {
				t.Errorf("the copy's folder %s was left behind", filepath.Dir(staged))
			}
			if _, err := os.Stat(note); err != nil {
				t.Errorf("the note itself is gone: %v", err)
			}
		})
	}
}
