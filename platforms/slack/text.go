package slack

import (
	"regexp"
	"strings"
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
// one: "/anything", "start [workdir]" (for the default plugin), or a
// command word in exactly a command's shape ("stop", "status", "claude
// resume abc"). Anything else is a request, so "@bot stop the server
// before deploying" stays a turn.
func (a *Adapter) mentionCommand(text string) (string, bool) {
	if strings.HasPrefix(text, "/") {
		return text, true
	}
	f := strings.Fields(strings.ToLower(text))
	if len(f) == 0 {
		return "", false
	}
	ok := false
	switch f[0] {
	case "start":
		if len(f) <= 2 {
			return "/" + a.cfg.DefaultPlugin + " " + text, true
		}
	case "help", "stop", "end":
		ok = len(f) == 1
	case "status":
		ok = len(f) == 1 || len(f) == 2 && f[1] == "all"
	case "conversation":
		ok = len(f) == 2 && f[1] == "end"
	case "workdir":
		ok = len(f) == 1 || len(f) == 3 && f[1] == "set"
	case "resume":
		ok = len(f) <= 2
	default:
		ok = len(f) >= 2 && len(f) <= 3 && (f[1] == "start" || f[1] == "conversations" || f[1] == "resume")
	}
	if !ok {
		return "", false
	}
	return "/" + text, true
}

// scope says where a command acts when it is typed in a channel rather
// than in a thread.
type scope int

const (
	// scopeChannel commands (help, listings) answer where they were typed.
	scopeChannel scope = iota
	// scopeNewThread commands (start, resume <id>) begin a conversation,
	// and so a thread.
	scopeNewThread
	// scopeThread commands (stop, status, end, workdir) act on the
	// thread the user last used in the channel.
	scopeThread
)

func classify(command string) scope {
	f := strings.Fields(strings.ToLower(command))
	if len(f) == 0 || !strings.HasPrefix(f[0], "/") {
		return scopeChannel
	}
	switch f[0][1:] {
	case "status", "stop", "end", "conversation", "workdir", "resume":
		return scopeThread
	case "help":
		return scopeChannel
	}
	if len(f) >= 2 && (f[1] == "start" || f[1] == "resume" && len(f) >= 3) {
		return scopeNewThread
	}
	return scopeChannel
}

// isDM reports whether channel is a direct message with the bot.
func isDM(channel string) bool { return strings.HasPrefix(channel, "D") }
