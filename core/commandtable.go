// The command table's entries: each command's words, its argument, where
// it acts, its help, its rules and its handler (Run), a function over the
// message's call in the file of its concern. Parsing, /help and every
// platform's menu follow from them (command.go).

package core

// sharedCommands are the commands of every plugin's conversations, in
// the order /help lists them after the plugins' own.
var sharedCommands = []CommandSpec{
	{Run: cmdResume, Changes: true, Rewarm: true, ShowsBare: true, Name: CmdResume, Words: []string{"resume"}, Arg: "id", Kind: ArgWord, Optional: true,
		Scope: ScopeConversation, Help: "list or resume conversations of the current plugin",
		ArgHelp: "Conversation id (or the start of it); none lists them"},
	{Run: cmdStatus, Name: CmdStatus, Words: []string{"status"}, Arg: "all", Kind: ArgFlag,
		Scope: ScopeConversation, Help: "show this conversation", ArgHelp: "Every active conversation (admins only)"},
	{Run: cmdCost, Name: CmdCost, Words: []string{"cost"}, Arg: "all", Kind: ArgFlag,
		Scope: ScopeConversation, Help: "what this conversation and you spent today", ArgHelp: "Everyone's spend today (admins only)"},
	{Run: cmdWorkdir, Name: CmdWorkdir, Words: []string{"workdir"}, Scope: ScopeConversation,
		Help: "show the working directory"},
	{Run: cmdSetWorkdir, Changes: true, Rewarm: true, Name: CmdWorkdirSet, Words: []string{"workdir", "set"}, Arg: "path", Kind: ArgText,
		Suggest: SuggestWorkdir, Scope: ScopeConversation, Help: "change the working directory",
		ArgHelp: "Directory under the allowed roots"},
	{Run: cmdModel, NeedsConversation: true, Name: CmdModel, Words: []string{"model"}, Arg: "name", Kind: ArgWord, Optional: true,
		Scope: ScopeConversation, Help: "show or set the model (from the next turn)",
		ArgHelp: "A model the CLI knows, or \"default\""},
	{Run: cmdMode, NeedsConversation: true, Name: CmdMode, Words: []string{"mode"}, Arg: "name", Kind: ArgWord, Optional: true,
		Suggest: SuggestMode, Scope: ScopeConversation, Help: "show or set the permission mode (from the next turn)",
		ArgHelp: "ask, auto, default, or one of the CLI's modes (/mode lists them)"},
	{Run: cmdFile, NeedsConversation: true, Name: CmdFile, Words: []string{"file"}, Arg: "path", Kind: ArgText, Scope: ScopeConversation,
		Help: "send a file from the workdir", ArgHelp: "The file's path, from the workdir"},
	{Run: cmdDiff, NeedsConversation: true, Name: CmdDiff, Words: []string{"diff"}, Scope: ScopeConversation,
		Help: "show what the conversation changed"},
	{Run: cmdMerge, Changes: true, NeedsConversation: true, Name: CmdMerge, Words: []string{"merge"}, Scope: ScopeConversation,
		Help: "commit the worktree's changes and merge its branch"},
	{Run: cmdAsk, NeedsConversation: true, Name: CmdAsk, Words: []string{"ask"}, Arg: "plugin_and_question", Kind: ArgText, Scope: ScopeConversation,
		Help:    "ask another agent, here, without switching to it (read-only unless --write)",
		ArgHelp: "A plugin (codex), --write to let it edit files, then your question"},
	{Run: cmdReview, NeedsConversation: true, Name: CmdReview, Words: []string{"review"}, Arg: "plugin", Kind: ArgWord, Optional: true, Scope: ScopeConversation,
		Help:    "have another agent review, read-only, what changed since the last review",
		ArgHelp: "The reviewer (default: the pairing's, or another plugin that can be read-only)"},
	// The buttons under a review's findings; typed where a platform has
	// none, so listed nowhere.
	{Run: cmdReviewFix, NeedsConversation: true, Alias: true, Name: CmdReviewFix, Words: []string{"review", "fix"}, Arg: "id", Kind: ArgWord, Scope: ScopeConversation,
		Help: "send a review's findings to the conversation's agent as its next turn", ArgHelp: "The findings' id"},
	{Run: cmdReviewDismiss, NeedsConversation: true, Alias: true, Name: CmdReviewDismiss, Words: []string{"review", "dismiss"}, Arg: "id", Kind: ArgWord, Scope: ScopeConversation,
		Help: "drop a review's findings", ArgHelp: "The findings' id"},
	{Run: cmdPair, NeedsConversation: true, Name: CmdPair, Words: []string{"pair"}, Arg: "plugin_and_rounds", Kind: ArgText, Optional: true, Scope: ScopeConversation,
		Help:    "pair another agent as reviewer after every turn that changes files, or off",
		ArgHelp: "A plugin and how many rounds (codex 2), or off; none shows the pairing"},
	{Run: cmdSchedule, NeedsConversation: true, Name: CmdAt, Words: []string{"at"}, Arg: "when_and_message", Kind: ArgText, Scope: ScopeConversation,
		Help: "send a message later, as if you typed it then", ArgHelp: "When (30m, 2h, 09:00, 2026-12-01T09:00:00Z), then the message"},
	{Run: cmdSchedule, NeedsConversation: true, Name: CmdEvery, Words: []string{"every"}, Arg: "interval_and_message", Kind: ArgText, Scope: ScopeConversation,
		Help: "send a message again and again", ArgHelp: "An interval (1h) or cron expression (0 9 * * 1-5, @daily), then the message"},
	{Run: cmdSchedules, Name: CmdSchedules, Words: []string{"schedules"}, Scope: ScopeConversation, Help: "list the messages scheduled here"},
	{Run: cmdUnschedule, Name: CmdUnschedule, Words: []string{"unschedule"}, Arg: "number", Kind: ArgWord, Scope: ScopeConversation,
		Help: "remove a scheduled message", ArgHelp: "Its number in /schedules"},
	{Run: cmdRunners, Name: CmdRunners, Words: []string{"runners"}, Scope: ScopeHere,
		Help: "list the machines turns can run on (/<plugin> start name:path)"},
	{Run: cmdLimits, Name: CmdLimits, Words: []string{"limits"}, Scope: ScopeHere,
		Help: "each CLI's usage windows: how much is used, when each resets"},
	{Run: cmdStop, Name: CmdStop, Words: []string{"stop"}, Scope: ScopeConversation, Help: "cancel the running turn"},
	{Run: cmdNow, Name: CmdNow, Words: []string{"now"}, Arg: "id", Kind: ArgWord, Scope: ScopeConversation,
		Help: "run a waiting message next, interrupting the running turn", ArgHelp: "The waiting message's id"},
	{Run: cmdBusyMessage, Name: CmdSteer, Words: []string{"steer"}, Arg: "message", Kind: ArgText, Scope: ScopeConversation,
		Help: "add a message to the running turn, where its CLI can take one (else it waits)", ArgHelp: "The message for the agent"},
	{Run: cmdBusyMessage, Name: CmdQueue, Words: []string{"queue"}, Arg: "message", Kind: ArgText, Scope: ScopeConversation,
		Help: "send a message once the running turn ends", ArgHelp: "The message for the agent"},
	{Run: cmdAnswer, Answer: true, Name: CmdAllow, Words: []string{"allow"}, Arg: "always", Kind: ArgText, Optional: true,
		Scope: ScopeConversation, Help: "allow the tool call the agent asks about",
		ArgHelp: "\"always\" to allow this tool for the rest of the conversation"},
	{Run: cmdAnswer, Answer: true, Name: CmdAnswer, Words: []string{"answer"}, Arg: "answer", Kind: ArgText,
		Scope: ScopeConversation, Help: "answer the agent's question: an option's number, or your own words",
		ArgHelp: "An option's number, or your own words"},
	{Run: cmdAnswer, Answer: true, Name: CmdDeny, Words: []string{"deny"}, Arg: "reason", Kind: ArgText, Optional: true,
		Scope: ScopeConversation, Help: "deny the tool call the agent asks about",
		ArgHelp: "Why not, told to the agent"},
	{Run: cmdEnd, Changes: true, Name: CmdEnd, Words: []string{"conversation", "end"}, Scope: ScopeConversation,
		Help: "end the conversation (its history stays with the CLI)"},
	{Run: cmdEnd, Changes: true, Name: CmdEnd, Words: []string{"end"}, Scope: ScopeConversation, Alias: true,
		Help: "end this conversation (its history stays with the CLI)"},
	{Run: cmdHelp, Name: CmdHelp, Words: []string{"help"}, Help: "list the commands"},
}

func pluginCommands(p Plugin) []CommandSpec {
	id, name := p.ID(), p.Name()
	specs := []CommandSpec{
		{Run: cmdStart, Changes: true, Rewarm: true, Name: CmdStart, Words: []string{id, "start"}, Plugin: id, Arg: "workdir", Kind: ArgText, Optional: true,
			Suggest: SuggestWorkdir, Scope: ScopeNewConversation, Help: "start a " + name + " conversation (--worktree [name]: in a git worktree of its own)",
			ArgHelp: "Working directory (default: the bot's default); add --worktree [name] for a worktree of its own"},
		{Run: cmdConversations, Name: CmdConversations, Words: []string{id, "conversations"}, Plugin: id,
			Help: "list past " + name + " conversations here"},
		{Run: cmdResume, Changes: true, Rewarm: true, ShowsBare: true, Name: CmdResume, Words: []string{id, "resume"}, Plugin: id, Arg: "id", Kind: ArgWord,
			Suggest: SuggestResumeID, Scope: ScopeNewConversation, Help: "continue a past " + name + " conversation",
			ArgHelp: "Conversation id (or the start of it)"},
		{Run: cmdStartNow, Changes: true, Name: CmdStartNow, Words: []string{id, "now"}, Plugin: id, Arg: "schedule", Kind: ArgWord,
			Scope: ScopeConversation, Help: "send a message waiting for a usage window's reset now, to a new " + name + " conversation here",
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
