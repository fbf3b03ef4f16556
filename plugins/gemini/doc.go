// Package gemini runs Google's Gemini CLI (`gemini -p … -o stream-json`)
// as a jake-bot plugin.
//
// parse.go turns the CLI's JSONL events into core events with no process
// in sight; run.go owns the process (cliproc), one per turn, resuming the
// session by id; history.go lists past sessions from the chat files under
// ~/.gemini/tmp/<project>/chats. The stream format is described in
// /work/shared/CLI-FORMATS.md and recorded from the pinned CLI in
// testdata/gemini at the repository root.
package gemini
