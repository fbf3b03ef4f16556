package acp

import (
	"bytes"
	"encoding/json"
)

// Command is one of an agent's own slash commands, as it announces them
// (available_commands_update): a prompt "/name input" runs it.
type Command struct {
	Name, Description string
	// Hint says what input the command takes; empty for none.
	Hint string
}

// commands passes on the commands an agent announced in update params,
// and reports whether params was such an announcement: it may come at
// any time, before the prompt too, and is not the turn's output.
func (a *Client) commands(params json.RawMessage) bool {
	if !bytes.Contains(params, []byte(`"available_commands_update"`)) {
		return false
	}
	cmds, ok := CommandsOf(params)
	if ok && a.opts.Commands != nil {
		a.opts.Commands(cmds)
	}
	return ok
}

// CommandsOf reads a session/update's params announcing the agent's
// commands; ok is false for any other update.
func CommandsOf(params json.RawMessage) (cmds []Command, ok bool) {
	var n struct {
		Update struct {
			Kind     string `json:"sessionUpdate"`
			Commands []struct {
				Name        string `json:"name"`
				Description string `json:"description"`
				Input       struct {
					Hint string `json:"hint"`
				} `json:"input"`
			} `json:"availableCommands"`
		} `json:"update"`
	}
	if json.Unmarshal(params, &n) != nil || n.Update.Kind != "available_commands_update" {
		return nil, false
	}
	cmds = []Command{}
	for _, c := range n.Update.Commands {
		if c.Name != "" {
			cmds = append(cmds, Command{Name: c.Name, Description: c.Description, Hint: c.Input.Hint})
		}
	}
	return cmds, true
}
