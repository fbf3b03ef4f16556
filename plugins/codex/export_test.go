package codex

// RecordedChanges is recordedChanges, for the external tests.
var RecordedChanges = recordedChanges
