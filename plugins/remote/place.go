package remote

import (
	"context"

	"github.com/jake-bot/jake-bot/core"
)

// runnerPlace is a runner's machine, reached through the gateway: each
// method is a request the runner checks against its own roots.
type runnerPlace struct {
	g      *Gateway
	runner string
}

// Place is runner's machine.
func (g *Gateway) Place(runner string) core.Place { return runnerPlace{g: g, runner: runner} }

// Plugin is pluginID as it runs on the runner for m's author.
func (p runnerPlace) Plugin(pluginID string, m core.Message, admin bool) (core.Plugin, error) {
	return p.g.Plugin(p.runner, pluginID, m, admin)
}

// Resolve asks the runner to resolve path within the user's roots there.
func (p runnerPlace) Resolve(ctx context.Context, path string, admin bool) (string, error) {
	return p.g.Resolve(ctx, p.runner, path, admin)
}

// Workdir is the stored workdir as it is: the runner checks it against
// the user's roots there with every request that uses it.
func (p runnerPlace) Workdir(_ context.Context, stored string, _ bool) (string, error) {
	return stored, nil
}
