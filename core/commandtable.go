// The command table's entries: each command's words, its argument, where
// it acts, its help, its rules and its handler (Run), a function over the
// message's call in the file of its concern. Parsing, /help and every
// platform's menu follow from them (command.go).

package core

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
