package acp

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
)

// Interrupting a turn whose tool call waits for permission answers the
// request as cancelled after session/cancel, as ACP asks of the client:
// the pinned CLI waits for that answer before it ends the turn. The
// question's own answer, coming later, sends nothing.
func TestInterruptCancelsPermissionRequests(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../../../testdata/gemini/acp/approval.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	// The session up to its permission request.
	upTo := bytes.Index(data, []byte(`"method":"session/request_permission"`))
	upTo += bytes.IndexByte(data[upTo:], '\n') + 1
	var a *Client
	var sent []string
	var q *core.Question
	_, err = cliproc.Replay(bytes.NewReader(data[:upTo]), "Gemini CLI", func(link *cliproc.Link) cliproc.Protocol {
		a = New(core.Turn{Ask: true}, Options{Name: "Gemini CLI"}, link)
		a.rpc.Send = func(v any) error {
			b, _ := json.Marshal(v)
			sent = append(sent, string(b))
			return nil
		}
		return a
	}, func(ev core.Event) {
		if ev.Kind == core.EventQuestion {
			q = ev.Question
		}
	})
	if err != nil || q == nil {
		t.Fatalf("replay: %v; question %v", err, q)
	}
	sent = nil
	if err := a.Interrupt(); err != nil {
		t.Fatal(err)
	}
	q.Answer(core.Answer{Decision: core.Deny, Reason: "the turn ended"})
	want := []string{
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"ebfa4f3f-5ab3-4c11-a82b-b7e30e5a96eb"}}`,
		`{"id":0,"jsonrpc":"2.0","result":{"outcome":{"outcome":"cancelled"}}}`,
	}
	if strings.Join(sent, "\n") != strings.Join(want, "\n") {
		t.Errorf("sent\n%s\nwant\n%s", strings.Join(sent, "\n"), strings.Join(want, "\n"))
	}
}
