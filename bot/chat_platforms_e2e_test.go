package bot_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/jake-bot/jake-bot/bot"
	"github.com/jake-bot/jake-bot/platforms/discord"
	"github.com/jake-bot/jake-bot/platforms/discord/discordtest"
	"github.com/jake-bot/jake-bot/platforms/matrix"
	"github.com/jake-bot/jake-bot/platforms/matrix/matrixtest"
	"github.com/jake-bot/jake-bot/platforms/mattermost"
	"github.com/jake-bot/jake-bot/platforms/mattermost/mattermosttest"
	"github.com/jake-bot/jake-bot/platforms/slack"
	"github.com/jake-bot/jake-bot/platforms/slack/slacktest"
	"github.com/jake-bot/jake-bot/platforms/telegram"
	"github.com/jake-bot/jake-bot/platforms/telegram/telegramtest"
	"github.com/jake-bot/jake-bot/platforms/web"
)

// platformCase is a platform the suite runs on: open configures cfg for
// its fake and returns the chat's driver.
type platformCase struct {
	name string
	open func(t testing.TB, cfg *bot.Config) driver
}

var platformCases = []platformCase{
	{"console", openConsole},
	{"discord", openDiscord},
	{"slack", openSlack},
	{"telegram", openTelegram},
	{"web", openWeb},
	{"mattermost", openMattermost},
	{"matrix", openMatrix},
}

// fastWrites is the platforms' least time between two writes in the
// suite: their pacing is tested in their own packages.
const fastWrites = 10 * time.Millisecond

// discordDriver is a conversation in a thread of the fake Discord's text
// channel, started with the slash command.
type discordDriver struct {
	t      testing.TB
	fake   *discordtest.Server
	users  [2]discordtest.User
	thread string
	logs   *logScan
}

func openDiscord(t testing.TB, cfg *bot.Config) driver {
	fake := discordtest.New(t)
	d := &discordDriver{t: t, fake: fake, users: [2]discordtest.User{fake.NewUser("owner"), fake.NewUser("stranger")},
		logs: &logScan{t: t}}
	cfg.Discord = discord.Config{Token: discord.Secret(fake.Token), GuildID: fake.GuildID,
		AllowedUsers: []string{d.users[owner].ID, d.users[stranger].ID}, Threads: true, EditInterval: fastWrites, APIURL: fake.URL}
	return d
}

func (d *discordDriver) stdio() bot.Stdio {
	return bot.Stdio{In: strings.NewReader(""), Out: io.Discard, Err: d.logs}
}

func (d *discordDriver) ready() {
	d.fake.WaitFor("slash commands registered", func() bool { return len(d.fake.Commands()) > 0 })
}

func (d *discordDriver) start(plugin string) {
	d.fake.Slash(d.users[owner], d.fake.TextChannel, plugin+" start")
	d.fake.WaitFor("a thread", func() bool {
		if ths := d.fake.Threads(d.fake.TextChannel); len(ths) > 0 {
			d.thread = ths[len(ths)-1].ID
		}
		return d.thread != ""
	})
}

func (d *discordDriver) send(w who, text string) { d.fake.Say(d.users[w], d.thread, text) }

func (d *discordDriver) messages() []shown {
	var out []shown
	for _, m := range d.fake.Messages(d.thread) {
		if m.AuthorID != d.fake.BotID || m.Deleted {
			continue
		}
		s := shown{id: m.ID, text: m.Content}
		for _, e := range m.Embeds { // errors and warnings are embeds
			s.text += "\n" + e.Title + "\n" + e.Description
		}
		var rows []struct {
			Components []struct {
				Label    string `json:"label"`
				CustomID string `json:"custom_id"`
			} `json:"components"`
		}
		_ = json.Unmarshal(m.Components, &rows)
		for _, row := range rows {
			for _, b := range row.Components {
				s.buttons = append(s.buttons, button{b.Label, b.CustomID})
			}
		}
		out = append(out, s)
	}
	return out
}

func (d *discordDriver) press(w who, m shown, b button) {
	d.fake.Press(d.users[w], d.thread, m.id, b.data)
}

// files are the attachments of the bot's messages (uploaded as multipart
// files), each captioned with its message's content.
func (d *discordDriver) files() []received {
	var out []received
	for _, m := range d.fake.Messages(d.thread) {
		if m.AuthorID != d.fake.BotID || m.Deleted {
			continue
		}
		for _, f := range m.Files {
			out = append(out, received{name: f.Name, caption: m.Content, data: f.Data})
		}
	}
	return out
}

// pinged: a message @mentions the owner about the question, and lets
// Discord ping only them.
func (d *discordDriver) pinged() bool {
	for _, c := range d.fake.CallsTo("POST", "channels/"+d.thread+"/messages") {
		var body struct {
			Content         string `json:"content"`
			AllowedMentions struct {
				Users []string `json:"users"`
			} `json:"allowed_mentions"`
		}
		c.Decode(d.t, &body)
		if strings.HasPrefix(body.Content, "<@"+d.users[owner].ID+"> ") && strings.Contains(body.Content, "a question is waiting") &&
			len(body.AllowedMentions.Users) == 1 && body.AllowedMentions.Users[0] == d.users[owner].ID {
			return true
		}
	}
	return false
}

// slackDriver is a conversation in a thread of the fake Slack's #general,
// started with the slash command; commands in it are mentions.
type slackDriver struct {
	t      testing.TB
	fake   *slacktest.Server
	thread string
	logs   *logScan
}

var slackUsers = [2]string{"UALICE", "UBOB"}

const slackChannel = "CGENERAL"

func openSlack(t testing.TB, cfg *bot.Config) driver {
	fake := slacktest.New(t)
	cfg.Slack = slack.Config{AppToken: slacktest.AppToken, BotToken: slacktest.BotToken,
		AllowedUsers: slackUsers[:], EditInterval: fastWrites, APIURL: fake.URL, DefaultPlugin: "claude"}
	return &slackDriver{t: t, fake: fake, logs: &logScan{t: t}}
}

func (d *slackDriver) stdio() bot.Stdio {
	return bot.Stdio{In: strings.NewReader(""), Out: io.Discard, Err: d.logs}
}
func (d *slackDriver) ready() { d.fake.WaitConnected(d.t) }

func (d *slackDriver) start(plugin string) {
	before := len(d.fake.Replies(slackChannel, ""))
	d.fake.WaitAck(d.t, d.fake.SlashCommand(d.t, slackUsers[owner], slackChannel, "/"+plugin, "start"))
	d.fake.WaitFor(d.t, "the thread parent", func() bool {
		if top := d.fake.Replies(slackChannel, ""); len(top) > before {
			d.thread = top[before].TS
		}
		return d.thread != ""
	})
}

func (d *slackDriver) send(w who, text string) {
	if cmd, ok := strings.CutPrefix(text, "/"); ok {
		text = "<@" + slacktest.BotUser + "> " + cmd
	}
	d.fake.Post(d.t, slackUsers[w], slackChannel, d.thread, text)
}

// slackUnescape shows mrkdwn's three escapes as the reader sees them.
var slackUnescape = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&")

func (d *slackDriver) messages() []shown {
	var out []shown
	for _, m := range d.fake.Replies(slackChannel, d.thread) {
		if !m.Bot {
			continue
		}
		s := shown{id: m.TS, text: slackUnescape.Replace(m.Text)}
		var blocks []struct {
			Elements []struct {
				ActionID string `json:"action_id"`
				Value    string `json:"value"`
				Text     struct {
					Text string `json:"text"`
				} `json:"text"`
			} `json:"elements"`
		}
		_ = json.Unmarshal([]byte(m.Blocks), &blocks)
		for _, bl := range blocks {
			for _, e := range bl.Elements {
				if e.ActionID != "" {
					s.buttons = append(s.buttons, button{e.Text.Text, e.ActionID + " " + e.Value})
				}
			}
		}
		out = append(out, s)
	}
	return out
}

// pinged: a reply in the thread mentions the owner about the question.
func (d *slackDriver) pinged() bool {
	for _, m := range d.fake.Replies(slackChannel, d.thread) {
		if m.Bot && strings.HasPrefix(m.Text, "<@"+slackUsers[owner]+"> ") && strings.Contains(m.Text, "a question is waiting") {
			return true
		}
	}
	return false
}

// files are the bot's uploads in the thread (files.getUploadURLExternal,
// the upload, files.completeUploadExternal), each with its
// initial_comment.
func (d *slackDriver) files() []received {
	var out []received
	for _, u := range d.fake.Uploads(slackChannel) {
		if u.ThreadTS == d.thread {
			out = append(out, received{name: u.File.Name, caption: slackUnescape.Replace(u.Comment), data: u.File.Data})
		}
	}
	return out
}

func (d *slackDriver) press(w who, m shown, b button) {
	msg, _ := d.fake.Message(slackChannel, m.id)
	actionID, value, _ := strings.Cut(b.data, " ")
	d.fake.PressButton(d.t, slackUsers[w], msg, actionID, value)
}

// telegramDriver is a conversation in a topic of a forum supergroup on the
// fake Bot API, where both users write.
type telegramDriver struct {
	t     testing.TB
	srv   *telegramtest.Server
	topic int
	logs  *logScan
}

var (
	telegramUsers = [2]telegramtest.User{{ID: 1001, FirstName: "Alice", Username: "alice"}, {ID: 1003, FirstName: "Carol"}}
	telegramTeam  = telegramtest.Chat{ID: -100123, Type: "supergroup", Title: "Team", IsForum: true}
)

func openTelegram(t testing.TB, cfg *bot.Config) driver {
	srv := telegramtest.New(t)
	cfg.Telegram = telegram.Config{Token: telegramtest.Token,
		AllowedUsers: telegram.UserIDs{telegramUsers[owner].ID, telegramUsers[stranger].ID}, APIEndpoint: srv.Endpoint(),
		EditInterval: fastWrites, GroupWritesPerMinute: 100_000, PollTimeout: time.Second}
	return &telegramDriver{t: t, srv: srv, logs: &logScan{t: t}}
}

func (d *telegramDriver) stdio() bot.Stdio {
	return bot.Stdio{In: strings.NewReader(""), Out: io.Discard, Err: d.logs}
}

func (d *telegramDriver) ready() {
	d.srv.WaitFor(d.t, "the bot's first poll", func() bool { return len(d.srv.Calls("getUpdates")) > 0 })
}

func (d *telegramDriver) start(plugin string) {
	d.topic = d.srv.NewTopic(telegramTeam, "work")
	d.send(owner, "/"+plugin+" start")
}

func (d *telegramDriver) send(w who, text string) {
	d.srv.UserSays(telegramTeam, telegramUsers[w], d.topic, text)
}

func (d *telegramDriver) messages() []shown {
	var out []shown
	for _, m := range d.srv.Messages(telegramTeam.ID) {
		if m.Thread != d.topic {
			continue
		}
		text, err := telegramtest.ParseHTML(m.Text)
		if err != nil {
			text = m.Text
		}
		s := shown{id: strconv.Itoa(m.ID), text: text}
		var kb struct {
			InlineKeyboard [][]struct {
				Text         string `json:"text"`
				CallbackData string `json:"callback_data"`
			} `json:"inline_keyboard"`
		}
		_ = json.Unmarshal([]byte(m.Markup), &kb)
		for _, row := range kb.InlineKeyboard {
			for _, b := range row {
				s.buttons = append(s.buttons, button{b.Text, b.CallbackData})
			}
		}
		out = append(out, s)
	}
	return out
}

// pinged: the question came as a new message (sendMessage), which
// notifies, where an edit would not.
func (d *telegramDriver) pinged() bool {
	for _, c := range d.srv.Calls("sendMessage") {
		if strings.Contains(c.Params.Get("text"), "Allow ") && strings.Contains(c.Params.Get("reply_markup"), "/allow ") {
			return true
		}
	}
	return false
}

// files are the documents the bot sent in the topic (sendDocument).
func (d *telegramDriver) files() []received {
	var out []received
	for _, doc := range d.srv.Documents(telegramTeam.ID) {
		if doc.Thread == d.topic {
			out = append(out, received{name: doc.Name, caption: doc.Caption, data: doc.Data})
		}
	}
	return out
}

func (d *telegramDriver) press(w who, m shown, b button) {
	for _, msg := range d.srv.Messages(telegramTeam.ID) {
		if strconv.Itoa(msg.ID) == m.id {
			d.srv.PressButton(telegramUsers[w], msg, b.data)
			return
		}
	}
	d.t.Fatalf("no message %s to press %s on", m.id, b.label)
}

// webDriver is a conversation on the web page, through its HTTP API as
// the page's script uses it: the owner is the signed-in browser; anyone
// else has no session.
type webDriver struct {
	t       testing.TB
	logs    *logScan
	url     string
	browser *http.Client
	csrf    string
	channel string
}

const webToken = "correct-horse-battery-staple-42"

func openWeb(t testing.TB, cfg *bot.Config) driver {
	cfg.Web = web.Config{Addr: "127.0.0.1:0", Token: web.Secret(webToken), MaxUploadBytes: 1 << 20}
	return &webDriver{t: t, logs: &logScan{t: t}}
}

func (d *webDriver) stdio() bot.Stdio {
	// A terminal, as far as the bot knows: the sign-in URL is printed.
	return bot.Stdio{In: strings.NewReader(""), Out: io.Discard, Err: d.logs, ErrTTY: true}
}

var signInLine = regexp.MustCompile(`Web: sign in at (\S+)/login\?token=`)

func (d *webDriver) ready() {
	d.url = d.logs.waitLine(signInLine)
	jar, _ := cookiejar.New(nil)
	d.browser = &http.Client{Jar: jar}
	resp, err := d.browser.Get(d.url + "/login?token=" + webToken)
	if err != nil {
		d.t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	_, rest, ok := strings.Cut(string(page), `name="csrf-token" content="`)
	if !ok {
		d.t.Fatalf("sign-in: %s, and no CSRF token in the page", resp.Status)
	}
	d.csrf, _, _ = strings.Cut(rest, `"`)
}

func (d *webDriver) start(plugin string) {
	var out struct{ ID string }
	d.post(d.browser, "/api/channels", nil, &out)
	d.channel = out.ID
	d.send(owner, "/"+plugin+" start")
}

// send posts text as the page does; anyone but the signed-in owner is
// refused at the door, and that is checked here.
func (d *webDriver) send(w who, text string) {
	body, _ := json.Marshal(map[string]string{"channel": d.channel, "text": text})
	if w == owner {
		d.post(d.browser, "/api/messages", body, nil)
		return
	}
	if status := d.post(&http.Client{}, "/api/messages", body, nil); status != http.StatusUnauthorized {
		d.t.Errorf("a press without the sign-in cookie: %d, want 401", status)
	}
}

func (d *webDriver) post(c *http.Client, path string, body []byte, out any) int {
	req, _ := http.NewRequest("POST", d.url+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRF-Token", d.csrf)
	resp, err := c.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			d.t.Fatalf("POST %s: %s, %v", path, resp.Status, err)
		}
	}
	return resp.StatusCode
}

// webMessage is a bot message of the page's snapshot.
type webMessage struct {
	ID, Text string
	Choices  []struct{ Label, Command string }
	// File is a file the bot sent, downloaded from /api/files/<ID>.
	File *struct{ ID, Name string }
}

// messages reads the conversation from a new event stream's snapshot, as
// a reloaded page does.
func (d *webDriver) messages() []shown {
	var out []shown
	for _, m := range d.botMessages() {
		s := shown{id: m.ID, text: m.Text}
		for _, ch := range m.Choices {
			s.buttons = append(s.buttons, button{ch.Label, ch.Command})
		}
		out = append(out, s)
	}
	return out
}

// files downloads the files of the bot's messages as the page's link
// does, each captioned with its message's text.
func (d *webDriver) files() []received {
	var out []received
	for _, m := range d.botMessages() {
		if m.File == nil {
			continue
		}
		resp, err := d.browser.Get(d.url + "/api/files/" + m.File.ID)
		if err != nil {
			d.t.Fatal(err)
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			d.t.Fatalf("download %s: %s, %v", m.File.Name, resp.Status, err)
		}
		out = append(out, received{name: m.File.Name, caption: m.Text, data: data})
	}
	return out
}

// botMessages reads the bot's messages in the conversation from a new
// event stream's snapshot, as a reloaded page does.
func (d *webDriver) botMessages() []webMessage {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", d.url+"/api/events", nil)
	resp, err := d.browser.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			return d.snapshot([]byte(data))
		}
	}
	d.t.Fatalf("the event stream ended without a snapshot: %v", sc.Err())
	return nil
}

func (d *webDriver) snapshot(data []byte) []webMessage {
	var snap struct {
		Channels []struct {
			ID       string
			Messages []struct {
				From string
				webMessage
			}
		}
	}
	if err := json.Unmarshal(data, &snap); err != nil {
		d.t.Fatalf("snapshot: %v", err)
	}
	var out []webMessage
	for _, c := range snap.Channels {
		if c.ID != d.channel {
			continue
		}
		for _, m := range c.Messages {
			if m.From == "bot" {
				out = append(out, m.webMessage)
			}
		}
	}
	return out
}

// press sends the button's command, as the page's script does.
func (d *webDriver) press(w who, m shown, b button) { d.send(w, b.data) }

// mattermostDriver is a conversation in a thread of the fake Mattermost's
// town square, started by a command typed at the top of the channel with
// a space before its slash, as Mattermost's clients need; questions carry
// buttons, whose presses the fake posts to the bot's callback endpoint.
type mattermostDriver struct {
	t      testing.TB
	fake   *mattermosttest.Server
	users  [2]mattermosttest.User
	thread string
	logs   *logScan
}

func openMattermost(t testing.TB, cfg *bot.Config) driver {
	fake := mattermosttest.New(t)
	d := &mattermostDriver{t: t, fake: fake, users: [2]mattermosttest.User{fake.NewUser("owner"), fake.NewUser("stranger")},
		logs: &logScan{t: t}}
	cfg.Mattermost = mattermost.Config{URL: fake.URL, Token: mattermosttest.Token,
		AllowedUsers: []string{d.users[owner].ID, d.users[stranger].ID}, EditInterval: fastWrites,
		ActionsURL: "http://127.0.0.1:0/mattermost/actions", ActionsListen: "127.0.0.1:0"}
	return d
}

func (d *mattermostDriver) stdio() bot.Stdio {
	return bot.Stdio{In: strings.NewReader(""), Out: io.Discard, Err: d.logs}
}

func (d *mattermostDriver) ready() { d.fake.WaitConnected(d.t) }

func (d *mattermostDriver) start(plugin string) {
	d.thread = d.fake.Say(d.t, d.users[owner], d.fake.Channel, "", " /"+plugin+" start").ID
}

func (d *mattermostDriver) send(w who, text string) {
	if strings.HasPrefix(text, "/") {
		text = " " + text
	}
	d.fake.Say(d.t, d.users[w], d.fake.Channel, d.thread, text)
}

func (d *mattermostDriver) messages() []shown {
	var out []shown
	for _, p := range d.fake.BotReplies(d.fake.Channel, d.thread) {
		s := shown{id: p.ID, text: p.Message}
		for _, b := range p.Buttons() {
			s.buttons = append(s.buttons, button{b.Name, b.ID})
		}
		out = append(out, s)
	}
	return out
}

func (d *mattermostDriver) press(w who, m shown, b button) {
	d.fake.Press(d.t, d.users[w], m.id, b.data)
}

// files are the files of the bot's posts in the thread (uploaded with
// POST /files, then posted with their ids), each with its post's text.
func (d *mattermostDriver) files() []received {
	var out []received
	for _, p := range d.fake.BotReplies(d.fake.Channel, d.thread) {
		for _, id := range p.FileIDs {
			f, _ := d.fake.File(id)
			out = append(out, received{name: f.Name, caption: p.Message, data: f.Data})
		}
	}
	return out
}

// pinged: a reply in the thread @mentions the owner about the question.
func (d *mattermostDriver) pinged() bool {
	for _, p := range d.fake.BotReplies(d.fake.Channel, d.thread) {
		if strings.HasPrefix(p.Message, "@owner ") && strings.Contains(p.Message, "a question is waiting") {
			return true
		}
	}
	return false
}

// matrixDriver is a conversation in a thread of a room on a real Dendrite
// (matrixtest; the case skips without one), started by a command at the
// room's top level; questions offer numbered reactions, which the owner's
// client adds to press them.
type matrixDriver struct {
	t      testing.TB
	users  [2]matrixtest.User
	bot    matrixtest.User
	room   id.RoomID
	thread id.EventID
	seen   *matrixtest.Timeline // the owner's
	logs   *logScan
}

func openMatrix(t testing.TB, cfg *bot.Config) driver {
	srv := matrixtest.Start(t, "owner", "stranger")
	d := &matrixDriver{t: t, users: [2]matrixtest.User{srv.Register(t, "owner"), srv.Register(t, "stranger")},
		bot: srv.Register(t, "jakebot"), logs: &logScan{t: t}}
	d.seen = d.users[owner].Watch(t)
	ctx := context.Background()
	resp, err := d.users[owner].Client.CreateRoom(ctx, &mautrix.ReqCreateRoom{Preset: "private_chat", Invite: []id.UserID{d.users[stranger].ID, d.bot.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.users[stranger].Client.JoinRoomByID(ctx, resp.RoomID); err != nil {
		t.Fatal(err)
	}
	d.room = resp.RoomID
	cfg.Matrix = matrix.Config{Homeserver: srv.URL, UserID: d.bot.ID.String(), AccessToken: matrix.Secret(d.bot.Token),
		AllowedUsers: []string{d.users[owner].ID.String(), d.users[stranger].ID.String()}, EditInterval: fastWrites, RoomInterval: fastWrites, RoomBurst: 5}
	return d
}

func (d *matrixDriver) stdio() bot.Stdio {
	return bot.Stdio{In: strings.NewReader(""), Out: io.Discard, Err: d.logs}
}

// ready: the bot joined the room it was invited to.
func (d *matrixDriver) ready() {
	d.seen.Until(d.t, "the bot to join", func() bool {
		for _, ev := range d.seen.Events(d.room) {
			if ev.Type == event.StateMember && ev.GetStateKey() == d.bot.ID.String() && ev.Content.AsMember().Membership == event.MembershipJoin {
				return true
			}
		}
		return false
	})
}

func (d *matrixDriver) start(plugin string) { d.thread = d.say(owner, "", "/"+plugin+" start") }

func (d *matrixDriver) say(w who, thread id.EventID, text string) id.EventID {
	c := &event.MessageEventContent{MsgType: event.MsgText, Body: text}
	if thread != "" {
		c.RelatesTo = (&event.RelatesTo{}).SetThread(thread, thread)
	}
	resp, err := d.users[w].Client.SendMessageEvent(context.Background(), d.room, event.EventMessage, c)
	if err != nil {
		d.t.Fatalf("say %q: %v", text, err)
	}
	return resp.EventID
}

func (d *matrixDriver) send(w who, text string) { d.say(w, d.thread, text) }

// thread is the bot's messages in the conversation's thread.
func (d *matrixDriver) botMessages() []matrixtest.Message {
	var out []matrixtest.Message
	for _, m := range d.seen.Messages(d.room) {
		if m.Sender == d.bot.ID && m.Thread == d.thread {
			out = append(out, m)
		}
	}
	return out
}

// messages: a question's buttons are the numbered reactions the bot has
// on it, named by the legend in its text.
func (d *matrixDriver) messages() []shown {
	var out []shown
	for _, m := range d.botMessages() {
		s := shown{id: m.ID.String(), text: m.Content.Body}
		for _, key := range m.Reactions[d.bot.ID] {
			if i := strings.Index(s.text, key+" "); i >= 0 {
				label, _, _ := strings.Cut(s.text[i+len(key)+1:], " · ")
				label, _, _ = strings.Cut(label, ", or type")
				s.buttons = append(s.buttons, button{label, key})
			}
		}
		out = append(out, s)
	}
	return out
}

// press reacts with the button's emoji, as a client's click on the
// bot's reaction does.
func (d *matrixDriver) press(w who, m shown, b button) {
	if _, err := d.users[w].Client.SendReaction(context.Background(), d.room, id.EventID(m.id), b.data); err != nil {
		d.t.Fatalf("react %s: %v", b.data, err)
	}
}

// files are the bot's m.file and m.image messages in the thread,
// downloaded from the media repository, each with its caption (the body,
// when it is not the file's name).
func (d *matrixDriver) files() []received {
	var out []received
	for _, m := range d.botMessages() {
		c := m.Content
		if c.MsgType != event.MsgFile && c.MsgType != event.MsgImage {
			continue
		}
		uri, err := c.URL.Parse()
		if err != nil {
			d.t.Fatalf("file %q: %v", c.FileName, err)
		}
		data, err := d.users[owner].Client.DownloadBytes(context.Background(), uri)
		if err != nil {
			d.t.Fatalf("download %q: %v", c.FileName, err)
		}
		r := received{name: c.FileName, data: data}
		if c.Body != c.FileName {
			r.caption = c.Body
		}
		out = append(out, r)
	}
	return out
}

// pinged: an m.text in the thread mentions the owner (m.mentions) about
// the question.
func (d *matrixDriver) pinged() bool {
	for _, m := range d.botMessages() {
		if m.Content.MsgType == event.MsgText && m.Content.Mentions != nil && m.Content.Mentions.Has(d.users[owner].ID) &&
			strings.Contains(m.Content.Body, "a question is waiting") {
			return true
		}
	}
	return false
}
