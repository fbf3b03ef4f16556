package remote

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jake-bot/jake-bot/core"
)

// The turns a gateway runs itself (not on a runner) are kept in a bucket,
// one key per conversation, from their start to their end: a gateway that
// dies leaves its keys there, and the one that takes over tells those
// conversations that their turn was lost (core.LocalTurns).
const (
	localTurnBucket = "jakebot_local_turns"
	// localTurnAge bounds how long a key of a turn nobody ended stays: a
	// turn runs 30 minutes at most by default (TURN_TIMEOUT).
	localTurnAge = 24 * time.Hour
	// localTurnWait bounds a write: a turn's start waits for it.
	localTurnWait = 5 * time.Second
)

// LocalTurns is core.LocalTurns in JetStream. It is safe for concurrent
// use.
type LocalTurns struct {
	kv      jetstream.KeyValue
	gateway string
	logger  *slog.Logger

	mu sync.Mutex
	// left are the turns found at the start, with their keys' revisions,
	// until Lost hands them over.
	left []leftTurn
	// kept: the gateway stepped down, and its turns' records stay for
	// the next to report, whatever ends them here.
	kept bool
}

type leftTurn struct {
	turn core.LocalTurn
	rev  uint64
}

var _ core.LocalTurns = (*LocalTurns)(nil)

// OpenLocalTurns opens the bucket of local turns for gateway, and reads
// the turns a gateway that stopped without ending them left there.
func OpenLocalTurns(ctx context.Context, nc *nats.Conn, gateway string, logger *slog.Logger) (*LocalTurns, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: localTurnBucket, History: 1, TTL: localTurnAge,
		Description: "jake-bot: the turns running inside a gateway"})
	if err != nil {
		return nil, fmt.Errorf("jetstream bucket %s: %w", localTurnBucket, err)
	}
	l := &LocalTurns{kv: kv, gateway: gateway, logger: core.OrDiscard(logger)}
	keys, err := kv.ListKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("jetstream bucket %s: %w", localTurnBucket, err)
	}
	for key := range keys.Keys() {
		e, err := kv.Get(ctx, key)
		var t core.LocalTurn
		if err == nil {
			err = json.Unmarshal(e.Value(), &t)
		}
		if err != nil || turnKey(t.Key) != key {
			l.logger.Warn("local turn record unreadable; dropped", "key", key, "err", err)
			kv.Delete(ctx, key)
			continue
		}
		l.left = append(l.left, leftTurn{turn: t, rev: e.Revision()})
	}
	return l, nil
}

// turnKey is the key of conversation k's turn.
func turnKey(k core.ConversationKey) string {
	data, _ := json.Marshal(k)
	return base64.RawURLEncoding.EncodeToString(data)
}

// Began records t as running in this gateway.
func (l *LocalTurns) Began(t core.LocalTurn) {
	t.Gateway = l.gateway
	data, err := json.Marshal(t)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), localTurnWait)
		defer cancel()
		_, err = l.kv.Put(ctx, turnKey(t.Key), data)
	}
	if err != nil {
		l.logger.Warn("local turn not recorded: were this gateway to die, its chat would not be told", "conversation", t.Key.String(), "err", err)
	}
}

// Ended forgets the turn of k, unless Keep was called.
func (l *LocalTurns) Ended(k core.ConversationKey) {
	l.mu.Lock()
	kept := l.kept
	l.mu.Unlock()
	if kept {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), localTurnWait)
	defer cancel()
	if err := l.kv.Delete(ctx, turnKey(k)); err != nil {
		l.logger.Warn("local turn record not removed", "conversation", k.String(), "err", err)
	}
}

// Keep keeps the records of the turns running now, whatever ends them
// here: the gateway lost its lease and stops them, and the one that takes
// over tells their chats they were lost.
func (l *LocalTurns) Keep() {
	l.mu.Lock()
	l.kept = true
	l.mu.Unlock()
}

// Lost hands over the turns in platform's conversations that were left
// running when their gateway stopped, and removes their records (unless
// a turn there started again meanwhile, with a record of its own).
func (l *LocalTurns) Lost(platform string) []core.LocalTurn {
	l.mu.Lock()
	var out []leftTurn
	var keep []leftTurn
	for _, lt := range l.left {
		if lt.turn.Key.Platform == platform {
			out = append(out, lt)
		} else {
			keep = append(keep, lt)
		}
	}
	l.left = keep
	l.mu.Unlock()
	turns := make([]core.LocalTurn, 0, len(out))
	for _, lt := range out {
		ctx, cancel := context.WithTimeout(context.Background(), localTurnWait)
		l.kv.Delete(ctx, turnKey(lt.turn.Key), jetstream.LastRevision(lt.rev))
		cancel()
		turns = append(turns, lt.turn)
	}
	return turns
}
