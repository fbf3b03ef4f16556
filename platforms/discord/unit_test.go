package discord

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/caarlos0/env/v11"

	"github.com/jake-bot/jake-bot/core"
)

func TestCommandText(t *testing.T) {
	t.Parallel()
	opt := func(name string, typ discordgo.ApplicationCommandOptionType, value any, sub ...*discordgo.ApplicationCommandInteractionDataOption) *discordgo.ApplicationCommandInteractionDataOption {
		return &discordgo.ApplicationCommandInteractionDataOption{Name: name, Type: typ, Value: value, Options: sub}
	}
	const (
		subcmd  = discordgo.ApplicationCommandOptionSubCommand
		str     = discordgo.ApplicationCommandOptionString
		boolean = discordgo.ApplicationCommandOptionBoolean
	)
	tests := []struct {
		name string
		data discordgo.ApplicationCommandInteractionData
		want string
	}{
		{"start with workdir", discordgo.ApplicationCommandInteractionData{Name: "claude",
			Options: []*discordgo.ApplicationCommandInteractionDataOption{opt("start", subcmd, nil, opt("workdir", str, "~/my proj"))}},
			"/claude start ~/my proj"},
		{"start without", discordgo.ApplicationCommandInteractionData{Name: "claude",
			Options: []*discordgo.ApplicationCommandInteractionDataOption{opt("start", subcmd, nil)}}, "/claude start"},
		{"resume", discordgo.ApplicationCommandInteractionData{Name: "codex",
			Options: []*discordgo.ApplicationCommandInteractionDataOption{opt("resume", subcmd, nil, opt("id", str, "abc"))}},
			"/codex resume abc"},
		{"conversation end", discordgo.ApplicationCommandInteractionData{Name: "conversation",
			Options: []*discordgo.ApplicationCommandInteractionDataOption{opt("end", subcmd, nil)}}, "/conversation end"},
		{"status all", discordgo.ApplicationCommandInteractionData{Name: "status",
			Options: []*discordgo.ApplicationCommandInteractionDataOption{opt("all", boolean, true)}}, "/status all"},
		{"status not all", discordgo.ApplicationCommandInteractionData{Name: "status",
			Options: []*discordgo.ApplicationCommandInteractionDataOption{opt("all", boolean, false)}}, "/status"},
		{"workdir set", discordgo.ApplicationCommandInteractionData{Name: "workdir",
			Options: []*discordgo.ApplicationCommandInteractionDataOption{opt("set", subcmd, nil, opt("path", str, " sub/dir "))}},
			"/workdir set sub/dir"},
		{"stop", discordgo.ApplicationCommandInteractionData{Name: "stop"}, "/stop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i := &discordgo.Interaction{Type: discordgo.InteractionApplicationCommand, Data: tt.data}
			if got := commandText(i); got != tt.want {
				t.Errorf("commandText(%s) = %q, want %q", tt.name, got, tt.want)
			}
		})
	}
	button := &discordgo.Interaction{Type: discordgo.InteractionMessageComponent,
		Data: discordgo.MessageComponentInteractionData{CustomID: "/claude resume abc"}}
	if got := commandText(button); got != "/claude resume abc" {
		t.Errorf("button command = %q", got)
	}
	foreign := &discordgo.Interaction{Type: discordgo.InteractionMessageComponent,
		Data: discordgo.MessageComponentInteractionData{CustomID: "someone-elses-button"}}
	if got := commandText(foreign); got != "" {
		t.Errorf("foreign button command = %q, want none", got)
	}
}

func TestErrorEmbeds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text, content string
		errs                []string
	}{
		{"plain", "hello", "hello", nil},
		{"empty", "", "\u200b", nil},
		{"error between", "text\n\n❌ **Error:** boom\n\n— 1.0s", "text\n\n— 1.0s", []string{"boom"}},
		{"multi-line error", "❌ **Error:** exit 1\nstderr line\n\n— 1.0s", "— 1.0s", []string{"exit 1\nstderr line"}},
		{"only an error", "❌ **Error:** boom", "\u200b", []string{"boom"}},
		{"error in code stays", "```\n❌ **Error:** literal\n```", "```\n❌ **Error:** literal\n```", nil},
		{"two errors", "❌ **Error:** a\n\n❌ **Error:** b", "\u200b", []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			content, embeds := errorEmbeds(tt.text)
			var errs []string
			for _, e := range embeds {
				if e.Color != errorColor {
					t.Errorf("embed colour %x, want red", e.Color)
				}
				errs = append(errs, e.Description)
			}
			if content != tt.content || fmt.Sprint(errs) != fmt.Sprint(tt.errs) {
				t.Errorf("errorEmbeds(%q) = %q, %q; want %q, %q", tt.text, content, errs, tt.content, tt.errs)
			}
		})
	}
}

func TestConfigFromEnvironment(t *testing.T) {
	t.Setenv("DISCORD_TOKEN", "sekrit")
	t.Setenv("DISCORD_ALLOWED_USERS", "1,2")
	cfg, err := env.ParseAs[Config]()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Token != "sekrit" || len(cfg.AllowedUsers) != 2 || !cfg.Threads || cfg.EditInterval != time.Second ||
		cfg.APIURL != "https://discord.com/api/v9/" {
		t.Errorf("config = %+v", cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate() = %v", err)
	}
	bad := cfg
	bad.APIURL = "discord.example/api"
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "DISCORD_API_URL") {
		t.Errorf("Validate() with a bad URL = %v, want an error naming DISCORD_API_URL", err)
	}
	// The token never prints.
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("config", "cfg", cfg, "token", cfg.Token)
	js, _ := json.Marshal(cfg)
	for _, s := range []string{fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), logged.String(), string(js)} {
		if strings.Contains(s, "sekrit") {
			t.Errorf("token printed: %s", s)
		}
	}
}

// TestGrantReport checks the start-up line for each kind of allow-list:
// members admitted by role are served, so a roles-only set-up must not
// say, at error level, that Discord serves nobody.
func TestGrantReport(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		cfg       Config
		wantLevel string
		want      string
	}{
		{"nothing", Config{}, "ERROR", "serves nobody"},
		{"blank roles only", Config{AllowedRoles: []string{"", " "}}, "ERROR", "serves nobody"},
		{"roles only", Config{AllowedRoles: []string{"10", "20"}}, "INFO", "and members of 2 roles (DISCORD_ALLOWED_ROLES)"},
		{"users and roles", Config{AllowedUsers: []string{"1"}, AllowedRoles: []string{"10"}}, "INFO", "serves 1 allowed users (0 admins) and members of 1 roles"},
		{"users only", Config{AllowedUsers: []string{"1"}}, "INFO", "serves 1 allowed users (0 admins)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			access := core.NewAccess()
			tt.cfg.Grant(access)
			var buf strings.Builder
			got := access.Report(slog.New(slog.NewTextHandler(&buf, nil)), Name, "DISCORD_ALLOWED_USERS")
			if !strings.Contains(got, tt.want) {
				t.Errorf("Report = %q, want it to contain %q", got, tt.want)
			}
			if !strings.Contains(buf.String(), "level="+tt.wantLevel) {
				t.Errorf("logged %q, want level %s", buf.String(), tt.wantLevel)
			}
		})
	}
}

func TestRewriterSendsRESTToAPIURL(t *testing.T) {
	t.Parallel()
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.URL.Path }))
	defer srv.Close()
	rt, err := newRewriter("https://discord.com/api/v9/", srv.URL+"/proxy/api/v9", http.DefaultTransport)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Transport: rt}).Get("https://discord.com/api/v9/webhooks/1/tok/messages/@original")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got != "/proxy/api/v9/webhooks/1/tok/messages/@original" {
		t.Errorf("request went to %q", got)
	}
	if rt, _ := newRewriter("https://discord.com/api/v9/", "https://discord.com/api/v9", http.DefaultTransport); rt != http.DefaultTransport {
		t.Error("the default URL should not be rewritten")
	}
	if _, err := newRewriter("https://discord.com/api/v9/", "discord.example", http.DefaultTransport); err == nil {
		t.Error("a URL without a scheme was accepted")
	}
}
