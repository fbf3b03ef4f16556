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
	// admin is the user's right, which every request carries.
	admin bool
}

// Place is runner's machine, for a user of rights who.
func (g *Gateway) Place(runner string, who core.Rights) core.Place {
	return runnerPlace{g: g, runner: runner, admin: who.Admin}
}

// Plugin is pluginID as it runs on the runner for m's author.
func (p runnerPlace) Plugin(pluginID string, m core.Message) (core.Plugin, error) {
	return p.g.Plugin(p.runner, pluginID, m, p.admin)
}

// Resolve asks the runner to resolve path within the user's roots there.
func (p runnerPlace) Resolve(ctx context.Context, path string) (string, error) {
	return p.g.Resolve(ctx, p.runner, path, p.admin)
}

// Workdir is the stored workdir as it is: the runner checks it against
// the user's roots there with every request that uses it.
func (p runnerPlace) Workdir(_ context.Context, stored string) (string, error) {
	return stored, nil
}
