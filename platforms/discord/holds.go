package discord

import (
	"context"
	"slices"
	"sync"
)

// threadHolds holds back the messages of a thread the adapter is opening
// until the router has registered the conversation there. The router
// registers it once OpenThread has returned, yet Discord may deliver the
// thread's THREAD_CREATE, and a quick user's first words in it, before
// the call that opened it has even returned: without the hold, those
// words found no conversation and were dropped. A message waits for the
// handler call that opened its thread to return, which is after the
// conversation is registered (or the start failed). The zero value is
// ready to use; it is safe for concurrent use.
type threadHolds struct {
	mu sync.Mutex
	// handling is closed, per message id, once the router has handled it.
	handling map[string]chan struct{}
	// opening are the handler calls opening a thread, per parent channel.
	opening map[string][]chan struct{}
	// threads are what a thread's messages wait for, per thread.
	threads map[string][]chan struct{}
}

// begin marks message id as being handled; end ends that, releasing the
// messages of the threads it opened.
func (h *threadHolds) begin(id string) (end func()) {
	done := make(chan struct{})
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.handling == nil {
		h.handling = make(map[string]chan struct{})
		h.opening = make(map[string][]chan struct{})
		h.threads = make(map[string][]chan struct{})
	}
	h.handling[id] = done
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		close(done)
		delete(h.handling, id)
		for _, m := range []map[string][]chan struct{}{h.opening, h.threads} {
			for k, chs := range m {
				if chs = slices.DeleteFunc(chs, func(c chan struct{}) bool { return c == done }); len(chs) == 0 {
					delete(m, k)
				} else {
					m[k] = chs
				}
			}
		}
	}
}

// open notes that the handling of message id opens a thread in parent,
// and returns the function to call with the thread once it exists (""
// if it could not be opened). A message not being handled (a schedule's)
// holds nothing.
func (h *threadHolds) open(id, parent string) (opened func(thread string)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	done, ok := h.handling[id]
	if !ok {
		return func(string) {}
	}
	h.opening[parent] = append(h.opening[parent], done)
	return func(thread string) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.opening[parent] = slices.DeleteFunc(h.opening[parent], func(c chan struct{}) bool { return c == done })
		if len(h.opening[parent]) == 0 {
			delete(h.opening, parent)
		}
		if thread != "" && !slices.Contains(h.threads[thread], done) {
			h.threads[thread] = append(h.threads[thread], done)
		}
	}
}

// created notes a thread the bot has opened in parent, as the gateway
// announces it (perhaps before the call that opened it returns): its
// messages wait for every thread being opened there.
func (h *threadHolds) created(parent, thread string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, done := range h.opening[parent] {
		if !slices.Contains(h.threads[thread], done) {
			h.threads[thread] = append(h.threads[thread], done)
		}
	}
}

// of returns what a message in channel must wait for: nothing unless the
// channel is a thread being opened.
func (h *threadHolds) of(channel string) []chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.threads[channel])
}

// wait waits for holds, and reports false if ctx ended first.
func wait(ctx context.Context, holds []chan struct{}) bool {
	for _, done := range holds {
		select {
		case <-done:
		case <-ctx.Done():
			return false
		}
	}
	return true
}
