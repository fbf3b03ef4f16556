package remote

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The conversations of a gateway with NATS_URL live in a JetStream
// key-value bucket: a gateway restarted on another host finds them.
const (
	stateBucket = "jakebot_state"
	stateKey    = "conversations"
	// chunkKeys is where the parts of a state too large for one message
	// go: chunks.<save id>.<n>, a fresh id for every save, so a save
	// never touches the parts the state in force names.
	chunkKeys = "chunks."
)

// The value of stateKey is, told apart by its first bytes: the state's
// JSON gzipped (gzipMagic), chunkedMark and the JSON of a chunked (the
// gzip split in parts of at most one message each), or else the JSON
// itself, as every gateway saves a state that fits a message.
var (
	gzipMagic   = []byte{0x1f, 0x8b}
	chunkedMark = []byte("jakebot-state-chunks\n")
)

// chunked names the parts of a state saved in several messages.
type chunked struct {
	ID    string `json:"id"`
	Parts int    `json:"parts"`
	// Size and SHA256 are the whole gzip's: a reader that got parts of
	// two saves finds out.
	Size   int    `json:"size"`
	SHA256 string `json:"sha256"`
}

// ErrStateTaken is Save's error when another gateway wrote the state
// since this one last read or wrote it: two gateways serve at once.
var ErrStateTaken = errors.New("another gateway wrote the state")

// ErrStateUnreadable is Load's error when the state is there but cannot
// be read back (a part missing, a checksum that does not match): the
// gateway may start without it, and its next save replaces it.
var ErrStateUnreadable = errors.New("state unreadable")

// errPartGone is a part missing while the state is read: a save may
// have replaced the state (and removed its parts) meanwhile.
var errPartGone = errors.New("a part of the state is missing")

// StateStore keeps the gateway's state file contents in JetStream. Each
// save is a compare-and-set on the revision last loaded or saved, so that
// a gateway never overwrites what another wrote after it read the state.
// A state larger than a message is gzipped, and if it still is, saved in
// parts first, each under a key of its own: the compare-and-set of the
// key conversations, naming them, is what puts it in force, and the parts
// of a save that lost it are never read. It is safe for concurrent use.
type StateStore struct {
	nc     *nats.Conn
	kv     jetstream.KeyValue
	stream jetstream.Stream
	mu     sync.Mutex
	// rev is the key's revision last loaded or saved; 0 when there was
	// none.
	rev uint64
	// parts is the id of the parts the state at rev is saved in; "" when
	// it is in one message.
	parts string
}

// OpenState opens (making it when missing) the state bucket on nc's
// JetStream.
func OpenState(ctx context.Context, nc *nats.Conn) (*StateStore, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: stateBucket, History: 1,
		Description: "jake-bot's conversations, owners, spend and schedules"})
	if err != nil {
		return nil, fmt.Errorf("jetstream state bucket %s (is JetStream enabled on the server?): %w", stateBucket, err)
	}
	// The parts of a replaced state are purged through the bucket's
	// stream: a key-value delete would leave a marker per part, forever.
	stream, err := js.Stream(ctx, "KV_"+stateBucket)
	if err != nil {
		return nil, fmt.Errorf("jetstream state bucket %s: %w", stateBucket, err)
	}
	return &StateStore{nc: nc, kv: kv, stream: stream}, nil
}

// Load returns the saved state, or nil when there is none yet.
func (s *StateStore) Load(ctx context.Context) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for try := 0; ; try++ {
		e, err := s.kv.Get(ctx, stateKey)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("load state from %s: %w", stateBucket, err)
		}
		data, c, err := s.read(ctx, e.Value())
		if errors.Is(err, errPartGone) && try < 5 {
			continue // read the key again: it names the parts in force
		}
		// Unreadable or not, the next save is a compare-and-set on what
		// is there.
		s.rev, s.parts = e.Revision(), c.ID
		if err != nil {
			return nil, fmt.Errorf("load state from %s: %w: %w", stateBucket, ErrStateUnreadable, err)
		}
		s.collect(ctx, e.Revision(), c.ID)
		return data, nil
	}
}

// read turns the key's value v into the state's JSON, reading the parts
// it names; c says which, and is the zero chunked when v holds it all.
func (s *StateStore) read(ctx context.Context, v []byte) (data []byte, c chunked, err error) {
	switch {
	case bytes.HasPrefix(v, gzipMagic):
		data, err := gunzip(v)
		return data, c, err
	case bytes.HasPrefix(v, chunkedMark):
		if err := json.Unmarshal(v[len(chunkedMark):], &c); err != nil {
			return nil, chunked{}, fmt.Errorf("its list of parts: %w", err)
		}
		var z bytes.Buffer
		for i := range c.Parts {
			e, err := s.kv.Get(ctx, partKey(c.ID, i))
			if errors.Is(err, jetstream.ErrKeyNotFound) {
				return nil, c, fmt.Errorf("%w: %s", errPartGone, partKey(c.ID, i))
			}
			if err != nil {
				return nil, c, err
			}
			z.Write(e.Value())
		}
		if sum := sha256.Sum256(z.Bytes()); z.Len() != c.Size || hex.EncodeToString(sum[:]) != c.SHA256 {
			return nil, c, fmt.Errorf("%w: its %d parts (%d bytes) are not the ones saved (%d bytes)", errPartGone, c.Parts, z.Len(), c.Size)
		}
		data, err := gunzip(z.Bytes())
		return data, c, err
	default:
		return v, c, nil // the JSON itself, as it fits a message
	}
}

// StateInfo is the state a NATS server keeps, for jakebot doctor.
type StateInfo struct {
	// Data is the state's JSON, nil when there is none.
	Data []byte
	// Stored is what it takes there (gzipped, unless a gateway from
	// before gzip saved it), in Messages messages.
	Stored, Messages int
}

// ReadState reads the state kept on nc's JetStream, without making its
// bucket. An error wrapping ErrStateUnreadable is a state the next
// gateway starts without.
func ReadState(ctx context.Context, nc *nats.Conn) (StateInfo, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return StateInfo{}, fmt.Errorf("jetstream: %w", err)
	}
	kv, err := js.KeyValue(ctx, stateBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return StateInfo{}, nil
	}
	if err != nil {
		return StateInfo{}, fmt.Errorf("state bucket %s: %w", stateBucket, err)
	}
	e, err := kv.Get(ctx, stateKey)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return StateInfo{}, nil
	}
	if err != nil {
		return StateInfo{}, fmt.Errorf("read state from %s: %w", stateBucket, err)
	}
	s := &StateStore{nc: nc, kv: kv}
	data, c, err := s.read(ctx, e.Value())
	if err != nil {
		return StateInfo{}, fmt.Errorf("read state from %s: %w: %w", stateBucket, ErrStateUnreadable, err)
	}
	if c.ID == "" {
		return StateInfo{Data: data, Stored: len(e.Value()), Messages: 1}, nil
	}
	return StateInfo{Data: data, Stored: c.Size, Messages: 1 + c.Parts}, nil
}

// collect purges the parts of saves that never came in force (a gateway
// stopped between its parts and its compare-and-set): those written
// before the key's revision rev that it does not name. A part written
// since may be a save going on, based on rev; it is left alone.
func (s *StateStore) collect(ctx context.Context, rev uint64, keep string) {
	w, err := s.kv.WatchFiltered(ctx, []string{chunkKeys + ">"}, jetstream.MetaOnly(), jetstream.IgnoreDeletes())
	if err != nil {
		return // the next start tries again
	}
	defer w.Stop()
	stale := map[string]bool{}
	for e := range w.Updates() {
		if e == nil {
			break // all there was
		}
		if id := partID(e.Key()); id != keep && e.Revision() < rev {
			stale[id] = true
		}
	}
	for id := range stale {
		s.purge(ctx, id)
	}
}

// Save replaces the saved state, unless another gateway wrote it since
// it was last loaded or saved here (ErrStateTaken).
func (s *StateStore) Save(ctx context.Context, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	// A state that fits one message is saved as its JSON, which every
	// gateway reads, those from before gzip too: one of those, standing
	// by for a newer one, would take a state it cannot read for none and
	// save over it. Only a larger one, which they could not save at all,
	// is gzipped, and split in parts when even so it does not fit.
	value, parts, limit := data, "", room(s.nc)
	if len(data) > limit {
		z, err := gzipped(data)
		if err != nil {
			return fmt.Errorf("save state to %s: %w", stateBucket, err)
		}
		value = z
		if len(z) > limit {
			parts = newID()
			if value, err = s.writeParts(ctx, parts, z, limit); err != nil {
				s.purge(ctx, parts)
				return fmt.Errorf("save state to %s (%d bytes gzipped, in parts of %d): %w", stateBucket, len(z), limit, err)
			}
		}
	}
	var err error
	var rev uint64
	if s.rev == 0 {
		rev, err = s.kv.Create(ctx, stateKey, value)
	} else {
		rev, err = s.kv.Update(ctx, stateKey, value, s.rev)
	}
	if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		s.purge(ctx, parts) // never in force
		return fmt.Errorf("save state to %s: %w (%w)", stateBucket, ErrStateTaken, err)
	}
	if err != nil {
		// The update may have landed all the same (its answer timed out):
		// its parts stay, for the next load to purge unless in force.
		return fmt.Errorf("save state to %s (%d bytes): %w", stateBucket, len(value), err)
	}
	// The parts of the state replaced are read by no one now but a
	// gateway that read the key before; it finds them gone and reads the
	// key again.
	s.purge(ctx, s.parts)
	s.rev, s.parts = rev, parts
	return nil
}

// writeParts saves z in parts of at most limit bytes under id, and
// returns the value that names them.
func (s *StateStore) writeParts(ctx context.Context, id string, z []byte, limit int) ([]byte, error) {
	n := 0
	for rest := z; len(rest) > 0; n++ {
		part := rest[:min(limit, len(rest))]
		rest = rest[len(part):]
		if _, err := s.kv.Put(ctx, partKey(id, n), part); err != nil {
			return nil, err
		}
	}
	sum := sha256.Sum256(z)
	list, err := json.Marshal(chunked{ID: id, Parts: n, Size: len(z), SHA256: hex.EncodeToString(sum[:])})
	return append(bytes.Clone(chunkedMark), list...), err
}

// purge removes the parts saved under id, without leaving a marker per
// key as a key-value delete would. A failure leaves them for collect.
func (s *StateStore) purge(ctx context.Context, id string) {
	if id == "" {
		return
	}
	s.stream.Purge(context.WithoutCancel(ctx), jetstream.WithPurgeSubject("$KV."+stateBucket+"."+chunkKeys+id+".>"))
}

// Where names the store in logs.
func (s *StateStore) Where() string { return "nats kv " + stateBucket + "/" + stateKey }

func partKey(id string, n int) string { return chunkKeys + id + "." + strconv.Itoa(n) }

// partID is the save id in a part's key.
func partID(key string) string {
	id, _, _ := strings.Cut(strings.TrimPrefix(key, chunkKeys), ".")
	return id
}

// gzipped compresses the state at gzip's fastest: it is saved up to twice
// a second (bot's stateInterval), and the default level takes 4 times as
// long (300 ms for 1000 conversations, 5 MB of JSON) for a fifth less.
func gzipped(data []byte) ([]byte, error) {
	var b bytes.Buffer
	w, err := gzip.NewWriterLevel(&b, gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(data); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func gunzip(z []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, fmt.Errorf("neither JSON nor gzip: %w", err)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("gunzip: %w", err)
	}
	return data, nil
}
