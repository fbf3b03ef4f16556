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

// turnMsg is turn message seq of one text event, at 10+seq in the stream.
func turnMsg(seq int, done bool, text string) feedPart {
	return feedPart{tm: &turnMessage{Turn: "T", Seq: seq, Done: done, Events: []wireEvent{{Kind: core.EventText, Text: text}}},
		streamSeq: uint64(10 + seq)}
}

// A batch of turn messages is shown as it comes, skipping the messages
// applied already, and moves the record on past its last message.
func TestABatchIsShownAndMovesTheRecordOn(t *testing.T) {
	p := &remotePlugin{g: &Gateway{cfg: GatewayConfig{Logger: core.OrDiscard(nil)}}, runner: "box2"}
	rec := &turnRecord{ID: "T"}
	var shown []string
	emit := func(ev core.Event) { shown = append(shown, ev.Text) }
	for _, tt := range []struct {
		batch   []feedPart
		want    []string
		end     bool
		err     string
		applied string
	}{
		{[]feedPart{turnMsg(1, false, "a"), turnMsg(2, false, "b"), turnMsg(3, false, "c")}, []string{"a", "b", "c"}, false, "", "3/13"},
		{[]feedPart{turnMsg(3, false, "c"), turnMsg(4, false, "d")}, []string{"d"}, false, "", "4/14"},
		{[]feedPart{turnMsg(4, false, "d")}, nil, false, "", "4/14"},
		{[]feedPart{turnMsg(5, false, "e"), turnMsg(7, false, "g")}, []string{"e"}, false, "turn message 7 came where 6 was due", "5/15"},
		{[]feedPart{turnMsg(6, false, "f"), turnMsg(7, true, "g"), turnMsg(8, false, "h")}, []string{"f", "g"}, true, "", "7/17"},
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

// streamMsg is a message as the event stream delivers it, at its place
// there.
type streamMsg struct {
	jetstream.Msg
	subject string
	data    []byte
	stream  uint64
}

func (m streamMsg) Subject() string { return m.subject }
func (m streamMsg) Data() []byte    { return m.data }
func (m streamMsg) Metadata() (*jetstream.MsgMetadata, error) {
	return &jetstream.MsgMetadata{Sequence: jetstream.SequencePair{Stream: m.stream}}, nil
}

// A message of the stream carries parts of many turns: each goes to its
// turn, with the message's place, if it came from the turn's runner. A
// runner naming another's turn writes nothing into it.
func TestPartsGoToTheirTurnsFromTheirRunnerOnly(t *testing.T) {
	r := &eventReader{feeds: map[string]followed{}, logger: core.OrDiscard(nil)}
	t1, from := r.open("T1", "box2")
	t2, _ := r.open("T2", "box2")
	t3, _ := r.open("T3", "box3")
	if from != 0 {
		t.Errorf("a turn opened before any message starts after %d", from)
	}
	batch := func(runner string, seq uint64, turns ...string) jetstream.Msg {
		var b eventBatch
		for _, id := range turns {
			b.Parts = append(b.Parts, turnMessage{Turn: id, Seq: 1, Events: []wireEvent{{Kind: core.EventText, Text: id + "@" + runner}}})
		}
		data, _ := json.Marshal(b)
		return streamMsg{subject: eventSubject(runner), data: data, stream: seq}
	}
	r.deliver(batch("box2", 7, "T1", "T2", "T3", "gone"))
	r.deliver(batch("box3", 8, "T1", "T3"))
	r.deliver(streamMsg{subject: eventSubject("box2"), data: []byte("{not json"), stream: 9})
	for _, tt := range []struct {
		name string
		feed *feed
		want []string
	}{
		{"T1", t1, []string{"T1@box2 at 7"}},
		{"T2", t2, []string{"T2@box2 at 7"}},
		{"T3", t3, []string{"T3@box3 at 8"}},
	} {
		parts, _ := tt.feed.take()
		var got []string
		for _, p := range parts {
			got = append(got, fmt.Sprintf("%s at %d", p.tm.Events[0].Text, p.streamSeq))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s got %v, want %v", tt.name, got, tt.want)
		}
	}
	if _, from := r.open("T4", "box2"); from != 9 {
		t.Errorf("a turn opened after message 9 was read starts after %d", from)
	}
}
