package core

import (
	"fmt"
	"slices"
	"sort"
)

// Registry holds the plugins by ID. It is built once at start-up and only
// read afterwards, so it is safe for concurrent use without locks.
type Registry struct {
	byID     map[string]Plugin
	ids      []string
	commands *Commands
}

// NewRegistry returns a registry of plugins. It fails on a duplicate or
// reserved ID.
func NewRegistry(plugins ...Plugin) (*Registry, error) {
	r := &Registry{byID: make(map[string]Plugin)}
	for _, p := range plugins {
		id := p.ID()
		if _, dup := r.byID[id]; dup {
			return nil, fmt.Errorf("plugin %q registered twice", id)
		}
		if IsReserved(id) {
			return nil, fmt.Errorf("plugin id %q clashes with the /%s command", id, id)
		}
		r.byID[id] = p
		r.ids = append(r.ids, id)
	}
	sort.Strings(r.ids)
	ps := make([]Plugin, len(r.ids))
	for i, id := range r.ids {
		ps[i] = r.byID[id]
	}
	r.commands = NewCommands(ps)
	return r, nil
}

// Commands returns the command table of the registry's plugins.
func (r *Registry) Commands() *Commands { return r.commands }

// Get returns the plugin with the given ID.
func (r *Registry) Get(id string) (Plugin, bool) {
	p, ok := r.byID[id]
	return p, ok
}

// name is the display name of the plugin id, or the id.
func (r *Registry) name(id string) string {
	if p, ok := r.Get(id); ok {
		return p.Name()
	}
	return id
}

// IDs returns the registered plugin IDs, sorted.
func (r *Registry) IDs() []string { return slices.Clone(r.ids) }
