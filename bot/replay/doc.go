// Package replay runs a recorded CLI stream through a plugin's real parser
// (StreamParser), a core.StreamCoordinator and a platform's own format
// (core.Format, built by its adapter package without connecting), and prints every event and every message and edit the platform would
// receive. It is `jakebot replay`: how a plugin author checks a new CLI
// version — record once, replay, compare.
package replay
