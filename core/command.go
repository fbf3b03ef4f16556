package core

import (
	"strings"
)

// CommandName names what a command does.
type CommandName string

const (
	CmdHelp          CommandName = "help"
	CmdStatus        CommandName = "status"
	CmdStop          CommandName = "stop"
	CmdEnd           CommandName = "end"
	CmdWorkdir       CommandName = "workdir"
	CmdWorkdirSet    CommandName = "workdir set"
	CmdResume        CommandName = "resume"
	CmdStart         CommandName = "start"
	CmdConversations CommandName = "conversations"
	CmdAllow         CommandName = "allow"
	CmdDeny          CommandName = "deny"
	CmdNow           CommandName = "now"
	CmdSteer         CommandName = "steer"
	CmdQueue         CommandName = "queue"
	CmdAnswer        CommandName = "answer"
	CmdModel         CommandName = "model"
	CmdMode          CommandName = "mode"
	CmdDiff          CommandName = "diff"
	CmdMerge         CommandName = "merge"
	CmdCost          CommandName = "cost"
	CmdAt            CommandName = "at"
	CmdEvery         CommandName = "every"
	CmdSchedules     CommandName = "schedules"
	CmdUnschedule    CommandName = "unschedule"
	CmdFile          CommandName = "file"
	CmdRunners       CommandName = "runners"
	CmdLimits        CommandName = "limits"
	CmdStartNow      CommandName = "start now"
	CmdAsk           CommandName = "ask"
	CmdReview        CommandName = "review"
	CmdReviewFix     CommandName = "review fix"
	CmdReviewDismiss CommandName = "review dismiss"
	CmdPair          CommandName = "pair"
)

// Command is a parsed slash command.
type Command struct {
	Name CommandName
	// Plugin is the plugin a plugin command names; for a bare /resume it is
	// empty.
	Plugin string
	// Arg is the rest of the line: a workdir, a session id, "all".
	Arg string
}

// ArgKind says what follows a command's words.
type ArgKind int

const (
	// ArgNone: nothing may follow.
	ArgNone ArgKind = iota
	// ArgWord: one word, such as a session id.
	ArgWord
	// ArgText: the rest of the line, spaces included, such as a path.
	ArgText
	// ArgFlag: optionally the word CommandSpec.Arg itself ("all").
	ArgFlag
)

// Suggest says what a platform may offer while the argument is typed
// (Discord's autocomplete).
type Suggest int

const (
	SuggestNothing Suggest = iota
	SuggestWorkdir
	SuggestResumeID
	SuggestMode
)

// Scope says where a command acts when it is typed in a channel rather
// than in a conversation's thread (Slack).
type Scope int

const (
	// ScopeHere commands (help, listings) answer where they were typed.
	ScopeHere Scope = iota
	// ScopeConversation commands act on the user's current conversation.
	ScopeConversation
	// ScopeNewConversation commands begin a conversation, in a new thread.
	ScopeNewConversation
)

// IsCommand reports whether text is meant as a command rather than a
// turn. Text starting with "//" is for the CLI (see ForCLI).
func IsCommand(text string) bool {
	text = strings.TrimSpace(text)
	return strings.HasPrefix(text, "/") && !strings.HasPrefix(text, "//")
}

// ForCLI returns a message as its CLI gets it: "//compact" reaches the
// CLI as its own command "/compact", which the bot's commands would
// otherwise shadow.
func ForCLI(text string) string {
	if t := strings.TrimLeft(text, " \t\n"); strings.HasPrefix(t, "//") {
		return t[1:]
	}
	return text
}

// matchWords reports whether line starts with words (in any case) and
// returns the rest.
func matchWords(line string, words []string) (rest string, ok bool) {
	rest = line
	for _, w := range words {
		var got string
		got, rest = cutWord(rest)
		if !strings.EqualFold(got, w) {
			return "", false
		}
	}
	return rest, true
}

func usageError(usage string) error {
	return &UserError{Msg: "usage: " + usage}
}

// cutWord splits s at its first run of white space.
func cutWord(s string) (word, rest string) {
	s = strings.TrimSpace(s)
	i := strings.IndexAny(s, " \t\n")
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimSpace(s[i:])
}

// line is cmd as the record shows it: "/claude start ~/src".
func (cmd Command) line() string {
	words := "/" + string(cmd.Name)
	if cmd.Plugin != "" {
		words = "/" + cmd.Plugin + " " + string(cmd.Name)
	}
	return strings.TrimSpace(words + " " + cmd.Arg)
}
