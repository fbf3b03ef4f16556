package remote_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jake-bot/jake-bot/core"
)

// The ids of turns, uploads, runner processes and their messages'
// senders, as they travel, are random: 128 bits, and no two share a
// beginning. nuid's share a prefix
// and step by a constant, so a runner that saw two of its own turn ids
// could name another runner's next turn and have JetStream drop that
// turn's messages as duplicates of its own.
func TestIDsAreUnpredictable(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	sniff := connect(t, w.url)
	turns := subscribeSync(t, sniff, "jakebot.v4.runner.*.turn")
	uploads := subscribeSync(t, sniff, "jakebot.v4.runner.*.upload")
	announces := subscribeSync(t, sniff, "jakebot.v4.announce.*")
	events := subscribeSync(t, sniff, "jakebot.v4.runner.*.events")
	box2 := w.startRunner(runnerOpts{name: "box2"})
	w.startRunner(runnerOpts{name: "box3"})
	w.startGateway()
	w.waitOnline("box2")
	w.startOn(box2)

	const n = 5
	for i := range n {
		w.gw.rec.Say(core.Message{Key: key(admin), Text: "look", Files: []core.Attachment{
			attachment("a.txt", core.FileDocument, []byte{byte(i)})}})
		w.expect("box2 echo: look", "$0.0100")
	}
	ids := distinct(t, turns, "id", n)
	ids = append(ids, distinct(t, uploads, "id", n)...)
	ids = append(ids, distinct(t, announces, "instance", 2)...)
	// A runner's message ids begin with its sender's id, announced nowhere.
	m, err := events.NextMsg(30 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	sender, _, _ := strings.Cut(m.Header.Get(jetstream.MsgIDHeader), ".")
	ids = append(ids, sender)

	form := regexp.MustCompile(`^[A-Za-z0-9]{26,}$`) // one subject token, a KV key, ≥128 bits
	for i, id := range ids {
		if !form.MatchString(id) {
			t.Errorf("id %q is not %s", id, form)
		}
		for _, other := range ids[:i] {
			if len(id) >= 12 && len(other) >= 12 && id[:12] == other[:12] {
				t.Errorf("ids %q and %q share their first 12 characters", other, id)
			}
		}
	}
}

func subscribeSync(t *testing.T, nc *nats.Conn, subject string) *nats.Subscription {
	t.Helper()
	sub, err := nc.SubscribeSync(subject)
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return sub
}

// distinct reads sub's messages until it has seen n values of their JSON
// field.
func distinct(t *testing.T, sub *nats.Subscription, field string, n int) []string {
	t.Helper()
	var seen []string
	for len(seen) < n {
		m, err := sub.NextMsg(30 * time.Second)
		if err != nil {
			t.Fatalf("%s: %d distinct %s of %d: %v", sub.Subject, len(seen), field, n, err)
		}
		var v map[string]any
		if err := json.Unmarshal(m.Data, &v); err != nil {
			t.Fatalf("%s: %v", sub.Subject, err)
		}
		if id, _ := v[field].(string); id != "" && !slices.Contains(seen, id) {
			seen = append(seen, id)
		}
	}
	return seen
}
