package claude

import (
	"encoding/json"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/internal/diffs"
)

// editResult is what Write and Edit return (tool_use_result).
type editResult struct {
	Type            string  `json:"type"` // Write: create or update
	FilePath        string  `json:"filePath"`
	Content         string  `json:"content"`
	OldString       string  `json:"oldString"`
	NewString       string  `json:"newString"`
	OriginalFile    *string `json:"originalFile"`
	StructuredPatch []struct {
		OldStart int      `json:"oldStart"`
		OldLines int      `json:"oldLines"`
		NewStart int      `json:"newStart"`
		NewLines int      `json:"newLines"`
		Lines    []string `json:"lines"`
	} `json:"structuredPatch"`
}

// fileDiff turns a file edit's result into a diff block: the CLI's own
// patch, the whole content of a new file, or the replaced text.
func (p *Parser) fileDiff(tool string, raw json.RawMessage) (core.ResponseBlock, bool) {
	if tool != "Write" && tool != "Edit" && tool != "MultiEdit" || len(raw) == 0 || raw[0] != '{' {
		return core.ResponseBlock{}, false
	}
	var r editResult
	if json.Unmarshal(raw, &r) != nil || r.FilePath == "" {
		return core.ResponseBlock{}, false
	}
	b := core.ResponseBlock{Kind: core.BlockDiff, Path: diffs.RelPath(p.Workdir, r.FilePath), Action: "update"}
	switch {
	case r.Type == "create" || (tool == "Write" && r.OriginalFile == nil):
		b.Action, b.Text = "add", diffs.NewFile(r.Content)
	case len(r.StructuredPatch) > 0:
		hunks := make([]diffs.Hunk, len(r.StructuredPatch))
		for i, h := range r.StructuredPatch {
			hunks[i] = diffs.Hunk{OldStart: h.OldStart, OldLines: h.OldLines, NewStart: h.NewStart, NewLines: h.NewLines, Lines: h.Lines}
		}
		b.Text = diffs.FromHunks(hunks)
	case r.OldString != "" || r.NewString != "":
		b.Text = diffs.Replace(r.OldString, r.NewString)
	}
	return b, true
}
