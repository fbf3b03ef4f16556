package web_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/claude"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// chromium starts Debian's headless Chromium for one test and returns
// its first tab; without it the test is skipped, or fails where CI
// requires the browser.
func chromium(t *testing.T) context.Context {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("JAKEBOT_REQUIRE_BROWSER") != "" {
			t.Fatalf("chromium is not installed (apt-get install chromium): %v", err)
		}
		t.Skip("chromium is not installed; .ci/run installs it")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
	}
	// Chromium's helpers may still write to its profile as it exits, so
	// the profile is removed after the browser has gone, best effort.
	profile, err := os.MkdirTemp("", "jakebot-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(profile) })
	// Chromium's own complaints go to the test's log, shown when it fails.
	// chromedp asks the kernel to kill Chromium when the OS thread that
	// started it exits (Pdeathsig is per thread), and plugins/cliproc
	// starts each CLI from a locked thread that then exits: were Chromium
	// started from a thread later lent to cliproc, a turn would kill it.
	// The allocator's cancel stops it instead.
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(opts, chromedp.UserDataDir(profile),
		chromedp.CombinedOutput(t.Output()), chromedp.ModifyCmdFunc(func(*exec.Cmd) {}))...)
	t.Cleanup(cancelAlloc)
	browser, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	if err := chromedp.Run(browser); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return browser
}

// realClaude is the real Claude Code CLI at bin against model, in
// permission mode; the test fails if a process it started outlives it.
func realClaude(t *testing.T, bin string, model *plugintest.Anthropic, mode string) core.Plugin {
	t.Helper()
	home := plugintest.Home(t)
	mark, alive := plugintest.ProcessMarker(t)
	t.Cleanup(func() {
		if pids := alive(); len(pids) > 0 {
			t.Errorf("processes %v outlived the test", pids)
		}
	})
	return claude.New(claude.Config{PermissionMode: mode, ConfigDir: filepath.Join(home, ".claude"),
		Settings: cliproc.Settings{Bin: bin, Env: append(plugintest.ClaudeEnv(t, model, home), mark)}}, nil)
}

// bounded keeps a bug from hanging the test: it fails instead.
func bounded(t *testing.T, ctx context.Context) context.Context {
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// shows waits until the page's messages contain text.
func shows(text string) chromedp.Action {
	return chromedp.Poll(`document.querySelector('#messages').innerText.includes(`+jsString(text)+`)`, nil,
		chromedp.WithPollingTimeout(60*time.Second))
}

func jsString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// type_ types text in the message box and sends it with Enter.
func type_(text string) chromedp.Action {
	return chromedp.SendKeys("#text", text+"\r", chromedp.ByID)
}

// In a real browser, against the real Claude CLI and the fake model: sign
// in, start a conversation, see a reply stream in rendered as Markdown,
// stop a slow turn, reload and see the conversation so far; a browser
// without the cookie is refused.
func TestBrowser(t *testing.T) {
	t.Parallel()
	browser := chromium(t)
	bin := plugintest.CLIPath(t, "claude")
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	model := plugintest.NewAnthropic(t,
		plugintest.Reply{Text: []string{"Hello from **the** fake.\n\n```go\nfunc main() {}\n```\n",
			"\n```diff\n--- a/x.go\n+++ b/x.go\n@@ -1,2 +1,2 @@\n same\n-old line\n+new line\n```\n"}},
		plugintest.Reply{Text: []string{"never sent"}, Hold: hold},
	)
	s := newSiteFrom(t, siteConfig{plugin: realClaude(t, bin, model, "acceptEdits"), router: func(rc *core.RouterConfig) { rc.Reactions = true }})

	page := bounded(t, browser)
	var html string
	if err := chromedp.Run(page, chromedp.Navigate(s.url+"/login?token="+token)); err != nil {
		t.Fatalf("sign in: %v", err)
	}
	if err := chromedp.Run(page, chromedp.Poll(`document.querySelector('#status').textContent === 'connected'`, nil)); err != nil {
		t.Fatalf("connect: %v", err)
	}
	if err := chromedp.Run(page, type_("/claude start")); err != nil {
		t.Fatalf("type: %v", err)
	}
	err := chromedp.Run(page,
		shows("conversation started"),
		type_("say hello"),
		shows("Hello from the fake."),
		shows("new line"),             // the reply's second part, the diff
		ended("Hello from the fake."), // so the next message is a turn of its own
		chromedp.InnerHTML("#messages", &html, chromedp.ByID),
	)
	if err != nil {
		t.Fatalf("conversation: %v", err)
	}
	for _, want := range []string{"<strong>the</strong>", `<pre class="code"><code class="language-go"><span class="tok-k">func</span>`,
		`<table class="sbs">`, `<td class="diff-del">old line</td><td class="diff-add">new line</td>`, `<td>same</td><td>same</td>`} {
		if !strings.Contains(html, want) {
			t.Errorf("the reply's HTML lacks %s:\n%s", want, html)
		}
	}
	var location string
	err = chromedp.Run(page,
		chromedp.Location(&location),
		type_("take your time"),
		chromedp.Poll(`new Promise(r => setTimeout(() => r(true), 0))`, nil), // the message is posted
		chromedp.WaitVisible("#stop", chromedp.ByID),
	)
	if err != nil {
		t.Fatalf("slow turn: %v", err)
	}
	if strings.Contains(location, token) {
		t.Errorf("the page's address %s still holds the token", location)
	}
	// Stop once the slow turn's request reached the model.
	for len(model.Requests()) < 2 {
		select {
		case <-model.Arrived():
		case <-page.Done():
			t.Fatal("the slow turn never reached the model")
		}
	}
	if err := chromedp.Run(page, chromedp.Click("#stop", chromedp.ByID), shows("Stopped")); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if err := chromedp.Run(page, chromedp.Reload(), shows("Hello from the fake."), shows("take your time")); err != nil {
		t.Fatalf("reload: %v", err)
	}
	// REACTIONS: each message shows how its turn ended.
	if err := chromedp.Run(page, marked("say hello", "✅"), marked("take your time", "🛑")); err != nil {
		var users string
		derr := chromedp.Run(bounded(t, browser), chromedp.Evaluate(`[...document.querySelectorAll('#messages .msg.user')].map(m => m.outerHTML).join("\n")`, &users))
		t.Fatalf("marks: %v; the user's messages (%v):\n%s", err, derr, users)
	}

	stranger := bounded(t, chromium(t)) // a browser of its own: no cookie
	var body string
	if err := chromedp.Run(stranger, chromedp.Navigate(s.url+"/"), chromedp.Text("body", &body)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(body, "Not signed in") {
		t.Errorf("a browser without the cookie got %q", body)
	}
}

// marked waits until the user's message text shows mark, its turn's
// state.
func marked(text, mark string) chromedp.Action {
	return chromedp.Poll(`[...document.querySelectorAll('#messages .msg.user')].some(m => m.firstChild.textContent === `+jsString(text)+
		` && m.querySelector('.mark')?.textContent === `+jsString(mark)+`)`, nil, chromedp.WithPollingTimeout(60*time.Second))
}

// click clicks the first button whose text is label, in a message's
// buttons, once there is one.
func click(label string) chromedp.Action {
	js := `(() => { const b = [...document.querySelectorAll('#messages .choices button')].reverse().find(b => b.textContent === ` +
		jsString(label) + `); if (b) b.click(); return !!b; })()`
	return chromedp.Poll(js, nil, chromedp.WithPollingTimeout(60*time.Second))
}

// ended waits until a bot message containing text has its footer: its
// turn is over.
func ended(text string) chromedp.Action {
	return chromedp.Poll(`[...document.querySelectorAll('#messages .msg.bot')].some(m => m.innerText.includes(`+jsString(text)+
		`) && m.innerText.includes("— "))`, nil, chromedp.WithPollingTimeout(60*time.Second))
}

// clickFirst clicks the first button of the latest message with buttons:
// in a listing, the newest past conversation.
func clickFirst() chromedp.Action {
	js := `(() => { const rows = document.querySelectorAll('#messages .choices'); const b = rows.length && rows[rows.length - 1].querySelector('button');` +
		` if (b) b.click(); return !!b; })()`
	return chromedp.Poll(js, nil, chromedp.WithPollingTimeout(60*time.Second))
}

// In a real browser, against the real Claude CLI: a conversation started
// from the form (plugin and directory), a question answered by clicking
// Allow, a queued message (BUSY=queue) sent at once with its Send now
// button, and an
// ended conversation resumed from the past-conversations list.
func TestBrowserButtons(t *testing.T) {
	t.Parallel()
	browser := chromium(t)
	bin := plugintest.CLIPath(t, "claude")
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	model := plugintest.NewAnthropic(t,
		plugintest.Reply{Tool: &plugintest.ToolCall{ID: "toolu_1", Name: "Bash",
			Input: map[string]any{"command": "echo hi > hi.txt", "description": "Write hi.txt"}}},
		plugintest.Reply{Text: []string{"Made hi.txt."}},
		plugintest.Reply{Text: []string{"never sent"}, Hold: hold},
		plugintest.Reply{Text: []string{"The quick answer."}},
		plugintest.Reply{Text: []string{"Yes, still here."}},
	)
	s := newSiteFrom(t, siteConfig{plugin: realClaude(t, bin, model, "default"), router: func(rc *core.RouterConfig) { rc.Ask, rc.Busy = true, core.BusyQueue }})
	// Typed in the form: the default directory, where /resume looks once
	// the conversation has ended.
	workdir := s.root

	page := bounded(t, browser)
	step := func(what string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(page, actions...); err != nil {
			var shown string
			derr := chromedp.Run(bounded(t, browser), chromedp.Evaluate(`document.querySelector('#messages').innerText`, &shown))
			t.Fatalf("%s: %v; the page shows (%v):\n%s", what, err, derr, shown)
		}
	}
	step("sign in", chromedp.Navigate(s.url+"/login?token="+token),
		chromedp.Poll(`document.querySelector('#status').textContent === 'connected'`, nil))
	var plugins string
	step("the form", chromedp.Text("#plugin", &plugins, chromedp.ByID), chromedp.SendKeys("#workdir", workdir, chromedp.ByID),
		chromedp.Click(`#start button[type="submit"]`), shows("Claude Code conversation started in "+workdir))
	if plugins != "Claude Code" {
		t.Errorf("the form offers %q, want Claude Code", plugins)
	}

	step("the question", type_("make hi.txt"), shows("Allow Bash?"), click("Allow"), shows("Allowed Bash (web)"), ended("Made hi.txt."))
	if data, err := os.ReadFile(filepath.Join(workdir, "hi.txt")); err != nil || string(data) != "hi\n" {
		t.Errorf("hi.txt = %q, %v; want the allowed command's output", data, err)
	}

	step("a slow turn", type_("take your time"))
	for len(model.Requests()) < 3 {
		select {
		case <-model.Arrived():
		case <-page.Done():
			t.Fatal("the slow turn never reached the model")
		}
	}
	// Once the footer shows, the conversation is free to end.
	// BUSY=queue: the message waits, offering to steer it into the turn
	// (Claude can take it) or to send it now.
	step("send now", type_("quick one"), shows("Queued (1 waiting)"), shows("Steer"), click("Send now"), ended("The quick answer."))

	step("resume", type_("/conversation end"), shows("Conversation ended."), chromedp.Click("#resume", chromedp.ByID),
		shows("Claude Code conversations in "+workdir), clickFirst(), shows("Resumed Claude Code conversation"),
		type_("still there?"), shows("Yes, still here."))
	reqs := model.Requests()
	if last := reqs[len(reqs)-1].Text(); !strings.Contains(last, "Made hi.txt.") || !strings.Contains(last, "quick one") {
		t.Errorf("the resumed turn's request lacks the conversation so far: %.500s", last)
	}
}
