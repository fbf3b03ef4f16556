package remote

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// signInsBucket keeps the web page's sign-ins of the gateways on one NATS
// server, so that a standby taking over accepts the browsers signed in on
// the gateway before it.
const signInsBucket = "jakebot_web_sessions"

// WebSignIns keeps web sign-ins (web.SignIns) in a JetStream key-value
// bucket whose keys expire with the sign-ins. A key is the hash of the
// cookie's secret, never the secret: who reads the bucket cannot sign in
// with it. It is safe for concurrent use.
type WebSignIns struct{ kv jetstream.KeyValue }

type signIn struct {
	CSRF    string    `json:"csrf"`
	Expires time.Time `json:"expires"`
}

// OpenWebSignIns opens (making it when missing) the sign-ins bucket on
// nc's JetStream, its keys kept for ttl (a sign-in's lifetime).
func OpenWebSignIns(ctx context.Context, nc *nats.Conn, ttl time.Duration) (*WebSignIns, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: signInsBucket, History: 1, TTL: ttl,
		Description: "jake-bot's web sign-ins, by the hash of their cookie"})
	if err != nil {
		return nil, fmt.Errorf("jetstream web sign-ins bucket %s: %w", signInsBucket, err)
	}
	return &WebSignIns{kv: kv}, nil
}

func signInKey(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

// PutSignIn keeps sign-in id until the bucket's TTL.
func (s *WebSignIns) PutSignIn(ctx context.Context, id, csrf string, expires time.Time) error {
	data, err := json.Marshal(signIn{CSRF: csrf, Expires: expires.UTC()})
	if err != nil {
		return err
	}
	if _, err := s.kv.Put(ctx, signInKey(id), data); err != nil {
		return fmt.Errorf("keep web sign-in in %s: %w", signInsBucket, err)
	}
	return nil
}

// SignIn returns sign-in id, if it is kept.
func (s *WebSignIns) SignIn(ctx context.Context, id string) (string, time.Time, bool, error) {
	e, err := s.kv.Get(ctx, signInKey(id))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return "", time.Time{}, false, nil
	}
	if err != nil {
		return "", time.Time{}, false, fmt.Errorf("read web sign-in from %s: %w", signInsBucket, err)
	}
	var in signIn
	if err := json.Unmarshal(e.Value(), &in); err != nil {
		return "", time.Time{}, false, fmt.Errorf("read web sign-in from %s: %w", signInsBucket, err)
	}
	return in.CSRF, in.Expires, true, nil
}
