// Package codex runs OpenAI's Codex CLI (`codex exec --json`) as a
// jake-bot plugin.
//
// parse.go turns Codex's JSONL events into core events with no process in
// sight; run.go owns the process (cliproc), one per turn, resuming the
// thread by id; history.go lists past threads from the rollout files under
// $CODEX_HOME/sessions. The stream format is described in
// /work/shared/CLI-FORMATS.md and recorded from the pinned CLI in
// testdata/codex at the repository root.
package codex
