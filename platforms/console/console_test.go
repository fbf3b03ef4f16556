package console_test

import (
	"bytes"
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/console"
)

func TestConsoleReadsLinesAsMessages(t *testing.T) {
	t.Parallel()
	c := console.New(console.Options{In: strings.NewReader("/claude start\n\n  hello  \n"), Out: &bytes.Buffer{}})
	var got []core.Message
	err := c.Run(context.Background(), func(_ context.Context, m core.Message) {
		got = append(got, m)
		m.Done()
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Text != "/claude start" || got[1].Text != "hello" {
		t.Fatalf("messages = %+v, want the two non-empty lines", got)
	}
	want := core.ConversationKey{Platform: "console", User: console.User, Channel: "terminal"}
	if got[0].Key != want || got[1].Key != want {
		t.Errorf("keys = %v, %v; want %v", got[0].Key, got[1].Key, want)
	}
}

func TestConsoleRedrawsInPlaceOnATerminal(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	c := console.New(console.Options{In: strings.NewReader(""), Out: &out, TTY: true, Typed: true})
	if c.Limits().FinalOnly {
		t.Fatal("a terminal should get progressive edits")
	}
	ctx := context.Background()
	ref, _ := c.Send(ctx, core.Target{}, "one\ntwo")
	c.Edit(ctx, ref, "one\ntwo\nthree")
	want := "one\ntwo\n" + "\x1b[2F\x1b[J" + "one\ntwo\nthree\n"
	if out.String() != want {
		t.Fatalf("terminal output = %q, want %q", out.String(), want)
	}
}

func TestConsoleOnAPipeWritesFinalRepliesOnce(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	c := console.New(console.Options{In: strings.NewReader(""), Out: &out})
	if !c.Limits().FinalOnly {
		t.Fatal("a pipe should get only final replies")
	}
	c.Send(context.Background(), core.Target{}, "done")
	if out.String() != "done\n\n" {
		t.Fatalf("pipe output = %q", out.String())
	}
}

// On a pipe the next line is handed over only once the previous one is
// done; typed lines at once, without Done.
func TestConsoleOnAPipeWaitsForEachLine(t *testing.T) {
	t.Parallel()
	c := console.New(console.Options{In: strings.NewReader("one\ntwo\n"), Out: &bytes.Buffer{}})
	handed := make(chan core.Message, 2)
	var firstDone atomic.Bool
	ran := make(chan error, 1)
	go func() {
		ran <- c.Run(context.Background(), func(_ context.Context, m core.Message) {
			if m.Text == "two" && !firstDone.Load() {
				t.Errorf("line two handed over before line one was done")
			}
			handed <- m
		})
	}()
	first := <-handed
	if first.Text != "one" || first.Done == nil {
		t.Fatalf("first message = %+v, want line one with a Done", first)
	}
	firstDone.Store(true)
	first.Done()
	second := <-handed
	second.Done()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}

	tty := console.New(console.Options{In: strings.NewReader("one\ntwo\n"), Out: &bytes.Buffer{}, Typed: true})
	var got []core.Message
	if err := tty.Run(context.Background(), func(_ context.Context, m core.Message) { got = append(got, m) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Done != nil {
		t.Errorf("typed: %d messages, want both at once without Done", len(got))
	}
}
