package workspace

import "testing"

// SetBeforeOpen has f run between a file's check and its opening, for
// the rest of t.
func SetBeforeOpen(t testing.TB, f func()) {
	old := beforeOpen
	beforeOpen = f
	t.Cleanup(func() { beforeOpen = old })
}
