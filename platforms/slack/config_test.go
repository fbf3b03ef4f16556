package slack_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/caarlos0/env/v11"
	"github.com/google/go-cmp/cmp"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/slack"
)

func TestConfigFromEnvironment(t *testing.T) {
	t.Parallel()
	var cfg slack.Config
	err := env.ParseWithOptions(&cfg, env.Options{Environment: map[string]string{
		"SLACK_APP_TOKEN": "xapp-1-secret", "SLACK_BOT_TOKEN": "xoxb-2-secret",
		"SLACK_ALLOWED_USERS": "U1,U2", "SLACK_ADMIN_USERS": "U3",
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := slack.Config{AppToken: "xapp-1-secret", BotToken: "xoxb-2-secret", AllowedUsers: []string{"U1", "U2"},
		AdminUsers: []string{"U3"}, EditInterval: time.Second, APIURL: "https://slack.com/api/", DefaultPlugin: "claude"}
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	if err := cfg.Validate(); err != nil || !cfg.Enabled() {
		t.Errorf("Validate = %v, Enabled = %v; want a valid, enabled config", err, cfg.Enabled())
	}
	// The tokens are core.Secret, as every adapter's: not even %#v or a
	// JSON encoding of the config shows them.
	js, _ := json.Marshal(cfg)
	if s := fmt.Sprint(cfg) + fmt.Sprintf("%#v %+v", cfg, struct{ slack.Config }{cfg}) + string(js) + cfg.LogValue().String(); strings.Contains(s, "secret") {
		t.Errorf("config prints its tokens: %s", s)
	}
	access := core.NewAccess()
	cfg.Grant(access)
	if !access.Allowed("slack", "U2") || !access.IsAdmin("slack", "U3") || access.Allowed("slack", "U4") {
		t.Error("Grant did not give the configured users access")
	}
	if (slack.Config{}).Enabled() {
		t.Error("an empty config is enabled")
	}
}
