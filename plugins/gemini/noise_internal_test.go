package gemini

import "testing"

// The CLI's stderr loses what it prints on every run, and its report of
// refusing the bot's pings, keeping the rest.
func TestStripNoise(t *testing.T) {
	t.Parallel()
	in := "Ripgrep is not available. Falling back to GrepTool.\n" +
		"Error handling request { id: 4, jsonrpc: '2.0', method: 'jakebot/ping', params: null } {\n" +
		"  code: -32601,\n  message: '\"Method not found\": jakebot/ping',\n  data: { method: 'jakebot/ping' }\n}\n" +
		"Error: quota exceeded\n"
	if got := stripNoise(in); got != "Error: quota exceeded" {
		t.Errorf("stripNoise = %q", got)
	}
}
