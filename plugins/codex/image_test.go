package codex_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// An image the user sent reaches the model as image input, from
// `codex exec --image` and from the app-server's localImage input alike.
func TestImagesReachTheModel(t *testing.T) {
	t.Parallel()
	for _, ask := range []bool{false, true} {
		t.Run(map[bool]string{false: "exec", true: "app-server"}[ask], func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, plugintest.Reply{Text: []string{"A red diagonal."}})
			shot, b64 := plugintest.PNG(t, f.workdir, ".jakebot/uploads/2026-11-25/screen shot.png")
			tr := plugintest.RunTurn(context.Background(), t, f.plugin, core.Turn{Workdir: f.workdir, Ask: ask,
				Prompt: "what is wrong here?", Images: []string{shot}})
			if tr.Err != nil || tr.Text() != "A red diagonal." {
				t.Fatalf("turn = %q, %v", tr.Text(), tr.Err)
			}
			reqs := f.model.Requests()
			if len(reqs) == 0 {
				t.Fatal("no request reached the model")
			}
			body := string(reqs[0].Body)
			if !strings.Contains(body, "input_image") || !strings.Contains(body, b64) || !strings.Contains(body, "what is wrong here?") {
				t.Errorf("the request lacks the image or the prompt:\n%.3000s", body)
			}
		})
	}
}
