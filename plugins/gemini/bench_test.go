package gemini_test

import (
	"testing"

	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// BenchmarkParse is the plugin's parser over a 50 MB stream, read as Run
// reads it, beside the split-and-decode baseline.
func BenchmarkParse(b *testing.B) { recordings.BenchParse(b) }

// BenchmarkTurnStart is message → model request for a Gemini CLI turn
// through ACP started cold (spawned with the message) and warm (spawned
// before, its session loaded); the medians are reported.
func BenchmarkTurnStart(b *testing.B) { plugintest.BenchTurnStart(b, newFixture(b)) }
