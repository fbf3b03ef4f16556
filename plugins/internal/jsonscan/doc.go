// Package jsonscan reads fields out of JSON objects without decoding them
// whole. The coding CLIs print one JSON object per line, and their history
// files start with lines tens of kilobytes long; the plugins need a few
// fields of each. Walking the members and skipping the values they do not
// want is several times faster than encoding/json, and a walk that stops
// at a member never reads what follows it.
//
// The scanner checks only the structure it needs to find a value's end
// (strings, brackets); Complete checks that a line is one whole object.
// Input is never trusted: malformed or cut-off JSON ends a walk quietly
// and never panics.
package jsonscan
