package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jake-bot/jake-bot/core"
)

// savedTurns is a turns bucket that keeps what was put and deleted, in
// order.
type savedTurns struct {
	jetstream.KeyValue
	log []string // "put <seq>/<stream seq>" or "delete"
}

func (s *savedTurns) Put(_ context.Context, _ string, value []byte) (uint64, error) {
	var rec turnRecord
	if err := json.Unmarshal(value, &rec); err != nil {
		return 0, err
	}
	s.log = append(s.log, fmt.Sprintf("put %d/%d", rec.Seq, rec.StreamSeq))
	return 0, nil
}

func (s *savedTurns) Delete(context.Context, string, ...jetstream.KVDeleteOpt) error {
	s.log = append(s.log, "delete")
	return nil
}

// streamMsg is a turn message as the event stream delivers it, at its
// place there.
type streamMsg struct {
	jetstream.Msg
	data   []byte
	stream uint64
}

func (m streamMsg) Data() []byte { return m.data }
func (m streamMsg) Metadata() (*jetstream.MsgMetadata, error) {
	return &jetstream.MsgMetadata{Sequence: jetstream.SequencePair{Stream: m.stream}}, nil
}

// A batch of turn messages is saved once, as far as its last message,
// before the chat sees any of its events: a gateway that follows the turn
// again after a restart starts after all of them, and shows none twice.
// Messages applied already are skipped; the end drops the record before
// its events are shown.
func TestABatchIsSavedOnceBeforeItIsShown(t *testing.T) {
	kv := &savedTurns{}
	p := &remotePlugin{g: &Gateway{turns: kv, cfg: GatewayConfig{Logger: core.OrDiscard(nil)}}, runner: "box2"}
	rec := &turnRecord{ID: "T"}
	msg := func(seq int, done bool, text string) jetstream.Msg {
		data, _ := json.Marshal(turnMessage{Seq: seq, Done: done, Events: []wireEvent{{Kind: core.EventText, Text: text}}})
		return streamMsg{data: data, stream: uint64(10 + seq)}
	}
	var shown []string
	emit := func(ev core.Event) {
		saved := "nothing"
		if n := len(kv.log); n > 0 {
			saved = kv.log[n-1]
		}
		shown = append(shown, ev.Text+" after "+saved)
	}
	for _, tt := range []struct {
		batch []jetstream.Msg
		want  []string
		end   bool
	}{
		{[]jetstream.Msg{msg(1, false, "a"), msg(2, false, "b"), msg(3, false, "c")}, []string{"a after put 3/13", "b after put 3/13", "c after put 3/13"}, false},
		{[]jetstream.Msg{msg(3, false, "c"), msg(4, false, "d")}, []string{"d after put 4/14"}, false},
		{[]jetstream.Msg{msg(4, false, "d")}, nil, false},
		{[]jetstream.Msg{msg(5, false, "e"), msg(6, true, "f")}, []string{"e after delete", "f after delete"}, true},
	} {
		shown = nil
		end, err := p.apply(rec, tt.batch, nil, &core.Inbox{}, emit)
		if err != nil || (end != nil) != tt.end || !slices.Equal(shown, tt.want) {
			t.Errorf("applied %v (end %v, err %v), want %v", shown, end != nil, err, tt.want)
		}
	}
	if want := []string{"put 3/13", "put 4/14", "delete"}; !slices.Equal(kv.log, want) {
		t.Errorf("the record went %v, want %v", kv.log, want)
	}
}
