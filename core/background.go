package core

// backgroundID is the ID of a reply's background line: each report
// replaces it.
const backgroundID = "background"

// backgroundWatch is a turn's background work as the router keeps it: a
// CLI working in the background prints nothing, so the idle watch is
// paused meanwhile, and once the turn has answered BackgroundLimit
// bounds the rest of it in place of TurnTimeout. Only the turn's emit
// uses it, then its end.
type backgroundWatch struct {
	started []string // what ran, for the line once all ended
	paused  bool
	limit   Timer
}

// backgroundState is a running turn's background work for /status, or
// "".
func backgroundState(tasks []string) string {
	if len(tasks) == 0 {
		return ""
	}
	return ", background: " + Background{Tasks: tasks}.Summary()
}
