package gemini_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// An image the user sent reaches the model as inline data: through ACP
// as an image block, one-shot as an @file the CLI reads itself, even in
// a git repository that ignores the uploads folder (the bot adds
// .jakebot/ to .git/info/exclude), and the copy made for it is gone
// after the turn.
func TestImagesReachTheModel(t *testing.T) {
	t.Parallel()
	for _, ask := range []bool{false, true} {
		t.Run(map[bool]string{false: "one-shot", true: "acp"}[ask], func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, plugintest.Reply{Text: []string{"A red diagonal."}})
			if out, err := exec.Command("git", "init", "-q", f.workdir).CombinedOutput(); err != nil {
				t.Fatalf("git init: %v: %s", err, out)
			}
			if err := os.WriteFile(filepath.Join(f.workdir, ".git", "info", "exclude"), []byte(".jakebot/\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("screen shot %d.png", time.Now().UnixNano()) // unique in the shared temp folder
			shot, b64 := plugintest.PNG(t, f.workdir, ".jakebot/uploads/2026-11-25/"+name)
			tr := plugintest.RunTurn(context.Background(), t, f.plugin, core.Turn{Workdir: f.workdir, Ask: ask,
				Prompt: "what is wrong here?", Images: []string{shot}})
			if tr.Err != nil || tr.Text() != "A red diagonal." {
				t.Fatalf("turn = %q, %v", tr.Text(), tr.Err)
			}
			reqs := f.model.Requests()
			if len(reqs) == 0 {
				t.Fatal("no request reached the model")
			}
			body := string(reqs[len(reqs)-1].Body)
			if !strings.Contains(body, "inlineData") || !strings.Contains(body, b64) || !strings.Contains(body, "what is wrong here?") {
				t.Errorf("the request lacks the image or the prompt:\n%.3000s", body)
			}
			if left, _ := filepath.Glob(filepath.Join(os.TempDir(), "jakebot-images-*", "*"+strings.ReplaceAll(name, " ", "_"))); len(left) > 0 {
				t.Errorf("staged images left behind: %q", left)
			}
		})
	}
}
