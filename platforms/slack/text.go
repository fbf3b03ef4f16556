package slack

import (
	"regexp"
	"strings"

	"github.com/jake-bot/jake-bot/core"
)

// controlRe matches Slack's control sequences: <@U1>, <#C1|name>,
// <!here>, <https://x|label>. Typed < and > arrive escaped, so raw angle
// brackets only ever delimit these.
var controlRe = regexp.MustCompile(`<([^<>]*)>`)

var unescaper = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&")

// plainText turns the text of a Slack message back into what the user
// typed, so a CLI gets "a && b" and "example.com" rather than Slack's wire
// form.
func plainText(s string) string {
	s = controlRe.ReplaceAllStringFunc(s, func(m string) string {
		target, label, labelled := strings.Cut(m[1:len(m)-1], "|")
		switch {
		case strings.HasPrefix(target, "@"), strings.HasPrefix(target, "#"):
			if labelled {
				return target[:1] + strings.TrimPrefix(label, target[:1])
			}
			return target
		case strings.HasPrefix(target, "!"):
			if labelled {
				return label
			}
			return "@" + strings.SplitN(target[1:], "^", 2)[0]
		case !labelled:
			return target
		case strings.HasSuffix(target, label), strings.TrimPrefix(target, "mailto:") == label:
			// An auto-linked "example.com" or address: keep what was typed.
			return label
		}
		return label + " (" + target + ")"
	})
	return unescaper.Replace(s)
}

// clean returns a message's text without the bot's mention, as typed.
func (a *Adapter) clean(s string) string {
	if a.mentionRe != nil {
		s = a.mentionRe.ReplaceAllString(s, "")
	}
	return strings.TrimSpace(plainText(s))
}

// mentions reports whether s mentions the bot.
func (a *Adapter) mentions(s string) bool {
	return a.bot != "" && strings.Contains(s, "<@"+a.bot)
}

// mentionCommand reads the text after a mention as a command when it is
// one: "/anything", "start [workdir]" (for the default plugin), or what
// parses as a command of core's table once a slash is put in front
// ("stop", "status", "claude resume abc", "workdir set ~/x"). A one-word
// command whose argument is free text (at, every, file, answer, allow,
// deny) takes at most one word without its slash: "@bot every test in
// pkg fails, fix them", "@bot at line 40 there is a bug" and "@bot file a
// bug about it" are requests, as is anything else that does not parse
// ("@bot stop the server before deploying"). "@bot /every 1h run the
// tests" schedules.
func (a *Adapter) mentionCommand(text string) (string, bool) {
	if strings.HasPrefix(text, "/") {
		return text, core.IsCommand(text)
	}
	f := strings.Fields(text)
	if len(f) > 0 && len(f) <= 2 && strings.EqualFold(f[0], "start") {
		return "/" + a.cfg.DefaultPlugin + " " + text, true
	}
	cmd, err := a.commands.Parse("/" + text)
	if err != nil {
		return "", false
	}
	if s, _ := a.commands.Lookup(cmd); s.Kind == core.ArgText && len(s.Words) == 1 && len(strings.Fields(cmd.Arg)) > 1 {
		return "", false // free text: a request that happens to start with a command's word
	}
	return "/" + text, true
}

// scope says where a command typed in a channel, rather than in a
// thread, acts (core.Commands.ScopeOf).
func (a *Adapter) scope(command string) core.Scope { return a.commands.ScopeOf(command) }

// isDM reports whether channel is a direct message with the bot.
func isDM(channel string) bool { return strings.HasPrefix(channel, "D") }
