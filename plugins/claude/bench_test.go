package claude_test

import (
	"testing"

	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// BenchmarkParse is the plugin's parser over a 50 MB stream, read as Run
// reads it, beside the split-and-decode baseline.
func BenchmarkParse(b *testing.B) { recordings.BenchParse(b) }

// BenchmarkTurnStart is message → model request for a Claude Code turn
// through the control protocol, started cold (spawned with the message)
// and warm (spawned before, waiting resumed on the session); the medians
// are reported.
func BenchmarkTurnStart(b *testing.B) { plugintest.BenchTurnStart(b, newFixture(b)) }
