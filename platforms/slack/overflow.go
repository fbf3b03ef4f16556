package slack

import (
	"context"
	"sync"
	"unicode/utf8"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/formatter"
)

// Slack's msg_too_long limit is not documented and pages are rendered
// well below where it has been seen, but Slack may still refuse one (it
// counts differently, or lowers the limit). Resending the same text as a
// new message, which the coordinator does for a failed edit, would fail
// the same way, so the adapter splits the text itself: the message keeps
// the first piece, and continuation messages in the same thread carry the
// rest. Later edits of the message rewrite the whole chain in place.

// minPiece is the smallest piece size tried before giving up.
const minPiece = 200

// chain is a message the adapter split: its continuation messages and the
// piece size Slack accepted.
type chain struct {
	mu    sync.Mutex
	limit int
	more  []string // ts of continuation messages, in order
	used  int      // how many of more carry text; the rest show a stub
}

// writeSplit writes text as message ts (posting it when ts is empty, as
// for Send) followed by continuation messages, halving the piece size
// while Slack answers msg_too_long. It returns the first message's ts.
func (a *Adapter) writeSplit(ctx context.Context, to core.Target, ts, text string) (string, error) {
	var c *chain
	if ts != "" {
		c, _ = a.chains.Get(to.Channel + "/" + ts)
	}
	if c == nil {
		c = &chain{limit: max(utf8.RuneCountInString(text)/2, minPiece)}
		if ts != "" {
			a.chains.Set(to.Channel+"/"+ts, c)
		}
		a.logger.Info("splitting a message Slack refused as too long", "channel", to.Channel, "ts", ts, "runes", utf8.RuneCountInString(text))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		err := a.writePieces(ctx, to, &ts, c, formatter.SplitSlack(text, c.limit))
		if slackError(err) != errTooLong || c.limit/2 < minPiece {
			return ts, err
		}
		c.limit /= 2
	}
}

// writePieces writes pieces over message *ts and c's continuations. Once
// it has posted a new first message, a failure would make the coordinator
// post it again, so from then on it waits out rate limits itself.
func (a *Adapter) writePieces(ctx context.Context, to core.Target, ts *string, c *chain, pieces []string) error {
	posted := false
	if *ts == "" {
		id, err := a.post(ctx, to, pieces[0])
		if err != nil {
			return err
		}
		*ts, posted = id, true
		a.chains.Set(to.Channel+"/"+id, c)
	} else if err := a.update(ctx, to.Channel, *ts, pieces[0]); err != nil {
		return err
	}
	for i, p := range pieces[1:] {
		write := func() error {
			if i < len(c.more) {
				return a.update(ctx, to.Channel, c.more[i], p)
			}
			id, err := a.post(ctx, to, p)
			if err == nil {
				c.more = append(c.more, id)
			}
			return err
		}
		var err error
		if posted {
			err = a.retrying(ctx, write)
		} else {
			err = write()
		}
		if err != nil {
			return err
		}
	}
	// A text that shrank leaves continuations over; Slack refuses an
	// empty message, so they get a stub.
	for i := len(pieces) - 1; i < c.used; i++ {
		if err := a.update(ctx, to.Channel, c.more[i], "…"); err != nil {
			return err
		}
	}
	c.used = len(pieces) - 1
	return nil
}
