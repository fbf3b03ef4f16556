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

// The messages a gateway took for a turn are kept in a bucket, one key
// per conversation and message, from the moment it took them until their
// reply was delivered: a gateway that dies leaves its keys there, and the
// one that takes over tells those conversations that their message was
// lost (core.LocalTurns), but for the turns it follows on their runners.
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
	// unremoved are the keys of records of ended turns whose removal
	// failed (NATS out of reach), with when it first failed: removed
	// again until they are gone or the bucket's age has dropped them
	// (even after Keep: their turns were answered before it). Left there, they would have the next gateway to take over
	// report an answered message as lost. retrying says a goroutine is
	// at it.
	unremoved map[string]time.Time
	retrying  bool
}

// removeRetry is how long an ended turn's record whose removal failed
// waits before it is removed again, at first and at most.
const (
	removeRetryFirst = time.Second
	removeRetryMost  = 30 * time.Second
)

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
		if err != nil || recordKey(t) != key {
			l.logger.Warn("local turn record unreadable; dropped", "key", key, "err", err)
			kv.Delete(ctx, key)
			continue
		}
		l.left = append(l.left, leftTurn{turn: t, rev: e.Revision()})
	}
	return l, nil
}

// recordKey is the key of t's record: its conversation's, then its id
// (base64url and the id keep to a key's characters).
func recordKey(t core.LocalTurn) string {
	data, _ := json.Marshal(t.Key)
	key := base64.RawURLEncoding.EncodeToString(data)
	if t.ID != "" {
		key += "." + t.ID
	}
	return key
}

// Began records t as taken by this gateway, unless Keep was called: a
// gateway that stepped down refuses what it is still handed, and the
// platform hands it to the next gateway too (Telegram's unconfirmed
// updates), which would answer it and then report it lost.
func (l *LocalTurns) Began(t core.LocalTurn) {
	l.mu.Lock()
	kept := l.kept
	l.mu.Unlock()
	if kept {
		return
	}
	t.Gateway = l.gateway
	data, err := json.Marshal(t)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), localTurnWait)
		defer cancel()
		_, err = l.kv.Put(ctx, recordKey(t), data)
	}
	if err != nil {
		l.logger.Warn("local turn not recorded: were this gateway to die, its chat would not be told", "conversation", t.Key.String(), "err", err)
	}
}

// Ended forgets t, unless Keep was called.
func (l *LocalTurns) Ended(t core.LocalTurn) {
	l.mu.Lock()
	kept := l.kept
	l.mu.Unlock()
	if kept {
		return
	}
	key := recordKey(t)
	if err := l.remove(key); err != nil {
		l.logger.Warn("local turn record not removed; removed again once NATS answers", "conversation", t.Key.String(), "err", err)
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.unremoved == nil {
			l.unremoved = map[string]time.Time{}
		}
		l.unremoved[key] = time.Now()
		if !l.retrying {
			l.retrying = true
			go l.removeAgain()
		}
	}
}

func (l *LocalTurns) remove(key string) error {
	ctx, cancel := context.WithTimeout(context.Background(), localTurnWait)
	defer cancel()
	return l.kv.Delete(ctx, key)
}

// removeAgain removes the records whose removal failed until none is
// left, waiting longer after each round that failed.
func (l *LocalTurns) removeAgain() {
	wait := removeRetryFirst
	for {
		time.Sleep(wait)
		wait = min(2*wait, removeRetryMost)
		l.mu.Lock()
		var keys []string
		for key, since := range l.unremoved {
			if time.Since(since) > localTurnAge {
				delete(l.unremoved, key) // gone by itself
				continue
			}
			keys = append(keys, key)
		}
		if len(keys) == 0 {
			l.retrying = false
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
		for _, key := range keys {
			if err := l.remove(key); err != nil {
				break // NATS is still away: the rest would wait as long
			}
			l.mu.Lock()
			delete(l.unremoved, key)
			l.mu.Unlock()
			l.logger.Info("local turn record removed after NATS came back", "key", key)
		}
	}
}

// Keep keeps the records of the messages taken until now, whatever ends
// them here, and records no more: the gateway lost its lease and stops
// their turns, and the one that takes over tells their chats they were
// lost.
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
		l.kv.Delete(ctx, recordKey(lt.turn), jetstream.LastRevision(lt.rev))
		cancel()
		turns = append(turns, lt.turn)
	}
	return turns
}
