// Package chaos is `make chaos`: a bounded, seeded run of jakebot under
// faults (TestChaos). Real gateway and runner processes (the built
// jakebot binary) over a NATS server embedded in the test, chat on the
// Telegram and Slack fakes, turns on a fake Claude Code (the test binary
// again, scripted by each message), while the run fails platform calls,
// drops the Slack websocket, crashes and hangs CLIs, kills runners,
// restarts the NATS server and kills the active gateway with a standby
// waiting; then it counts what reached the chat and prints the table
// README.md shows. The package holds only tests.
package chaos
