// Package claude is the Claude Code plugin. Each turn runs
// `claude -p --output-format stream-json --verbose --include-partial-messages`
// in the conversation's workdir, resuming the previous session by id, on
// the turn engine (cliproc), and turns the CLI's JSON lines into core
// events (parse.go, free of any process handling). A turn whose chat
// answers questions speaks Claude Code's control protocol on its stdin
// (interactive.go). Past conversations are listed from the CLI's own
// transcripts under ~/.claude/projects (history.go). FORMAT.md lists what
// the pinned version (2.1.332) changed in the output, and where the parser
// minds it (plan.go: the plan an ExitPlanMode request asks to approve).
//
// Behind the bot's sandbox (cliproc.Sandbox) Claude Code sees
// ~/.claude.json (created empty when missing, which it accepts) and
// ~/.claude, whose projects folder shows only the workdir's project. As
// root it refuses bypassPermissions; inside bwrap it runs as uid 65534.
//
// A read-only turn (core.Turn.ReadOnly, readonly.go) runs in plan mode
// with only the Read, Grep and Glob tools (--tools) and the writers denied
// (--disallowedTools), after CLAUDE_ARGS: plan mode alone asks before a
// Write (which an approval wrote), runs Bash through a safety check of its
// own and leaves on an approved ExitPlanMode. A call of a tool left out
// is answered "No such tool available: Write. Write is disabled for this
// session, in subagents as well as here." (plugins/LIVE-TURNS.md).
package claude
