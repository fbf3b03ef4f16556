package core

import (
	"fmt"
	"strings"
)

// cmdAsk answers /ask <plugin> [--write] <text>: a turn of another agent
// in the conversation's workdir, without switching the conversation to
// it. Its session is the conversation's helper's, continued by the next
// /ask of the same plugin; it reads but may not write unless --write.
func cmdAsk(c *call) (string, error) {
	id, write, text := parseAsk(c.cmd.Arg)
	p, err := c.helperPlugin(id)
	if err != nil {
		return "", err
	}
	if text == "" {
		return "", usageError(c.usage)
	}
	how := "asked"
	if write {
		how = "asked, may write"
	} else if _, err := readOnlyMeans(p, fmt.Sprintf("/ask %s --write … lets it write", id)); err != nil {
		return "", err
	}
	c.runSide(&sideTurn{helper: id, readOnly: !write, label: fmt.Sprintf("🤝 %s (%s):", p.Name(), how)}, text)
	return "", nil
}

// parseAsk splits /ask's argument: the plugin, --write (anywhere before
// the text), and the text.
func parseAsk(arg string) (plugin string, write bool, text string) {
	plugin, rest := cutWord(arg)
	for {
		w, after := cutWord(rest)
		if w != "--write" {
			break
		}
		write, rest = true, after
	}
	return strings.ToLower(plugin), write, strings.TrimSpace(rest)
}

// helperPlugin is the plugin id as a helper of c's conversation: a
// configured plugin other than the conversation's own.
func (c *call) helperPlugin(id string) (Plugin, error) {
	r := c.r
	if id == c.conv.Plugin {
		return nil, Errorf("%s is this conversation's own agent: write to it without /ask", r.cfg.Plugins.name(id))
	}
	if c.conv.Runner != "" {
		// Both agents work on the conversation's machine.
		return c.place().Plugin(id, c.m)
	}
	p, ok := r.cfg.Plugins.Get(id)
	if !ok {
		return nil, Errorf("no plugin %q here: the plugins are %s", id, joinIDs(r.cfg.Plugins.IDs()))
	}
	return p, nil
}
