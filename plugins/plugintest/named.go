package plugintest

import (
	"context"

	"github.com/jake-bot/jake-bot/core"
)

// Named is a plugin that only has a name: for tests of what is built from
// the plugins (command tables, menus) rather than of turns, which it
// refuses.
type Named struct {
	PluginID, PluginName string
}

var _ core.Plugin = Named{}

func (p Named) ID() string { return p.PluginID }

func (p Named) Name() string {
	if p.PluginName == "" {
		return p.PluginID
	}
	return p.PluginName
}

func (p Named) Run(context.Context, core.Turn, func(core.Event)) (core.TurnResult, error) {
	return core.TurnResult{}, core.Errorf("%s runs no turns in this test", p.PluginID)
}

func (p Named) Conversations(context.Context, string) ([]core.ConversationInfo, error) {
	return nil, nil
}
