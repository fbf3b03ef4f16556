package core

import (
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
)

// reservedCommands are the first words a plugin ID may not take.
var reservedCommands = []string{"help", "status", "stop", "end", "conversation", "workdir", "resume", "start"}

// IsReserved reports whether id is a command word no plugin ID may take,
// so that plugins configured from a file can be refused with its line.
func IsReserved(id string) bool { return slices.Contains(reservedCommands, strings.ToLower(id)) }

// Command is a parsed slash command.
type Command struct {
	Name CommandName
	// Plugin is the plugin a plugin command names; for a bare /resume it is
	// empty.
	Plugin string
	// Arg is the rest of the line: a workdir, a resume id, "all".
	Arg string
}

// IsCommand reports whether text is meant as a command rather than a turn.
func IsCommand(text string) bool {
	return strings.HasPrefix(strings.TrimSpace(text), "/")
}

// ParseCommand parses a slash command. plugins lists the plugin IDs that
// may lead a command. The error is a UserError with the usage.
func ParseCommand(text string, plugins []string) (Command, error) {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, "/") {
		return Command{}, Errorf("not a command: %q", text)
	}
	word, rest := cutWord(text[1:])
	word = strings.ToLower(word)
	sub, arg := cutWord(rest)
	switch word {
	case "help":
		return Command{Name: CmdHelp}, nil
	case "stop":
		return noArgs(Command{Name: CmdStop}, rest, "/stop")
	case "end":
		return noArgs(Command{Name: CmdEnd}, rest, "/end")
	case "status":
		if rest != "" && rest != "all" {
			return Command{}, usageError("/status [all]")
		}
		return Command{Name: CmdStatus, Arg: rest}, nil
	case "conversation":
		if strings.ToLower(sub) != "end" || arg != "" {
			return Command{}, usageError("/conversation end")
		}
		return Command{Name: CmdEnd}, nil
	case "workdir":
		switch {
		case rest == "":
			return Command{Name: CmdWorkdir}, nil
		case strings.ToLower(sub) == "set" && arg != "":
			return Command{Name: CmdWorkdirSet, Arg: arg}, nil
		}
		return Command{}, usageError("/workdir set <path>")
	case "resume":
		if strings.ContainsAny(rest, " \t") {
			return Command{}, usageError("/resume [id]")
		}
		return Command{Name: CmdResume, Arg: rest}, nil
	}
	for _, id := range plugins {
		if word != id {
			continue
		}
		switch strings.ToLower(sub) {
		case "start":
			return Command{Name: CmdStart, Plugin: id, Arg: arg}, nil
		case "conversations":
			return noArgs(Command{Name: CmdConversations, Plugin: id}, arg, "/"+id+" conversations")
		case "resume":
			if strings.ContainsAny(arg, " \t") {
				return Command{}, usageError("/" + id + " resume <id>")
			}
			return Command{Name: CmdResume, Plugin: id, Arg: arg}, nil
		}
		return Command{}, usageError(fmt.Sprintf("/%[1]s start [workdir] | /%[1]s conversations | /%[1]s resume <id>", id))
	}
	return Command{}, Errorf("unknown command /%s. Try /help", word)
}

func noArgs(c Command, rest, usage string) (Command, error) {
	if rest != "" {
		return Command{}, usageError(usage)
	}
	return c, nil
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

// Help returns the command overview for the given plugins.
func Help(plugins []Plugin) string {
	var b strings.Builder
	b.WriteString("Commands:\n")
	for _, p := range plugins {
		fmt.Fprintf(&b, "/%s start [workdir] — start a %s conversation\n", p.ID(), p.Name())
		fmt.Fprintf(&b, "/%s conversations — list past %s conversations here\n", p.ID(), p.Name())
		fmt.Fprintf(&b, "/%s resume <id> — continue one of them\n", p.ID())
	}
	b.WriteString("/resume [id] — list or resume conversations of the current plugin\n")
	b.WriteString("/status — show this conversation\n")
	b.WriteString("/workdir set <path> — change the working directory\n")
	b.WriteString("/stop — cancel the running turn\n")
	b.WriteString("/conversation end — end the conversation (its history stays with the CLI)\n")
	b.WriteString("Once a conversation is started, just type to chat.")
	return b.String()
}
