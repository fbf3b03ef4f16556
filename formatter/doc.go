// Package formatter renders core.ResponseBlocks as the text of chat
// messages, one style per platform, and splits long output into messages
// that each fit a platform's limit without breaking a code block or a
// character.
package formatter
