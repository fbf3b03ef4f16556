package remote_test

import (
	"context"
	"errors"
	"testing"

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
