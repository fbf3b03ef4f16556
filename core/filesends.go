package core

import (
	"bytes"
	"context"
	"sync/atomic"
)

// maxFileSends bounds the files the bot reads and sends at once, in every
// conversation together (/file and the agent's send_file): each is held
// whole while its platform takes it, up to ATTACHMENT_MAX_BYTES, and a
// burst of them took the bot's memory (issue 41, Medium 5: 50 agent calls
// of a 20 MiB file, 1.4 GiB of heap). A turn's agent sends one at a time
// besides (turnActions.sending).
const maxFileSends = 4

// fileSends holds a token per file being read and sent.
var fileSends = make(chan struct{}, maxFileSends)

// sendWaits, when set, is called each time a send has to wait for
// another to end: tests count them.
var sendWaits atomic.Pointer[func()]

// acquire takes a token of slots, waiting while none is free, until ctx
// ends; the caller puts it back.
func acquire(ctx context.Context, slots chan struct{}) error {
	select {
	case slots <- struct{}{}:
		return nil
	default:
	}
	if f := sendWaits.Load(); f != nil {
		(*f)()
	}
	select {
	case slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// holdsSecret reports whether data holds one of r's secrets, looking
// into it in place: a copy of a file as a string doubled what a send
// held.
func (r *Redactor) holdsSecret(data []byte) bool {
	if r == nil {
		return false
	}
	for _, s := range r.secrets {
		if bytes.Contains(data, []byte(s)) {
			return true
		}
	}
	return false
}
