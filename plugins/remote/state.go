package remote

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The conversations of a gateway with NATS_URL live in a JetStream
// key-value bucket: a gateway restarted on another host finds them.
const (
	stateBucket = "jakebot_state"
	stateKey    = "conversations"
)

// ErrStateTaken is Save's error when another gateway wrote the state
// since this one last read or wrote it: two gateways serve at once.
var ErrStateTaken = errors.New("another gateway wrote the state")

// StateStore keeps the gateway's state file contents in JetStream. Each
// save is a compare-and-set on the revision last loaded or saved, so that
// a gateway never overwrites what another wrote after it read the state.
// It is safe for concurrent use.
type StateStore struct {
	kv jetstream.KeyValue
	mu sync.Mutex
	// rev is the key's revision last loaded or saved; 0 when there was
	// none.
	rev uint64
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
	return &StateStore{kv: kv}, nil
}

// Load returns the saved state, or nil when there is none yet.
func (s *StateStore) Load(ctx context.Context) ([]byte, error) {
	e, err := s.kv.Get(ctx, stateKey)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load state from %s: %w", stateBucket, err)
	}
	s.mu.Lock()
	s.rev = e.Revision()
	s.mu.Unlock()
	return e.Value(), nil
}

// Save replaces the saved state, unless another gateway wrote it since
// it was last loaded or saved here (ErrStateTaken).
func (s *StateStore) Save(ctx context.Context, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var rev uint64
	var err error
	if s.rev == 0 {
		rev, err = s.kv.Create(ctx, stateKey, data)
	} else {
		rev, err = s.kv.Update(ctx, stateKey, data, s.rev)
	}
	if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return fmt.Errorf("save state to %s: %w (%w)", stateBucket, ErrStateTaken, err)
	}
	if err != nil {
		return fmt.Errorf("save state to %s: %w", stateBucket, err)
	}
	s.rev = rev
	return nil
}

// Where names the store in logs.
func (s *StateStore) Where() string { return "nats kv " + stateBucket + "/" + stateKey }
