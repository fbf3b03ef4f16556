package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
)

// savedTurns is a turns bucket that keeps what was put and deleted, in
// order. With gate set, each Put waits for a value on it first.
type savedTurns struct {
	jetstream.KeyValue
	gate chan struct{}
	// putting, with gate, hears of each Put as it starts waiting.
	putting chan struct{}

	mu  sync.Mutex
	log []string // "put <seq>/<stream seq>" or "delete"
}

func (s *savedTurns) Put(_ context.Context, _ string, value []byte) (uint64, error) {
	if s.gate != nil {
		s.putting <- struct{}{}
		<-s.gate
	}
	var rec turnRecord
	if err := json.Unmarshal(value, &rec); err != nil {
		return 0, err
	}
	s.add(fmt.Sprintf("put %d/%d", rec.Seq, rec.StreamSeq))
	return 0, nil
}

func (s *savedTurns) Delete(context.Context, string, ...jetstream.KVDeleteOpt) error {
	s.add("delete")
	return nil
}

func (s *savedTurns) add(entry string) {
	s.mu.Lock()
	s.log = append(s.log, entry)
	s.mu.Unlock()
}

func (s *savedTurns) entries() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
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

// turnMsg is turn message seq of one text event, at 10+seq in the stream.
func turnMsg(seq int, done bool, text string) jetstream.Msg {
	data, _ := json.Marshal(turnMessage{Seq: seq, Done: done, Events: []wireEvent{{Kind: core.EventText, Text: text}}})
	return streamMsg{data: data, stream: uint64(10 + seq)}
}

// A batch of turn messages is shown as it comes, skipping the messages
// applied already, and moves the record on past its last message.
func TestABatchIsShownAndMovesTheRecordOn(t *testing.T) {
	p := &remotePlugin{g: &Gateway{cfg: GatewayConfig{Logger: core.OrDiscard(nil)}}, runner: "box2"}
	rec := &turnRecord{ID: "T"}
	var shown []string
	emit := func(ev core.Event) { shown = append(shown, ev.Text) }
	for _, tt := range []struct {
		batch   []jetstream.Msg
		want    []string
		end     bool
		err     string
		applied string
	}{
		{[]jetstream.Msg{turnMsg(1, false, "a"), turnMsg(2, false, "b"), turnMsg(3, false, "c")}, []string{"a", "b", "c"}, false, "", "3/13"},
		{[]jetstream.Msg{turnMsg(3, false, "c"), turnMsg(4, false, "d")}, []string{"d"}, false, "", "4/14"},
		{[]jetstream.Msg{turnMsg(4, false, "d")}, nil, false, "", "4/14"},
		{[]jetstream.Msg{turnMsg(5, false, "e"), turnMsg(7, false, "g")}, []string{"e"}, false, "turn message 7 came where 6 was due", "5/15"},
		{[]jetstream.Msg{turnMsg(6, false, "f"), turnMsg(7, true, "g"), turnMsg(8, false, "h")}, []string{"f", "g"}, true, "", "7/17"},
	} {
		shown = nil
		end, err := p.apply(rec, tt.batch, nil, &core.Inbox{}, emit)
		if (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("error %v, want %q", err, tt.err)
		}
		applied := fmt.Sprintf("%d/%d", rec.Seq, rec.StreamSeq)
		if (end != nil) != tt.end || !slices.Equal(shown, tt.want) || applied != tt.applied {
			t.Errorf("showed %v (end %v), record at %s; want %v (end %v) at %s", shown, end != nil, applied, tt.want, tt.end, tt.applied)
		}
	}
}

// The record is saved after its batch is shown, in the background: a
// save on its way holds up no event, and saves come at most every
// saveEvery, each of the latest record shown. A stop saves the last at
// once; an end drops what was not saved yet and deletes the record after
// any save on its way, never before.
func TestTheRecordIsSavedBehindTheChat(t *testing.T) {
	for _, tt := range []struct {
		name string
		// then, once the first save is through and two batches more are
		// shown, ends the saving and lets its saves through.
		then func(s *recordSaver, kv *savedTurns, clock *coretest.ManualClock)
		want []string
	}{
		{"later", func(s *recordSaver, kv *savedTurns, clock *coretest.ManualClock) {
			if d := <-clock.Waiting(); d != saveEvery {
				t.Errorf("the next save waits %v, want %v", d, saveEvery)
			}
			if got := kv.entries(); len(got) != 1 {
				t.Errorf("saved %v before saveEvery was over", got)
			}
			clock.AdvanceToNext()
			<-kv.putting
			kv.gate <- struct{}{}
			s.close(true)
		}, []string{"put 1/11", "put 3/13"}},
		{"stop", func(s *recordSaver, kv *savedTurns, _ *coretest.ManualClock) {
			go func() { <-kv.putting; kv.gate <- struct{}{} }()
			s.close(true)
		}, []string{"put 1/11", "put 3/13"}},
		{"end", func(s *recordSaver, kv *savedTurns, _ *coretest.ManualClock) {
			s.close(false)
			s.g.dropTurn("T")
		}, []string{"put 1/11", "delete"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			kv := &savedTurns{gate: make(chan struct{}), putting: make(chan struct{})}
			clock := coretest.NewManualClock()
			s := newRecordSaver(&Gateway{turns: kv, cfg: GatewayConfig{Clock: clock, Logger: core.OrDiscard(nil)}})
			rec := &turnRecord{ID: "T"}
			for seq := 1; seq <= 3; seq++ {
				rec.Seq, rec.StreamSeq = seq, uint64(10+seq)
				s.note(rec)
				if seq == 1 {
					<-kv.putting // the first save waits at the gate: the next notes must not
				}
			}
			kv.gate <- struct{}{}
			tt.then(s, kv, clock)
			s.note(rec) // after close: nothing
			if got := kv.entries(); !slices.Equal(got, tt.want) {
				t.Errorf("the record went %v, want %v", got, tt.want)
			}
		})
	}
}
