package core

import "time"

// IdleWatch exposes the turn's idle watchdog to core_test, which can
// drive it with a coretest clock.
type IdleWatch = idleWatch

func NewIdleWatch(clock Clock, idle time.Duration, fire func()) *IdleWatch {
	return newIdleWatch(clock, idle, fire)
}

func (w *IdleWatch) Touch() { w.touch() }
func (w *IdleWatch) Stop()  { w.stop() }

// CapPages exposes the page cap to core_test.
var CapPages = capPages

// SetLongReplies sets what RouterConfig.LongReplyPages and Document set.
func SetLongReplies(c *StreamCoordinator, pages int, document func([]ResponseBlock) string) {
	c.longPages, c.document = pages, document
}

// SetRedactor sets what RouterConfig.Redactor sets.
func SetRedactor(c *StreamCoordinator, r *Redactor) { c.redact = r }

// SetSendWaits has f called each time a file send waits for another to
// end, until the test ends.
func SetSendWaits(t interface{ Cleanup(func()) }, f func()) {
	sendWaits.Store(&f)
	t.Cleanup(func() { sendWaits.Store(nil) })
}
