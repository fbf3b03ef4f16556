package remote

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The conversations of a gateway with NATS_URL live in a JetStream
// key-value bucket: a gateway restarted on another host finds them.
const (
	stateBucket = "jakebot_state"
	stateKey    = "conversations"
)

// StateStore keeps the gateway's state file contents in JetStream.
type StateStore struct {
	kv jetstream.KeyValue
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
	return e.Value(), nil
}

// Save replaces the saved state.
func (s *StateStore) Save(ctx context.Context, data []byte) error {
	if _, err := s.kv.Put(ctx, stateKey, data); err != nil {
		return fmt.Errorf("save state to %s: %w", stateBucket, err)
	}
	return nil
}

// Where names the store in logs.
func (s *StateStore) Where() string { return "nats kv " + stateBucket + "/" + stateKey }
