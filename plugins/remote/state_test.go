package remote_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jake-bot/jake-bot/bot/state"
	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/remote"
)

// The state is saved with a compare-and-set: a gateway that did not read
// what another wrote since cannot overwrite it (ErrStateTaken), and can
// once it read it again.
func TestStateSaveRefusedAfterAnotherWrote(t *testing.T) {
	t.Parallel()
	url := runNATS(t, nil)
	ctx := context.Background()
	open := func() *remote.StateStore {
		s, err := remote.OpenState(ctx, connect(t, url))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := open(), open()
	for _, s := range []*remote.StateStore{a, b} {
		if data, err := s.Load(ctx); err != nil || data != nil {
			t.Fatalf("Load() = %q, %v, want nothing", data, err)
		}
	}
	if err := a.Save(ctx, []byte("a1")); err != nil {
		t.Fatal(err)
	}
	if err := a.Save(ctx, []byte("a2")); err != nil {
		t.Fatal(err)
	}
	if err := b.Save(ctx, []byte("b1")); !errors.Is(err, remote.ErrStateTaken) {
		t.Fatalf("b's save over a's = %v, want ErrStateTaken", err)
	}
	if data, err := b.Load(ctx); err != nil || string(data) != "a2" {
		t.Fatalf("Load() = %q, %v, want a2", data, err)
	}
	if err := b.Save(ctx, []byte("b2")); err != nil {
		t.Fatal(err)
	}
	if err := a.Save(ctx, []byte("a3")); !errors.Is(err, remote.ErrStateTaken) {
		t.Fatalf("a's save over b's = %v, want ErrStateTaken", err)
	}
}

// manyConversations is the encoded state of n conversations as a team
// leaves them: each with a session, spend, tools allowed and its last
// request, of the longest kind kept (core's maxRequest, 4 KiB), cut from
// this repository's README for text as people write it.
func manyConversations(t testing.TB, n int) []byte {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	base := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	var snap state.Snapshot
	for i := range n {
		at := rng.IntN(len(readme) - 4<<10)
		session := fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", rng.Uint32(), rng.Uint32()&0xffff, rng.Uint32()&0xffff, rng.Uint32()&0xffff, rng.Uint64()&(1<<48-1))
		key := core.ConversationKey{Platform: "slack", User: fmt.Sprintf("U%08d", rng.IntN(1e8)), Channel: fmt.Sprintf("C%08d", i), Thread: fmt.Sprintf("17%08d.%06d", rng.IntN(1e8), rng.IntN(1e6))}
		snap.Conversations = append(snap.Conversations, core.Entry{Key: key, Conversation: core.Conversation{
			Plugin: "claude", Runner: "box2", Workdir: fmt.Sprintf("/home/dev/src/project%d", i%40), SessionID: session,
			Started: base.Add(time.Duration(rng.IntN(1e6)) * time.Second), LastUsed: base.Add(time.Duration(rng.IntN(2e6)) * time.Second),
			AllowedTools: []string{"Bash(go test:*)", "Edit"}, Model: "sonnet", Mode: "default",
			Spent:       core.Spend{CostUSD: rng.Float64() * 20, InputTokens: rng.IntN(1e6), OutputTokens: rng.IntN(1e5), Turns: rng.IntN(200)},
			LastRequest: string(readme[at : at+4<<10]),
		}})
		snap.Owners = append(snap.Owners, core.SessionOwner{Plugin: "claude", SessionID: session, Owner: "slack/" + key.User})
	}
	data, err := state.Encode(snap, base)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// openState opens the state bucket on a connection of its own, as a
// gateway does.
func openState(t testing.TB, url string) *remote.StateStore {
	t.Helper()
	s, err := remote.OpenState(context.Background(), connect(t, url))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// stateKeys lists the keys of the state bucket.
func stateKeys(t *testing.T, url string) []string {
	t.Helper()
	keys, err := stateBucket(t, url).Keys(context.Background())
	if err != nil && !errors.Is(err, jetstream.ErrNoKeysFound) {
		t.Fatal(err)
	}
	slices.Sort(keys)
	return keys
}

// A state larger than a NATS message (the server's max_payload) is saved
// and read back whole, by another gateway too, in parts when even
// gzipped it does not fit in one. The compare-and-set holds across the
// parts: a gateway that did not read the last save cannot replace it,
// and the parts of the states replaced or refused are removed. Before,
// every save failed ("nats: maximum payload exceeded") and a restart
// found the last state that fitted.
func TestStateLargerThanAMessage(t *testing.T) {
	t.Parallel()
	// Small messages keep the state small: 64 KiB, of which the state
	// may take 48 KiB.
	url := runNATS(t, &server.Options{MaxPayload: 64 << 10})
	ctx := context.Background()
	for _, n := range []int{10, 60, 200} {
		t.Run(fmt.Sprint(n, " conversations"), func(t *testing.T) {
			a := openState(t, url)
			if _, err := a.Load(ctx); err != nil {
				t.Fatal(err)
			}
			big := manyConversations(t, n)
			if err := a.Save(ctx, big); err != nil {
				t.Fatalf("saving %d conversations (%d bytes): %v", n, len(big), err)
			}
			b := openState(t, url)
			if got, err := b.Load(ctx); err != nil || !bytes.Equal(got, big) {
				t.Fatalf("Load() = %d bytes, %v; want the %d saved", len(got), err, len(big))
			}
			// b read the last save, a's next one is refused, and b's
			// replaces it.
			if err := b.Save(ctx, manyConversations(t, n+1)); err != nil {
				t.Fatal(err)
			}
			if err := a.Save(ctx, manyConversations(t, n+2)); !errors.Is(err, remote.ErrStateTaken) {
				t.Fatalf("a's save over b's = %v, want ErrStateTaken", err)
			}
			if got, err := openState(t, url).Load(ctx); err != nil || !bytes.Equal(got, manyConversations(t, n+1)) {
				t.Fatalf("Load() = %d bytes, %v; want b's", len(got), err)
			}
			// What is left is the key and the parts of b's save alone.
			parts := map[string]int{}
			for _, k := range stateKeys(t, url) {
				if id, ok := strings.CutPrefix(k, "chunks."); ok {
					parts[id[:strings.Index(id, ".")]]++
				}
			}
			if len(parts) > 1 {
				t.Errorf("parts of %d saves left, want those of one: %v", len(parts), parts)
			}
			messages := 1
			for _, p := range parts {
				messages += p
			}
			t.Logf("%d conversations: %d bytes, saved in %d messages", n+1, len(manyConversations(t, n+1)), messages)
		})
	}
}

// stateBucket opens the state bucket as a tool beside the gateways would.
func stateBucket(t *testing.T, url string) jetstream.KeyValue {
	t.Helper()
	js, err := jetstream.New(connect(t, url))
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(context.Background(), "jakebot_state")
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

// What the state takes in NATS against its JSON: as it is while it fits
// one message (the default max_payload, 1 MB), gzipped beyond, and how
// many conversations fit in one message then, the most a state could hold
// before (beyond, it is saved in parts).
func TestStateSizeGzipped(t *testing.T) {
	t.Parallel()
	url := runNATS(t, nil) // max_payload 1 MB
	ctx := context.Background()
	for _, tc := range []struct {
		n       int
		gzipped bool
	}{
		// Fits a message: saved as its JSON, which a gateway from
		// before gzip, standing by for this one, still reads.
		{n: 100},
		// Does not: gzipped, where before the save failed.
		{n: 300, gzipped: true},
	} {
		s := openState(t, url)
		if _, err := s.Load(ctx); err != nil {
			t.Fatal(err)
		}
		data := manyConversations(t, tc.n)
		if err := s.Save(ctx, data); err != nil {
			t.Fatalf("%d conversations: %v", tc.n, err)
		}
		e, err := stateBucket(t, url).Get(ctx, "conversations")
		if err != nil {
			t.Fatal(err)
		}
		raw, saved := len(data)/tc.n, len(e.Value())/tc.n
		t.Logf("%d conversations: JSON %d bytes (%d each), saved %d bytes (%d each): %d conversations fit in 1 MB, %d before",
			tc.n, len(data), raw, len(e.Value()), saved, 1<<20/saved, 1<<20/raw)
		switch {
		case !tc.gzipped && !bytes.Equal(e.Value(), data):
			t.Errorf("%d conversations, %d bytes, fit a message: saved as %.20q, want their JSON", tc.n, len(data), e.Value())
		case tc.gzipped && saved*2 > raw:
			t.Errorf("%d conversations: saved %d bytes a conversation of %d: want it gzipped to half at least", tc.n, saved, raw)
		}
	}
}

// A state saved by a gateway before states were gzipped (its JSON as it
// is) is read, and replaced by the next save's compare-and-set.
func TestStateSavedBeforeGzipLoads(t *testing.T) {
	t.Parallel()
	url := runNATS(t, nil)
	ctx := context.Background()
	s := openState(t, url)
	old := manyConversations(t, 3)
	if _, err := stateBucket(t, url).Create(ctx, "conversations", old); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Load(ctx); err != nil || !bytes.Equal(got, old) {
		t.Fatalf("Load() = %.40q, %v; want the old state", got, err)
	}
	next := manyConversations(t, 4)
	if err := s.Save(ctx, next); err != nil {
		t.Fatal(err)
	}
	if got, err := openState(t, url).Load(ctx); err != nil || !bytes.Equal(got, next) {
		t.Fatalf("Load() = %.40q, %v; want the next state", got, err)
	}
}

// A part missing makes the state unreadable, said so (the gateway starts
// without it, and logs it), and does not keep the next save from
// replacing it. Parts no save put in force (a gateway stopped between its
// parts and its compare-and-set) are removed by the next load, but those
// of a save that may still come are left alone.
func TestStatePartsMissingOrLeftOver(t *testing.T) {
	t.Parallel()
	url := runNATS(t, &server.Options{MaxPayload: 32 << 10})
	ctx := context.Background()
	a := openState(t, url)
	kv := stateBucket(t, url)
	if err := a.Save(ctx, manyConversations(t, 30)); err != nil {
		t.Fatal(err)
	}
	// A save going on, or one that never ends.
	if _, err := kv.Put(ctx, "chunks.LEFT.0", []byte("part")); err != nil {
		t.Fatal(err)
	}
	if _, err := openState(t, url).Load(ctx); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(stateKeys(t, url), "chunks.LEFT.0") {
		t.Fatal("a part written after the state in force was removed")
	}
	if err := a.Save(ctx, manyConversations(t, 31)); err != nil {
		t.Fatal(err)
	}
	b := openState(t, url)
	if _, err := b.Load(ctx); err != nil {
		t.Fatal(err)
	}
	var part string
	for _, k := range stateKeys(t, url) {
		if k == "chunks.LEFT.0" {
			t.Error("a part older than the state in force was left")
		}
		if strings.HasPrefix(k, "chunks.") {
			part = k
		}
	}
	if err := kv.Purge(ctx, part); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Load(ctx); !errors.Is(err, remote.ErrStateUnreadable) {
		t.Fatalf("Load() with %s gone = %d bytes, %v; want ErrStateUnreadable", part, len(got), err)
	}
	if err := b.Save(ctx, manyConversations(t, 32)); err != nil {
		t.Fatal(err)
	}
	if got, err := openState(t, url).Load(ctx); err != nil || !bytes.Equal(got, manyConversations(t, 32)) {
		t.Fatalf("Load() = %d bytes, %v; want b's", len(got), err)
	}
}

// BenchmarkStateSave is a save of 1000 conversations (some 5 MB of JSON,
// gzipped to some 1.8 MB: two parts on the default max_payload), against
// the gateway's debounce of 500 ms between saves.
func BenchmarkStateSave(b *testing.B) {
	s := openState(b, runNATS(b, nil))
	data := manyConversations(b, 1000)
	ctx := context.Background()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if err := s.Save(ctx, data); err != nil {
			b.Fatal(err)
		}
	}
}

// A gateway reading the state while another replaces it again and again
// (in parts each time, the parts of each state replaced purged) reads one
// state whole, never parts of two: the key names the parts and their
// checksum, and a part gone makes it read the key again.
func TestStateReadWhileReplaced(t *testing.T) {
	t.Parallel()
	url := runNATS(t, &server.Options{MaxPayload: 32 << 10})
	ctx := context.Background()
	w := openState(t, url)
	states := [][]byte{manyConversations(t, 40), manyConversations(t, 41)}
	if err := w.Save(ctx, states[0]); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	saved := make(chan int)
	go func() {
		n := 0
		for ; ; n++ {
			select {
			case <-stop:
				saved <- n
				return
			default:
			}
			if err := w.Save(ctx, states[n%2]); err != nil {
				t.Error(err)
			}
		}
	}()
	r := openState(t, url)
	unreadable := 0
	for range 30 {
		got, err := r.Load(ctx)
		switch {
		case errors.Is(err, remote.ErrStateUnreadable):
			unreadable++ // replaced six times while read: the retries ran out
		case err != nil:
			t.Fatal(err)
		case !bytes.Equal(got, states[0]) && !bytes.Equal(got, states[1]):
			t.Fatalf("Load() = %d bytes, neither state saved", len(got))
		}
	}
	close(stop)
	t.Logf("%d saves during 30 loads, %d of them unreadable", <-saved, unreadable)
}
