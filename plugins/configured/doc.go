// Package configured runs coding CLIs that jake-bot has no built-in plugin
// for, described in a YAML file (PLUGINS_FILE): the binary, an argument
// template with {message}, {workdir} and {resume} placeholders (each one
// whole argument, never read by a shell), and how to read the output:
//
//   - jsonl: one JSON object per line, mapped by dotted paths to answer
//     text, the session id and errors;
//   - plain: stdout lines stream as text;
//   - pty: the CLI runs in a pseudo-terminal (plugins/cliproc), a terminal
//     emulator turns colours, cursor movement and carriage-return redraws
//     into the text a person would see (Screen), and only settled text is
//     streamed, so spinners do not turn into edits.
//
// Load checks the file at start-up and reports every mistake with its file
// and line. The plugins go into the same core.Registry as the built-in
// ones, so the same commands, timeouts, process-group kill and allow-lists
// apply. README.md documents the file with examples.
//
// Only a mode acp entry can run a read-only turn (core.Turn.ReadOnly,
// readonly.go): in the mode its entry names (read_only_mode), else in the
// plan mode its agent announced; any other refuses it (core.ErrNoReadOnly).
package configured
