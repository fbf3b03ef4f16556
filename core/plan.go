package core

import (
	"fmt"
	"strings"
)

// PlanStatus is where a task of the agent's plan stands.
type PlanStatus string

const (
	PlanPending    PlanStatus = "pending"
	PlanInProgress PlanStatus = "in_progress"
	PlanDone       PlanStatus = "completed"
)

// PlanItem is one task of the agent's plan (Claude's task tools, Codex's
// plan updates, ACP's plan).
type PlanItem struct {
	Text   string
	Status PlanStatus
}

// planID is the ID of a reply's plan block: each update replaces it.
const planID = "plan"

// PlanBlock is the plan as a checklist block: ☑ done, ▶ in progress,
// ☐ to do, under a line that counts what is done.
func PlanBlock(items []PlanItem) ResponseBlock {
	var b strings.Builder
	done := 0
	for _, it := range items {
		if it.Status == PlanDone {
			done++
		}
	}
	fmt.Fprintf(&b, "📋 Plan: %d of %d done", done, len(items))
	for _, it := range items {
		mark := "☐"
		switch it.Status {
		case PlanDone:
			mark = "☑"
		case PlanInProgress:
			mark = "▶"
		}
		b.WriteString("\n" + mark + " " + Shorten(oneLine(it.Text), 200))
	}
	return ResponseBlock{Kind: BlockPlan, ID: planID, Text: b.String()}
}

// PlanStatusOf reads a status as the CLIs write it: pending, in_progress
// or inProgress, completed; anything else is pending.
func PlanStatusOf(s string) PlanStatus {
	switch strings.ToLower(strings.ReplaceAll(s, "_", "")) {
	case "inprogress":
		return PlanInProgress
	case "completed", "done":
		return PlanDone
	}
	return PlanPending
}
