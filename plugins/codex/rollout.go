package codex

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/internal/diffs"
)

// `codex exec --json` reports a file change's paths and kinds, not its
// diff. Codex records the change whole in the thread's rollout, the file
// it resumes the thread from: an item_completed event of a FileChange,
// with each file's unified diff (or its content, for a file added or
// deleted) and where a file was moved. Once the turn is over the rollout
// is complete, and the changes shown without a diff get theirs from it:
// exactly what Codex applied, which a git diff against the turn's start
// could not tell from the user's own edits, nor see outside a repository.

// rollouts are the rollout files of thread.
func (p *Plugin) rollouts(thread string) []string {
	if thread == "" || strings.ContainsAny(thread, `/\*?[`) {
		return nil
	}
	home, err := p.home()
	if err != nil {
		return nil
	}
	files, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "*", "*", "rollout-*"+thread+".jsonl"))
	return files
}

// recordedChanges reads the file changes a rollout recorded, in order.
func recordedChanges(path string) [][]change {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out [][]change
	lr := cliproc.NewLineReader(f, cliproc.MaxLine)
	for {
		line, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil || !bytes.Contains(line, []byte(`"FileChange"`)) {
			continue
		}
		if cs, ok := fileChangeRecord(line); ok {
			out = append(out, cs)
		}
	}
}

// fileChangeRecord reads one rollout line of a completed FileChange.
func fileChangeRecord(line []byte) ([]change, bool) {
	var r struct {
		Payload struct {
			Type string `json:"type"`
			Item struct {
				Type    string `json:"type"`
				Changes map[string]struct {
					Type        string  `json:"type"`
					Content     string  `json:"content"`
					UnifiedDiff string  `json:"unified_diff"`
					MovePath    *string `json:"move_path"`
				} `json:"changes"`
			} `json:"item"`
		} `json:"payload"`
	}
	if json.Unmarshal(line, &r) != nil || r.Payload.Type != "item_completed" || r.Payload.Item.Type != "FileChange" {
		return nil, false
	}
	var cs []change
	for path, c := range r.Payload.Item.Changes {
		ch := change{Path: path, Kind: c.Type, Diff: c.UnifiedDiff}
		switch c.Type {
		case "add":
			ch.Diff = diffs.NewFile(c.Content)
		case "delete":
			ch.Diff = diffs.DeletedFile(c.Content)
		}
		if c.MovePath != nil {
			ch.MovePath = *c.MovePath
		}
		cs = append(cs, ch)
	}
	return cs, true
}

// execTurn is a turn of `codex exec --json`: its parser, and once the
// turn is over, the diffs of its file changes from the thread's rollout.
type execTurn struct {
	*Parser
	p *Plugin
}

func (e execTurn) Outcome() cliproc.Outcome {
	o := e.Parser.Outcome()
	if e.needsDiffs() {
		for _, path := range e.p.rollouts(o.Session) {
			e.Patched(recordedChanges(path))
		}
	}
	return o
}

// fileChangeBlock is one changed file as a diff block.
func (p *Parser) fileChangeBlock(it *item, i int, c change) core.ResponseBlock {
	path := p.relPath(c.Path)
	if c.MovePath != "" {
		path += " → " + p.relPath(c.MovePath)
	}
	return core.ResponseBlock{Kind: core.BlockDiff, ID: fmt.Sprintf("%s/%d", it.ID, i), Path: path, Action: c.Kind, Text: c.Diff}
}
