package doctor_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/jake-bot/jake-bot/bot"
	"github.com/jake-bot/jake-bot/bot/doctor"
)

// An entry with mode acp is started and its initialize checked: the
// protocol version, what it can do and the sign-ins it knows; an agent of
// another version, or one that exits without answering, fails.
func TestDoctorACP(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, answer string
		status       doctor.Status
		detail       string
	}{
		{"good", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentInfo":{"name":"fake","title":"Fake Agent","version":"1.2"},` +
			`"authMethods":[{"id":"k","name":"Use an API key"}],"agentCapabilities":{"loadSession":true,"sessionCapabilities":{"list":{}}}}}`,
			doctor.OK, "Fake Agent 1.2, ACP version 1: resume (session/load), lists sessions; its sign-ins (Use an API key) are not made by jake-bot"},
		{"old", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":0}}`, doctor.Fail, "the agent speaks ACP version 0; jake-bot speaks 1"},
		{"refuses", `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"no config"}}`, doctor.Fail, "initialize failed: no config"},
		{"exits", `oops`, doctor.Fail, "the agent did not answer initialize"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			agent := script(t, dir, "agent", `[ "$1" = --version ] && { echo "agent 1.2"; exit 0; }
read -r line
[ '`+tc.answer+`' = oops ] && exit 3
echo '`+tc.answer+`'
cat >/dev/null`)
			plugins := filepath.Join(dir, "plugins.yaml")
			os.WriteFile(plugins, []byte("plugins:\n  - id: agent\n    bin: "+agent+"\n    args: [--acp]\n    mode: acp\n"), 0o644)
			cfg := bot.Config{AllowedRoots: []string{dir}, PluginsFile: plugins}
			r := doctor.Run(context.Background(), cfg, doctor.Options{Getenv: env(nil), Home: dir})
			expect(t, r, "agent ACP", tc.status, tc.detail)
		})
	}
}
