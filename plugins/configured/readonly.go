package configured

import (
	"slices"

	"github.com/jake-bot/jake-bot/core"
)

var _ core.ReadOnlyPlugin = (*Plugin)(nil)

// knownReadOnlyMode is the mode id an ACP agent that announces it is taken
// to read in without writing, unless its entry names another
// (read_only_mode): Gemini CLI's ("Read-only mode") and Qwen Code's
// ("Analyze only, do not modify files or execute commands"). In a
// read-only turn every permission the agent asks for is refused besides
// (acp.Options.ReadOnlyMode), so such a mode cannot write by asking.
const knownReadOnlyMode = "plan"

// ReadOnlyMeans says how a read-only turn keeps the agent from writing:
// its read-only mode, every approval refused. Only a mode acp entry can
// have one: the one it names (read_only_mode), else plan once the agent
// has announced it (after its first turn); otherwise ok is false.
func (p *Plugin) ReadOnlyMeans() (string, bool) {
	mode, ok := p.readOnlyMode()
	if !ok {
		return "", false
	}
	return p.spec.Name + "'s " + mode + " mode, every approval refused", true
}

// readOnlyMode is the agent's read-only mode; see ReadOnlyMeans.
func (p *Plugin) readOnlyMode() (string, bool) {
	switch {
	case p.spec.Mode != ModeACP:
		return "", false
	case p.spec.ReadOnlyMode != "":
		return p.spec.ReadOnlyMode, true
	}
	known := slices.ContainsFunc(p.Modes(), func(m core.Mode) bool { return m.Name == knownReadOnlyMode })
	return knownReadOnlyMode, known
}
