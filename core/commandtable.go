// The command table's entries: each command's words, its argument, where
// it acts, its help, its rules and its handler (Run), a function over the
// message's call in the file of its concern. Parsing, /help and every
// platform's menu follow from them (command.go).

package core

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// sharedCommands are the commands of every plugin's conversations, in
// the order /help lists them after the plugins' own.
var sharedCommands = []CommandSpec{
	{Run: cmdResume, Changes: true, Rewarm: true, ShowsBare: true, Name: CmdResume, Words: []string{"resume"}, Arg: "id", Kind: ArgWord, Optional: true,
		Scope: ScopeConversation, Help: "list or resume this plugin's conversations",
		ArgHelp: "Conversation id (or the start of it); none lists them"},
	{Run: cmdStatus, Name: CmdStatus, Words: []string{"status"}, Arg: "all", Kind: ArgFlag,
		Scope: ScopeConversation, Help: "show this conversation", ArgHelp: "Every active conversation (admins only)"},
	{Run: cmdCost, Name: CmdCost, Words: []string{"cost"}, Arg: "all", Kind: ArgFlag,
		Scope: ScopeConversation, Help: "what this conversation and you spent today", ArgHelp: "Everyone's spend today (admins only)"},
	{Run: cmdWorkdir, Name: CmdWorkdir, Words: []string{"workdir"}, Scope: ScopeConversation,
		Help: "the working directory"},
	{Run: cmdSetWorkdir, Changes: true, Rewarm: true, Name: CmdWorkdirSet, Words: []string{"workdir", "set"}, Arg: "path", Kind: ArgText,
		Suggest: SuggestWorkdir, Scope: ScopeConversation, Help: "change the working directory",
		ArgHelp: "Directory under the allowed roots"},
	{Run: cmdModel, NeedsConversation: true, Name: CmdModel, Words: []string{"model"}, Arg: "name", Kind: ArgWord, Optional: true,
		Scope: ScopeConversation, Help: "show or set the model (next turn on)",
		ArgHelp: "A model the CLI knows, or \"default\""},
	{Run: cmdMode, NeedsConversation: true, Name: CmdMode, Words: []string{"mode"}, Arg: "name", Kind: ArgWord, Optional: true,
		Suggest: SuggestMode, Scope: ScopeConversation, Help: "show or set the permission mode (next turn on)",
		ArgHelp: "ask, auto, default, or one of the CLI's modes (/mode lists them)"},
	{Run: cmdFile, NeedsConversation: true, Name: CmdFile, Words: []string{"file"}, Arg: "path", Kind: ArgText, Scope: ScopeConversation,
		Help: "send a file from the workdir", ArgHelp: "The file's path, from the workdir"},
	{Run: cmdDiff, NeedsConversation: true, Name: CmdDiff, Words: []string{"diff"}, Scope: ScopeConversation,
		Help: "what the conversation changed"},
	{Run: cmdMerge, Changes: true, NeedsConversation: true, Name: CmdMerge, Words: []string{"merge"}, Scope: ScopeConversation,
		Help: "commit the worktree's changes and merge them"},
	{Run: cmdAsk, NeedsConversation: true, Name: CmdAsk, Words: []string{"ask"}, Arg: "plugin_and_question", Kind: ArgText, Syntax: "<plugin> [--write] <question>", Scope: ScopeConversation,
		Help:    "ask another agent, here, read-only unless --write",
		ArgHelp: "A plugin (codex), --write to let it edit files, then your question"},
	{Run: cmdReview, NeedsConversation: true, Name: CmdReview, Words: []string{"review"}, Arg: "plugin", Kind: ArgWord, Optional: true, Scope: ScopeConversation,
		Help:    "another agent reviews the changes since the last review",
		ArgHelp: "The reviewer (default: the pairing's, or another plugin that can be read-only)"},
	// The buttons under a review's findings; typed where a platform has
	// none, so listed nowhere.
	{Run: cmdReviewFix, NeedsConversation: true, Alias: true, Name: CmdReviewFix, Words: []string{"review", "fix"}, Arg: "id", Kind: ArgWord, Scope: ScopeConversation,
		Help: "send a review's findings to the conversation's agent as its next turn", ArgHelp: "The findings' id"},
	{Run: cmdReviewDismiss, NeedsConversation: true, Alias: true, Name: CmdReviewDismiss, Words: []string{"review", "dismiss"}, Arg: "id", Kind: ArgWord, Scope: ScopeConversation,
		Help: "drop a review's findings", ArgHelp: "The findings' id"},
	{Run: cmdPair, NeedsConversation: true, Name: CmdPair, Words: []string{"pair"}, Arg: "plugin_and_rounds", Kind: ArgText, Optional: true, Syntax: "[<plugin> [rounds] | off]", Scope: ScopeConversation,
		Help:    "another agent reviews every turn that changes files",
		ArgHelp: "A plugin and how many rounds (codex 2), or off; none shows the pairing"},
	{Run: cmdSchedule, NeedsConversation: true, Name: CmdAt, Words: []string{"at"}, Arg: "when_and_message", Kind: ArgText, Syntax: "<when> <message>", Scope: ScopeConversation,
		Help: "send a message later", ArgHelp: "When (30m, 2h, 09:00, 2026-12-01T09:00:00Z), then the message"},
	{Run: cmdSchedule, NeedsConversation: true, Name: CmdEvery, Words: []string{"every"}, Arg: "interval_and_message", Kind: ArgText, Syntax: "<interval or cron> <message>", Scope: ScopeConversation,
		Help: "send a message again and again", ArgHelp: "An interval (1h) or cron expression (0 9 * * 1-5, @daily), then the message"},
	{Run: cmdSchedules, Name: CmdSchedules, Words: []string{"schedules"}, Scope: ScopeConversation, Help: "the messages scheduled here"},
	{Run: cmdUnschedule, Name: CmdUnschedule, Words: []string{"unschedule"}, Arg: "number", Kind: ArgWord, Scope: ScopeConversation,
		Help: "remove a scheduled message", ArgHelp: "Its number in /schedules"},
	{Run: cmdRunners, Name: CmdRunners, Words: []string{"runners"}, Scope: ScopeHere,
		Help: "the machines turns can run on (/<plugin> start name:path)"},
	{Run: cmdLimits, Name: CmdLimits, Words: []string{"limits"}, Scope: ScopeHere,
		Help: "each CLI's usage windows and when they reset"},
	{Run: cmdStop, Name: CmdStop, Words: []string{"stop"}, Scope: ScopeConversation, Help: "cancel the running turn"},
	{Run: cmdNow, Name: CmdNow, Words: []string{"now"}, Arg: "id", Kind: ArgWord, Scope: ScopeConversation,
		Help: "stop the running turn and run a waiting message", ArgHelp: "The waiting message's id"},
	{Run: cmdBusyMessage, Name: CmdSteer, Words: []string{"steer"}, Arg: "message", Kind: ArgText, Scope: ScopeConversation,
		Help: "add a message to the running turn, or else the next", ArgHelp: "The message for the agent"},
	{Run: cmdBusyMessage, Name: CmdQueue, Words: []string{"queue"}, Arg: "message", Kind: ArgText, Scope: ScopeConversation,
		Help: "send a message after the running turn", ArgHelp: "The message for the agent"},
	{Run: cmdAnswer, Answer: true, Name: CmdAllow, Words: []string{"allow"}, Arg: "always", Kind: ArgText, Optional: true,
		Scope: ScopeConversation, Help: "allow the tool call the agent asks about",
		ArgHelp: "\"always\" to allow this tool for the rest of the conversation"},
	{Run: cmdAnswer, Answer: true, Name: CmdAnswer, Words: []string{"answer"}, Arg: "answer", Kind: ArgText,
		Scope: ScopeConversation, Help: "answer the agent's question",
		ArgHelp: "An option's number, or your own words"},
	{Run: cmdAnswer, Answer: true, Name: CmdDeny, Words: []string{"deny"}, Arg: "reason", Kind: ArgText, Optional: true,
		Scope: ScopeConversation, Help: "deny the tool call the agent asks about",
		ArgHelp: "Why not, told to the agent"},
	{Run: cmdEnd, Changes: true, Name: CmdEnd, Words: []string{"conversation", "end"}, Scope: ScopeConversation,
		Help: "end the conversation (the CLI keeps its history)"},
	{Run: cmdEnd, Changes: true, Name: CmdEnd, Words: []string{"end"}, Scope: ScopeConversation, Alias: true,
		Help: "end this conversation (its history stays with the CLI)"},
	{Run: cmdHelp, Name: CmdHelp, Words: []string{"help"}, Help: "list the commands"},
}

// everyPlugins are the entries every plugin has, which /help lists once.
var everyPlugins = []CommandName{CmdStart, CmdConversations, CmdResume, CmdStartNow}

// pluginCommands are p's entries: those of every plugin, whose help does
// not name it (the command does), then its own.
func pluginCommands(p Plugin) []CommandSpec {
	id := p.ID()
	specs := []CommandSpec{
		{Run: cmdStart, Changes: true, Rewarm: true, Name: CmdStart, Words: []string{id, "start"}, Plugin: id, Arg: "workdir", Kind: ArgText, Optional: true,
			Suggest: SuggestWorkdir, Scope: ScopeNewConversation, Help: "start a conversation (--worktree [name]: in a worktree of its own)",
			ArgHelp: "Working directory (default: the bot's default); add --worktree [name] for a worktree of its own"},
		{Run: cmdConversations, Name: CmdConversations, Words: []string{id, "conversations"}, Plugin: id,
			Help: "list past conversations here"},
		{Run: cmdResume, Changes: true, Rewarm: true, ShowsBare: true, Name: CmdResume, Words: []string{id, "resume"}, Plugin: id, Arg: "id", Kind: ArgWord,
			Suggest: SuggestResumeID, Scope: ScopeNewConversation, Help: "continue a past conversation",
			ArgHelp: "Conversation id (or the start of it)"},
		{Run: cmdStartNow, Changes: true, Name: CmdStartNow, Words: []string{id, "now"}, Plugin: id, Arg: "schedule", Kind: ArgWord,
			Scope: ScopeConversation, Help: "send now, in a new conversation, a message waiting for a usage window",
			ArgHelp: "The continuation's number in /schedules"},
	}
	if cp, ok := p.(CommandProvider); ok {
		for _, s := range cp.Commands() {
			s.Words = append([]string{id}, s.Words...)
			s.Plugin, s.Run = id, cmdPlugin
			specs = append(specs, s)
		}
	}
	return specs
}

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

// command runs c's message as a slash command and records it. An answer
// to a question keeps c.done until the turn ends (c.tookDone).
func (r *Router) command(c *call) {
	started := r.clock.Now()
	m := c.m
	rec := Record{Kind: RecordCommand, ID: c.id, Time: started, Key: m.Key, Author: m.Author(), Text: m.Text, Outcome: OutcomeOK}
	cmd, spec, err := r.cfg.Plugins.Commands().parse(m.Text)
	if err == nil {
		c.cmd, c.usage = cmd, spec.Usage()
		rec.Command = cmd.line()
		err = c.run(spec)
	}
	rec.Key = c.m.Key // a /start may have moved it to a thread of its own
	if conv, ok := r.convs.Get(c.m.Key); ok {
		rec.Plugin, rec.Workdir, rec.SessionID = conv.Plugin, conv.Shown(conv.Workdir), conv.SessionID
	}
	if err != nil {
		rec.Outcome = OutcomeError
		r.replyError(c.a, c.m.Target(), c.id, err)
	}
	rec.Duration = r.clock.Now().Sub(started)
	r.obs.Record(rec)
}

// run applies s's rules around its handler: who may answer, that a
// command which moves the conversation waits for its turns, the warm CLI
// of a conversation moved, and the handler's answer sent.
func (c *call) run(s CommandSpec) error {
	r := c.r
	if s.Answer {
		// A person's schedule sends commands, never answers: it was not
		// written with the question in front of them.
		if c.may.answer != nil {
			return c.may.answer
		}
	} else {
		r.logger.Info("command", "id", c.id, "conversation", c.m.Key.String(), "command", string(c.cmd.Name), "plugin", c.cmd.Plugin)
	}
	moves := s.Changes && !(s.ShowsBare && c.cmd.Arg == "")
	if moves {
		if why := r.busy(c.m.Key); why != "" {
			return Errorf("%s", why)
		}
	}
	if s.NeedsConversation && !c.hasConv {
		r.reply(c.a, c.m.Target(), r.noConversation())
		return nil
	}
	if s.Run == nil {
		return Errorf("command %q is not implemented", c.cmd.Name)
	}
	text, err := s.Run(c)
	if err != nil {
		return err
	}
	if moves && s.Rewarm {
		c.rewarm()
	}
	if text != "" {
		r.reply(c.a, c.m.Target(), text)
	}
	return nil
}

// rewarm drops the warm CLI of c's conversation as it was and starts the
// one of the session (or workdir) it moved to.
func (c *call) rewarm() {
	c.r.warm.drop(c.m.Key)
	c.r.warmUp(c.m, c.may)
}
