package claude

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
)

// planSource finds the plan an ExitPlanMode request asks the chat to
// approve. Claude Code 2.1.332 sends that request with an empty input: its
// model writes the plan to a file under the config dir (plans/<slug>.md,
// with Write and Edit) and calls ExitPlanMode without one, and a plan the
// model still puts in the call's input is only on the assistant line.
type planSource struct {
	inputs map[string]string // ExitPlanMode tool_use id -> the plan in its input
	file   string            // the plan file last written
}

// maxPlan bounds what is read of a plan file; the chat shows its start.
const maxPlan = 64 << 10

// toolUse notes a tool call of the model's; dir is where the CLI keeps
// plan files (empty: none is read, as when a recording is replayed).
func (s *planSource) toolUse(dir, name, id string, input json.RawMessage) {
	var in struct {
		Plan     string `json:"plan"`
		FilePath string `json:"file_path"`
	}
	_ = json.Unmarshal(input, &in)
	switch {
	case name == "ExitPlanMode" && in.Plan != "":
		if s.inputs == nil {
			s.inputs = map[string]string{}
		}
		s.inputs[id] = in.Plan
	case (name == "Write" || name == "Edit") && isPlanFile(dir, in.FilePath):
		s.file = in.FilePath
	}
}

// isPlanFile reports whether path is a plan file, one in dir: the model's
// tool calls name the file, and no other is read.
func isPlanFile(dir, path string) bool {
	return dir != "" && filepath.IsAbs(path) && filepath.Ext(path) == ".md" &&
		filepath.Dir(filepath.Clean(path)) == filepath.Clean(dir)
}

// plan returns the plan of an ExitPlanMode request: in its input, else in
// its tool call's, else in the plan file last written.
func (s *planSource) plan(input json.RawMessage, toolUseID string) string {
	var in struct {
		Plan string `json:"plan"`
	}
	if json.Unmarshal(input, &in) == nil && in.Plan != "" {
		return in.Plan
	}
	if plan := s.inputs[toolUseID]; plan != "" {
		return plan
	}
	if s.file == "" {
		return ""
	}
	f, err := os.Open(s.file)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, maxPlan))
	return string(b)
}
