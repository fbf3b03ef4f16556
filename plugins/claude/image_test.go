package claude_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/claude"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// An image the user sent reaches the model as an image block, whether the
// turn asks (control protocol) or not (one-shot, which then takes its
// message as stream-json too).
func TestImagesReachTheModel(t *testing.T) {
	t.Parallel()
	for _, ask := range []bool{false, true} {
		t.Run(map[bool]string{false: "auto", true: "ask"}[ask], func(t *testing.T) {
			t.Parallel()
			bin := plugintest.CLIPath(t, "claude")
			model := plugintest.NewAnthropic(t, plugintest.Reply{Text: []string{"A red diagonal."}})
			home := plugintest.Home(t)
			mark, alive := plugintest.ProcessMarker(t)
			t.Cleanup(func() {
				if pids := alive(); len(pids) != 0 {
					t.Errorf("processes %v outlived the test", pids)
				}
			})
			workdir, _ := filepath.EvalSymlinks(t.TempDir())
			shot, b64 := plugintest.PNG(t, workdir, ".jakebot/uploads/2026-11-25/screen shot.png")
			p := claude.New(claude.Config{Bin: bin, ConfigDir: filepath.Join(home, ".claude"),
				Env: append(plugintest.ClaudeEnv(t, model, home), mark)}, nil)
			tr := plugintest.RunTurn(context.Background(), t, p, core.Turn{Workdir: workdir, Ask: ask,
				Prompt: "what is wrong here?", Images: []string{shot}})
			if tr.Err != nil || tr.Text() != "A red diagonal." {
				t.Fatalf("turn = %q, %v", tr.Text(), tr.Err)
			}
			reqs := model.Requests()
			if len(reqs) == 0 {
				t.Fatal("no request reached the model")
			}
			body := string(reqs[0].Body)
			if !strings.Contains(body, `"type":"image"`) || !strings.Contains(body, b64) ||
				!strings.Contains(reqs[0].LastUserText(), "what is wrong here?") {
				t.Errorf("the request lacks the image block or the prompt:\n%.2000s", body)
			}
		})
	}
}
