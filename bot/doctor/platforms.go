package doctor

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/jake-bot/jake-bot/bot"
	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/matrix"
	"github.com/jake-bot/jake-bot/platforms/web"
)

// checkPlatforms checks each chat platform whose token is set. A platform
// whose configuration lands in bot.Config gets a line here calling its
// check with the values it needs.
func checkPlatforms(ctx context.Context, r *Report, cfg bot.Config, opts Options) {
	configured := 0
	if s := cfg.Discord; s.Token != "" {
		configured++
		checkDiscord(ctx, r, discordSettings{
			Token: string(s.Token), APIURL: s.APIURL,
			Users: slices.Concat(s.AllowedUsers, s.AdminUsers), Roles: s.AllowedRoles,
		}, opts)
	}
	if s := cfg.Slack; s.AppToken != "" || s.BotToken != "" {
		configured++
		checkSlack(ctx, r, slackSettings{
			AppToken: string(s.AppToken), BotToken: string(s.BotToken), APIURL: s.APIURL,
			Users: slices.Concat(s.AllowedUsers, s.AdminUsers),
		}, opts)
	}
	if s := cfg.Telegram; s.Token != "" {
		configured++
		checkTelegram(ctx, r, telegramSettings{
			Token: string(s.Token), Endpoint: s.APIEndpoint,
			Users: slices.Concat(s.AllowedUsers.Strings(), s.AdminUsers.Strings()),
		}, opts)
	}
	if s := cfg.Matrix; s.AccessToken != "" || s.Homeserver != "" {
		configured++
		checkMatrix(ctx, r, matrixSettings{
			Homeserver: s.Homeserver, UserID: s.UserID, Token: string(s.AccessToken),
			Users: slices.Concat(s.AllowedUsers, s.AdminUsers),
		}, opts)
	}
	if s := cfg.Mattermost; s.Token != "" || s.URL != "" {
		configured++
		checkMattermost(ctx, r, mattermostSettings{
			URL: s.URL, Token: string(s.Token), ActionsURL: s.ActionsURL,
			Users: slices.Concat(s.AllowedUsers, s.AdminUsers),
		}, opts)
	}
	if s := cfg.Web; s.Enabled() {
		configured++
		checkWeb(r, s)
	}
	if configured == 0 {
		r.add("platform", "console", OK, "no chat platform token set: jakebot runs on the console (stdin/stdout)")
	}
}

// allowList reports who a platform serves: nobody is a failure (the
// platform would refuse everyone), everyone a warning.
func allowList(r *Report, platform, variable string, users []string, extra string) {
	var ids []string
	for _, u := range users {
		if u = strings.TrimSpace(u); u != "" {
			ids = append(ids, u)
		}
	}
	switch {
	case slices.Contains(ids, "*"):
		r.add("platform", platform+" allow-list", Warn, "%s has \"*\": everyone who can reach the bot may run coding agents", variable)
	case len(ids) == 0 && extra == "":
		r.add("platform", platform+" allow-list", Fail, "%s is empty: the bot would serve nobody", variable)
	case len(ids) == 0:
		r.add("platform", platform+" allow-list", OK, "%s", extra)
	default:
		detail := fmt.Sprintf("%d users", len(ids))
		if extra != "" {
			detail += ", " + extra
		}
		r.add("platform", platform+" allow-list", OK, "%s", detail)
	}
}

// slackSettings is what the Slack checks need.
type slackSettings struct {
	AppToken, BotToken, APIURL string
	Users                      []string
}

func checkSlack(ctx context.Context, r *Report, s slackSettings, opts Options) {
	okBot := token(r, "slack", "SLACK_BOT_TOKEN", s.BotToken, strings.HasPrefix(s.BotToken, "xoxb-"), "a bot token (xoxb-…)", "")
	okApp := token(r, "slack", "SLACK_APP_TOKEN", s.AppToken, strings.HasPrefix(s.AppToken, "xapp-"), "an app-level token (xapp-…) with connections:write", "")
	allowList(r, "slack", "SLACK_ALLOWED_USERS", s.Users, "")
	if !online(r, "slack", opts) || !okBot || !okApp {
		return
	}
	base := apiBase(s.APIURL, "https://slack.com/api/")
	slackCheck(ctx, r, opts, "slack auth.test", base+"auth.test", "SLACK_BOT_TOKEN", s.BotToken, func(a slackAnswer) string {
		return fmt.Sprintf("accepted: bot user %s in team %s", a.User, a.Team)
	})
	slackCheck(ctx, r, opts, "slack socket mode", base+"apps.connections.open", "SLACK_APP_TOKEN", s.AppToken, func(slackAnswer) string {
		return "apps.connections.open accepted the app-level token"
	})
}

// slackAnswer is what the checks read of a Slack Web API answer.
type slackAnswer struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
	Team  string `json:"team"`
	User  string `json:"user"`
}

// slackCheck calls a Web API method with token (from variable) and
// reports the answer as check; accepted says what an ok answer means.
func slackCheck(ctx context.Context, r *Report, opts Options, check, u, variable, token string, accepted func(slackAnswer) string) {
	var a slackAnswer
	if err := call(ctx, opts, http.MethodPost, u, "Bearer "+token, &a); err != nil {
		r.add("platform", check, Fail, "%s", redact(err.Error(), token))
	} else if !a.OK {
		r.add("platform", check, Fail, "%s refused: %s", variable, a.Error)
	} else {
		r.add("platform", check, OK, "%s", accepted(a))
	}
}

// apiBase is a REST API's base URL, u or else fallback, ending in a slash.
func apiBase(u, fallback string) string {
	if u == "" {
		u = fallback
	}
	if !strings.HasSuffix(u, "/") {
		u += "/"
	}
	return u
}

// discordSettings is what the Discord checks need.
type discordSettings struct {
	Token, APIURL string
	Users, Roles  []string
}

var discordTokenRE = regexp.MustCompile(`^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$`)

// checkDiscord checks a bot token (three dot-separated parts, the first
// the bot's id in base64), the allow-list and, online, GET /users/@me.
func checkDiscord(ctx context.Context, r *Report, s discordSettings, opts Options) {
	tok := strings.TrimPrefix(s.Token, "Bot ")
	botID := ""
	if discordTokenRE.MatchString(tok) {
		first := strings.SplitN(tok, ".", 2)[0]
		if b, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(first, "=")); err == nil && isDigits(string(b)) {
			botID = "bot id " + string(b)
		}
	}
	ok := token(r, "discord", "DISCORD_TOKEN", tok, discordTokenRE.MatchString(tok), "a bot token: three parts separated by dots", botID)
	roles := ""
	if n := len(s.Roles); n > 0 {
		roles = fmt.Sprintf("%d roles", n)
	}
	allowList(r, "discord", "DISCORD_ALLOWED_USERS", s.Users, roles)
	if !online(r, "discord", opts) || !ok {
		return
	}
	base := apiBase(s.APIURL, "https://discord.com/api/v10/")
	var me struct {
		ID       string `json:"id"`
		Username string `json:"username"`
		Message  string `json:"message"`
	}
	if err := call(ctx, opts, http.MethodGet, base+"users/@me", "Bot "+tok, &me); err != nil {
		r.add("platform", "discord /users/@me", Fail, "%s", redact(err.Error(), tok))
	} else {
		r.add("platform", "discord /users/@me", OK, "accepted: %s (%s)", me.Username, me.ID)
	}
}

// telegramSettings is what the Telegram checks need.
type telegramSettings struct {
	Token string
	// Endpoint is the Bot API URL with %s for the token and the method.
	Endpoint string
	Users    []string
}

var telegramTokenRE = regexp.MustCompile(`^([0-9]+):[A-Za-z0-9_-]{20,}$`)

// checkTelegram checks a bot token (digits:secret), the allow-list and,
// online, getMe.
func checkTelegram(ctx context.Context, r *Report, s telegramSettings, opts Options) {
	m := telegramTokenRE.FindStringSubmatch(s.Token)
	botID := ""
	if m != nil {
		botID = "bot id " + m[1]
	}
	ok := token(r, "telegram", "TELEGRAM_TOKEN", s.Token, m != nil, "digits, a colon, then the secret (from @BotFather)", botID)
	allowList(r, "telegram", "TELEGRAM_ALLOWED_USERS", s.Users, "")
	if !online(r, "telegram", opts) || !ok {
		return
	}
	endpoint := s.Endpoint
	if endpoint == "" {
		endpoint = "https://api.telegram.org/bot%s/%s"
	}
	var me struct {
		OK          bool   `json:"ok"`
		Description string `json:"description"`
		Result      struct {
			Username string `json:"username"`
		} `json:"result"`
	}
	err := call(ctx, opts, http.MethodGet, fmt.Sprintf(endpoint, s.Token, "getMe"), "", &me)
	switch {
	case err != nil:
		r.add("platform", "telegram getMe", Fail, "%s", redact(err.Error(), s.Token))
	case !me.OK:
		r.add("platform", "telegram getMe", Fail, "TELEGRAM_TOKEN refused: %s", me.Description)
	default:
		r.add("platform", "telegram getMe", OK, "accepted: @%s", me.Result.Username)
	}
}

// mattermostSettings is what the Mattermost checks need.
type mattermostSettings struct {
	URL, Token, ActionsURL string
	Users                  []string
}

// mattermostIDRE is the form of Mattermost's ids and access tokens.
var mattermostIDRE = regexp.MustCompile(`^[a-z0-9]{26}$`)

// checkMattermost checks the server's URL, the bot account's token (26
// letters and digits), the allow-list, where button presses go and,
// online, GET /api/v4/users/me.
func checkMattermost(ctx context.Context, r *Report, s mattermostSettings, opts Options) {
	u, err := url.Parse(s.URL)
	urlOK := s.URL != "" && err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
	if urlOK {
		r.add("platform", "mattermost url", OK, "%s", s.URL)
	} else {
		r.add("platform", "mattermost url", Fail, "MATTERMOST_URL is not the server's http(s) address, such as https://chat.example.com")
	}
	ok := token(r, "mattermost", "MATTERMOST_TOKEN", s.Token, mattermostIDRE.MatchString(s.Token), "a bot account's access token (26 letters and digits)", "")
	allowList(r, "mattermost", "MATTERMOST_ALLOWED_USERS", s.Users, "")
	if s.ActionsURL == "" {
		r.add("platform", "mattermost buttons", OK, "MATTERMOST_ACTIONS_URL is not set: questions offer numbered reactions to click, and typed answers")
	} else {
		r.add("platform", "mattermost buttons", OK, "presses are posted to %s: the server must reach it (ServiceSettings.AllowedUntrustedInternalConnections for a private address)", s.ActionsURL)
	}
	if !online(r, "mattermost", opts) || !ok || !urlOK {
		return
	}
	var me struct {
		ID       string `json:"id"`
		Username string `json:"username"`
		IsBot    bool   `json:"is_bot"`
	}
	if err := call(ctx, opts, http.MethodGet, strings.TrimRight(s.URL, "/")+"/api/v4/users/me", "Bearer "+s.Token, &me); err != nil {
		r.add("platform", "mattermost /users/me", Fail, "%s", redact(err.Error(), s.Token))
	} else if me.ID == "" {
		r.add("platform", "mattermost /users/me", Fail, "MATTERMOST_TOKEN refused")
	} else if !me.IsBot {
		r.add("platform", "mattermost /users/me", Warn, "accepted: @%s (%s), a person's account: a bot account keeps the bot's posts apart", me.Username, me.ID)
	} else {
		r.add("platform", "mattermost /users/me", OK, "accepted: bot @%s (%s)", me.Username, me.ID)
	}
}

// token reports a token's presence and form without printing it; about
// is what may be said of it (a bot id, which is public).
func token(r *Report, platform, variable, value string, wellFormed bool, want, about string) bool {
	name := platform + " token"
	switch {
	case value == "":
		r.add("platform", name, Fail, "%s is not set", variable)
		return false
	case !wellFormed:
		r.add("platform", name, Fail, "%s is not %s", variable, want)
		return false
	}
	detail := variable + " is set and well formed"
	if about != "" {
		detail += " (" + about + ")"
	}
	r.add("platform", name, OK, "%s", detail)
	return true
}

func online(r *Report, platform string, opts Options) bool {
	if !opts.Online {
		r.add("platform", platform+" online", Skip, "run `jakebot doctor --online` to ask %s whether it accepts the token", platform)
	}
	return opts.Online
}

// call makes one request with an Authorization header and decodes the
// JSON answer into out. A status other than 200 is an error, except that
// Slack and Telegram answer refusals as JSON the caller reads.
func call(ctx context.Context, opts Options, method, u, auth string, out any) error {
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return err
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := opts.HTTP.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			// The URL may hold a token (Telegram's does).
			return fmt.Errorf("%s %s: %w", method, hostOf(u), ue.Err)
		}
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, out); err != nil || resp.StatusCode == http.StatusUnauthorized || resp.StatusCode >= 500 {
		return fmt.Errorf("%s answered %s", hostOf(u), resp.Status)
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusBadRequest {
		return fmt.Errorf("%s answered %s", hostOf(u), resp.Status)
	}
	return nil
}

func hostOf(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "the server"
	}
	return p.Host
}

// redact removes secrets from a message.
func redact(s string, secrets ...string) string {
	for _, sec := range secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, core.Redacted)
		}
	}
	return s
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// checkWeb checks the web page's settings: a token long enough, TLS
// files that are there, and a warning for a page served beyond loopback
// without TLS.
func checkWeb(r *Report, c web.Config) {
	if err := c.Validate(); err != nil {
		r.add("platform", "web settings", Fail, "%v", err)
		return
	}
	r.add("platform", "web token", OK, "WEB_TOKEN is set (%d characters); the sign-in URL is printed at start on a terminal, and by `jakebot web-url`", len(c.Token))
	for _, f := range []struct{ name, path string }{{"WEB_TLS_CERT", c.TLSCert}, {"WEB_TLS_KEY", c.TLSKey}} {
		if f.path == "" {
			continue
		}
		if _, err := os.Stat(f.path); err != nil {
			r.add("platform", "web tls", Fail, "%s: %v", f.name, err)
			return
		}
	}
	host, _, _ := net.SplitHostPort(c.Addr)
	ip := net.ParseIP(host)
	switch {
	case host == "" || host == "localhost" || ip != nil && ip.IsLoopback():
		r.add("platform", "web address", OK, "%s, loopback only", c.Addr)
	case c.TLSCert != "":
		r.add("platform", "web address", OK, "%s over TLS", c.Addr)
	default:
		r.add("platform", "web address", Warn, "%s is reachable beyond this host without TLS: set WEB_TLS_CERT and WEB_TLS_KEY, or serve loopback behind a TLS reverse proxy (README, Web)", c.Addr)
	}
	if c.Admin {
		r.add("platform", "web admin", Warn, "WEB_ADMIN=true: whoever holds WEB_TOKEN is an admin")
	}
}

// matrixSettings is what the Matrix checks need.
type matrixSettings struct {
	Homeserver, UserID, Token string
	Users                     []string
}

// checkMatrix checks the homeserver's address, the bot's Matrix id, the
// access token's presence, the allow-list (Matrix ids) and, online,
// GET /_matrix/client/v3/account/whoami: that the token is the bot's.
func checkMatrix(ctx context.Context, r *Report, s matrixSettings, opts Options) {
	u, err := url.Parse(s.Homeserver)
	urlOK := s.Homeserver != "" && err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
	if urlOK {
		r.add("platform", "matrix homeserver", OK, "%s", s.Homeserver)
	} else {
		r.add("platform", "matrix homeserver", Fail, "MATRIX_HOMESERVER is not the homeserver's http(s) address, such as https://matrix.example.org")
	}
	idOK := matrix.ValidUserID(s.UserID)
	if idOK {
		r.add("platform", "matrix user", OK, "%s", s.UserID)
	} else {
		r.add("platform", "matrix user", Fail, "MATRIX_USER_ID is not the bot's Matrix id, such as @jakebot:example.org")
	}
	// Access tokens have no fixed form (Synapse's syt_…, Dendrite's, an
	// OAuth server's): any non-blank one without spaces.
	ok := token(r, "matrix", "MATRIX_ACCESS_TOKEN", s.Token, s.Token != "" && !strings.ContainsAny(s.Token, " \t\n"), "the bot account's access token", s.UserID)
	var bad []string
	for _, u := range s.Users {
		if u = strings.TrimSpace(u); u != "" && u != "*" && !matrix.ValidUserID(u) {
			bad = append(bad, u)
		}
	}
	if len(bad) > 0 {
		r.add("platform", "matrix allow-list", Fail, "not Matrix ids (@name:server): %s", strings.Join(bad, ", "))
	} else {
		allowList(r, "matrix", "MATRIX_ALLOWED_USERS", s.Users, "")
	}
	if !online(r, "matrix", opts) || !ok || !urlOK {
		return
	}
	var who struct {
		UserID   string `json:"user_id"`
		DeviceID string `json:"device_id"`
	}
	if err := call(ctx, opts, http.MethodGet, strings.TrimRight(s.Homeserver, "/")+"/_matrix/client/v3/account/whoami", "Bearer "+s.Token, &who); err != nil {
		r.add("platform", "matrix whoami", Fail, "%s", redact(err.Error(), s.Token))
	} else if who.UserID == "" {
		r.add("platform", "matrix whoami", Fail, "MATRIX_ACCESS_TOKEN refused")
	} else if idOK && who.UserID != s.UserID {
		r.add("platform", "matrix whoami", Fail, "MATRIX_ACCESS_TOKEN is %s's, not MATRIX_USER_ID's (%s)", who.UserID, s.UserID)
	} else {
		r.add("platform", "matrix whoami", OK, "accepted: %s (device %s)", who.UserID, who.DeviceID)
	}
}
