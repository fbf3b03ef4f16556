package codex

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/jake-bot/jake-bot/core"
)

// A thread's rollout is the file Codex resumes it from; its size tells
// whether the thread moved on elsewhere (stampRollout).

// rollouts are the rollout files of thread.
func (p *Plugin) rollouts(thread string) []string {
	if thread == "" || strings.ContainsAny(thread, `/\*?[`) {
		return nil
	}
	sessions, err := p.sessionsDir()
	if err != nil {
		return nil
	}
	files, _ := filepath.Glob(filepath.Join(sessions, "*", "*", "*", "rollout-*"+thread+".jsonl"))
	return files
}

// fileChangeBlock is one changed file as a diff block.
func (p *Parser) fileChangeBlock(it *item, i int, c change) core.ResponseBlock {
	path := p.relPath(c.Path)
	if c.MovePath != "" {
		path += " → " + p.relPath(c.MovePath)
	}
	return core.ResponseBlock{Kind: core.BlockDiff, ID: fmt.Sprintf("%s/%d", it.ID, i), Path: path, Action: c.Kind, Text: c.Diff}
}
