package core

import (
	"context"
	"fmt"
	"slices"
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

// CommandSpec is one entry of the command table.
type CommandSpec struct {
	Name CommandName
	// Words follow the slash: {"workdir", "set"}. A plugin's entries
	// start with its ID.
	Words []string
	// Plugin is the ID of the plugin whose entry this is.
	Plugin string
	// Arg names the argument ("workdir", "id", "all"); Kind says what it
	// is and Optional whether it may be left out.
	Arg      string
	Kind     ArgKind
	Optional bool
	// Syntax, where set, is how the argument is written in /help and in
	// a usage error when Arg, a single name for the menus, says too
	// little: "<plugin> [--write] <question>".
	Syntax  string
	Suggest Suggest
	Scope   Scope
	// Help says what the command does, in a few words; ArgHelp what its
	// argument is.
	Help    string
	ArgHelp string
	// Alias entries are parsed but not listed by /help or offered as
	// Discord commands, which show the entry they repeat; menus of bare
	// words (Telegram's) may list them.
	Alias bool

	// Run is the command's handler, a function over the message's call
	// (core/call.go), in the file of its concern; it returns the answer
	// to send, if any. A plugin's own commands (CommandProvider) run
	// through its RunCommand.
	Run func(*call) (string, error)
	// NeedsConversation commands answer that there is none when they are
	// typed where no conversation is.
	NeedsConversation bool
	// Changes: the command moves the conversation to another plugin,
	// session or directory, or ends it. It is refused while a turn runs
	// or messages wait, since they belong to the conversation as it was.
	// Rewarm: once it succeeded, the old session's warm CLI is dropped
	// and the new one's started (not for one that leaves no session to
	// warm, such as /end). ShowsBare: without its argument the command
	// only shows (a bare /resume lists), and neither rule applies.
	Changes, Rewarm, ShowsBare bool
	// Answer commands answer a question of the running turn: only a
	// person's own message may (Router.permitsOf), and the message is kept
	// until that turn ends.
	Answer bool
}

// Usage is how the command is typed: "/claude start [workdir]".
func (s CommandSpec) Usage() string {
	u := "/" + strings.Join(s.Words, " ")
	switch {
	case s.Syntax != "":
		u += " " + s.Syntax
	case s.Kind == ArgNone:
	case s.Optional || s.Kind == ArgFlag:
		u += " [" + s.Arg + "]"
	default:
		u += " <" + s.Arg + ">"
	}
	return u
}

// CommandProvider is a plugin with commands of its own, which the table
// lists after its ID ("/claude model opus") and the router passes back to
// RunCommand with the conversation they were typed in (zero when there is
// none).
type CommandProvider interface {
	// Commands returns the plugin's entries, their Words without the
	// plugin's ID and their Name unique to the plugin.
	Commands() []CommandSpec
	RunCommand(ctx context.Context, conv Conversation, cmd Command) (string, error)
}

// Commands is the command table: every command the bot understands. It
// drives parsing, /help, and each platform's menus (Telegram's menu,
// Discord's application commands, Slack's mention grammar) and, through
// each entry's Run and rules, what the command does: a command is one
// entry here and its handler in the file of its concern. It is built once
// and only read afterwards.
type Commands struct {
	specs []CommandSpec
}

// NewCommands builds the table for plugins: each plugin's entries, by
// ID, then the shared ones.
func NewCommands(plugins []Plugin) *Commands {
	plugins = slices.Clone(plugins)
	slices.SortFunc(plugins, func(a, b Plugin) int { return strings.Compare(a.ID(), b.ID()) })
	var specs []CommandSpec
	for _, p := range plugins {
		specs = append(specs, pluginCommands(p)...)
	}
	specs = append(specs, sharedCommands...)
	return &Commands{specs: specs}
}

// Specs returns the table's entries, in the order /help lists them.
func (c *Commands) Specs() []CommandSpec { return slices.Clone(c.specs) }

// Lookup returns the entry a parsed command came from.
func (c *Commands) Lookup(cmd Command) (CommandSpec, bool) {
	for _, s := range c.specs {
		if s.Name == cmd.Name && s.Plugin == cmd.Plugin && !s.Alias {
			return s, true
		}
	}
	return CommandSpec{}, false
}

// ScopeOf says where text, a command typed in a channel rather than in a
// thread, acts: its entry's Scope; what does not parse is answered where
// it was typed (ScopeHere). Adapters whose conversations are threads ask
// it to place a command typed outside them.
func (c *Commands) ScopeOf(text string) Scope {
	cmd, err := c.Parse(text)
	if err != nil {
		return ScopeHere
	}
	s, _ := c.Lookup(cmd)
	return s.Scope
}

// reservedWords are the first words of the shared commands, which no
// plugin ID may take.
var reservedWords = func() []string {
	var words []string
	for _, s := range NewCommands(nil).specs {
		if !slices.Contains(words, s.Words[0]) {
			words = append(words, s.Words[0])
		}
	}
	return append(words, "start")
}()

// IsReserved reports whether id is a command word no plugin ID may take,
// so that plugins configured from a file can be refused with its line.
func IsReserved(id string) bool { return slices.Contains(reservedWords, strings.ToLower(id)) }

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

// Parse parses a slash command. The error is a UserError: the usage of
// the command meant, or that there is no such command.
func (c *Commands) Parse(text string) (Command, error) {
	cmd, _, err := c.parse(text)
	return cmd, err
}

// parse is Parse, and the entry the command came from.
func (c *Commands) parse(text string) (Command, CommandSpec, error) {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, "/") {
		return Command{}, CommandSpec{}, Errorf("not a command: %q", text)
	}
	first, _ := cutWord(text[1:])
	first = strings.ToLower(first)
	var candidates []CommandSpec
	for _, s := range c.specs {
		if s.Words[0] == first {
			candidates = append(candidates, s)
		}
	}
	if len(candidates) == 0 {
		return Command{}, CommandSpec{}, Errorf("unknown command /%s. Try /help", first)
	}
	// The entry whose words matched most says what was meant.
	var meant *CommandSpec
	for i, s := range candidates {
		rest, ok := matchWords(text[1:], s.Words)
		if !ok {
			continue
		}
		if arg, ok := s.takeArg(rest); ok {
			return Command{Name: s.Name, Plugin: s.Plugin, Arg: arg}, s, nil
		}
		if meant == nil || len(s.Words) > len(meant.Words) {
			meant = &candidates[i]
		}
	}
	if meant != nil && (len(meant.Words) > 1 || len(candidates) == 1) {
		return Command{}, CommandSpec{}, usageError(meant.Usage())
	}
	var usages []string
	for _, s := range candidates {
		if !s.Alias {
			usages = append(usages, s.Usage())
		}
	}
	return Command{}, CommandSpec{}, usageError(strings.Join(usages, " | "))
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

// takeArg checks what follows the command's words.
func (s CommandSpec) takeArg(rest string) (string, bool) {
	switch {
	case rest == "":
		return "", s.Kind == ArgNone || s.Optional || s.Kind == ArgFlag
	case s.Kind == ArgFlag:
		return s.Arg, strings.EqualFold(rest, s.Arg)
	case s.Kind == ArgWord:
		return rest, !strings.ContainsAny(rest, " \t\n")
	case s.Kind == ArgText:
		return rest, true
	}
	return "", false
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

// Help returns the command overview.
func (c *Commands) Help() string {
	var b strings.Builder
	b.WriteString("Commands:\n")
	// Every plugin has the same four entries (pluginCommands): they are
	// listed once, for /<plugin>, so that /help stays one message.
	var plugins []string
	listed := map[CommandName]bool{}
	for _, s := range c.specs {
		switch {
		case s.Alias:
		case s.Plugin != "" && s.Name == CmdStart:
			plugins = append(plugins, "/"+s.Plugin)
			fallthrough
		case s.Plugin != "" && slices.Contains(everyPlugins, s.Name):
			if !listed[s.Name] {
				listed[s.Name] = true
				fmt.Fprintf(&b, "/<plugin>%s — %s\n", strings.TrimPrefix(s.Usage(), "/"+s.Plugin), s.Help)
			}
		default:
			if len(plugins) > 0 {
				fmt.Fprintf(&b, "(/<plugin>: %s)\n", strings.Join(plugins, ", "))
				plugins = nil
			}
			fmt.Fprintf(&b, "%s — %s\n", s.Usage(), s.Help)
		}
	}
	b.WriteString("Once a conversation is started, just type to chat. //compact runs the CLI's own /compact.")
	return b.String()
}
