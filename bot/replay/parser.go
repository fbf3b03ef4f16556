package replay

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/claude"
	"github.com/jake-bot/jake-bot/plugins/codex"
	"github.com/jake-bot/jake-bot/plugins/configured"
	"github.com/jake-bot/jake-bot/plugins/gemini"
)

// StreamParser turns a plugin's recorded output into the events the plugin
// emits while its CLI runs, with no process. Each plugin gets an adapter.
type StreamParser interface {
	// Parse reads the whole stream, emitting events in order, and returns
	// the turn's result, or nil when the stream carries none.
	Parse(r io.Reader, emit func(core.Event)) (*core.TurnResult, error)
}

// builtins are the parsers of the built-in plugins, by plugin id.
var builtins = map[string]func() StreamParser{
	"claude": func() StreamParser { return claudeParser{} },
	"codex":  func() StreamParser { return codexParser{} },
	"gemini": func() StreamParser { return geminiParser{} },
}

// Builtins returns the ids of the built-in plugins that can be replayed.
func Builtins() []string { return slices.Sorted(maps.Keys(builtins)) }

// Parser returns the parser for plugin id: a built-in plugin's, or the
// mapping of a plugin configured in specs.
func Parser(id string, specs []configured.Spec) (StreamParser, error) {
	if f, ok := builtins[id]; ok {
		return f(), nil
	}
	for _, s := range specs {
		if s.ID == id {
			return configuredParser{configured.New(s, nil)}, nil
		}
	}
	known := Builtins()
	for _, s := range specs {
		known = append(known, s.ID)
	}
	return nil, fmt.Errorf("no plugin %q to replay (known: %s; configured plugins come from --plugins-file or PLUGINS_FILE)", id, strings.Join(known, ", "))
}

// claudeParser reads Claude Code's stream-json with the plugin's parser.
type claudeParser struct{}

func (claudeParser) Parse(r io.Reader, emit func(core.Event)) (*core.TurnResult, error) {
	p := claude.NewParser(emit)
	err := claude.ReadStream(r, p, emit)
	res := p.Result()
	if res != nil && res.ResumeToken == "" {
		res.ResumeToken = p.SessionID()
	}
	return res, err
}

// configuredParser reads a configured CLI's output through its mode and
// mapping.
type configuredParser struct{ p *configured.Plugin }

func (c configuredParser) Parse(r io.Reader, emit func(core.Event)) (*core.TurnResult, error) {
	out, err := c.p.ReadOutput(r, emit)
	return &core.TurnResult{ResumeToken: out.Session, IsError: out.Errors > 0}, err
}

// codexParser reads codex exec --json, or a recorded `codex app-server`
// session (JSON-RPC, told apart by its first message), with the plugin's
// parser.
type codexParser struct{}

func (codexParser) Parse(r io.Reader, emit func(core.Event)) (*core.TurnResult, error) {
	br := bufio.NewReader(r)
	head, _ := br.Peek(64)
	if bytes.HasPrefix(bytes.TrimSpace(head), []byte(`{"id":`)) || bytes.Contains(head, []byte(`"method":`)) {
		p := codex.NewParser(askedAsStatus(emit))
		err := codex.ReadAppServer(br, p)
		return p.Result(), err
	}
	p := codex.NewParser(emit)
	err := codex.ReadStream(br, p)
	return p.Result(), err
}

// askedAsStatus shows a recorded question as a status line: a replay has
// nobody to answer it.
func askedAsStatus(emit func(core.Event)) func(core.Event) {
	return func(ev core.Event) {
		if ev.Kind == core.EventQuestion && ev.Question != nil {
			ev = core.BlockEvent(core.ResponseBlock{Kind: core.BlockStatus, Text: "Asked to allow " + ev.Question.Tool + ": " + ev.Question.Summary})
		}
		emit(ev)
	}
}

// geminiParser reads gemini's stream-json, or a recorded `gemini --acp`
// session, with the plugin's parser.
type geminiParser struct{}

func (geminiParser) Parse(r io.Reader, emit func(core.Event)) (*core.TurnResult, error) {
	br := bufio.NewReader(r)
	if head, _ := br.Peek(64); bytes.Contains(head, []byte(`"jsonrpc"`)) {
		// A recorded `gemini --acp` session.
		return gemini.ReadACP(br, askedAsStatus(emit))
	}
	p := gemini.NewParser(emit)
	err := gemini.ReadStream(br, p)
	return p.Result(), err
}
