// Package agenttools is jake-bot's own MCP server (issue 31): the tools
// through which a turn's agent reaches its conversation (send_file,
// notify, ask_user, schedule). It listens on 127.0.0.1 over streamable
// HTTP; each turn gets a server of its own behind a random bearer token
// that dies with the turn and is served only to the process it was given
// to and its descendants, so an agent can act on no other conversation.
package agenttools

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jake-bot/jake-bot/core"
)

var errTurnEnded = errors.New("the turn has ended")

// Server serves the agent tools to every running turn.
type Server struct {
	tools  []string
	logger *slog.Logger
	url    string
	srv    *http.Server

	mu    sync.Mutex
	turns map[string]*turn // by token
}

// turn is one turn's MCP server: a handler of its own, so that a session
// opened with one turn's token is unknown to every other.
type turn struct {
	handler http.Handler
	// proc is the process the turn's token was given to: only it and
	// its descendants are served.
	proc *process
	// ctx ends with the turn.
	ctx context.Context
	// tools are the turn's tools, under their own names.
	tools []string
	// define makes the turn's server with tools renamed (nil: none).
	define func(names map[string]string) *mcp.Server

	mu sync.Mutex
	// servers are the turn's servers by core.ToolNamesHeader, "" the
	// tools under their own names.
	servers map[string]*mcp.Server
}

// maxToolNamings bounds the namings a turn's servers are made for: one
// CLI asks for one.
const maxToolNamings = 4

// Timeouts bound what a client may hold of the server: any process of the
// machine can connect, with or without a token. A tool call's answer may
// take as long as ask_user waits for the chat, so there is no bound on
// writing it: its turn's end closes it.
type Timeouts struct {
	// ReadHeader bounds reading a request's headers, Read the whole
	// request, Idle a kept-alive connection between requests.
	ReadHeader, Read, Idle time.Duration
}

// DefaultTimeouts are Start's.
var DefaultTimeouts = Timeouts{ReadHeader: 10 * time.Second, Read: time.Minute, Idle: 2 * time.Minute}

// maxHeaderBytes bounds a request's headers: a token and a few names.
const maxHeaderBytes = 64 << 10

// Start listens on an ephemeral port of 127.0.0.1 and serves tools, a
// subset of core.AllAgentTools, within DefaultTimeouts.
func Start(tools []string, logger *slog.Logger) (*Server, error) {
	return StartWithin(tools, logger, DefaultTimeouts)
}

// StartWithin is Start within timeouts.
func StartWithin(tools []string, logger *slog.Logger, timeouts Timeouts) (*Server, error) {
	for _, t := range tools {
		if !slices.Contains(core.AllAgentTools, t) {
			return nil, fmt.Errorf("agent tools: no tool %q (there are %s)", t, strings.Join(core.AllAgentTools, ", "))
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("agent tools: listen: %w", err)
	}
	s := &Server{tools: tools, logger: logger, turns: map[string]*turn{},
		url: "http://" + ln.Addr().String() + "/mcp"}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: timeouts.ReadHeader, ReadTimeout: timeouts.Read,
		IdleTimeout: timeouts.Idle, MaxHeaderBytes: maxHeaderBytes}
	if runtime.GOOS != "linux" {
		logger.Warn("agent tools: outside Linux a turn's token is not bound to its CLI's processes: any process of the bot's user that reads it can use it")
	}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("agent tools server", "err", err)
		}
	}()
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// ServeHTTP hands a request to the turn its bearer token opens; without
// a live token it is refused.
func (s *Server) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	token, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	t := s.turns[token]
	s.mu.Unlock()
	if !ok || token == "" || t == nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="jakebot"`)
		http.Error(w, "a live turn's bearer token is needed", http.StatusUnauthorized)
		return
	}
	switch err := t.proc.checkPeer(t.ctx, req); {
	case errors.Is(err, errNoPeerCheck):
	case err != nil:
		s.logger.Warn("agent tools: a call with a turn's token from another process refused", "remote", req.RemoteAddr, "err", err)
		http.Error(w, "this turn's token is not served to this process: "+err.Error(), http.StatusForbidden)
		return
	}
	if err := t.prepare(req.Header.Get(core.ToolNamesHeader)); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	t.handler.ServeHTTP(w, req)
}

// prepare makes the turn's server for a naming of its tools (a
// core.ToolNamesHeader), unless it has one.
func (t *turn) prepare(header string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.servers[header]; ok {
		return nil
	}
	if len(t.servers) >= maxToolNamings {
		return fmt.Errorf("%s: at most %d namings of the tools in a turn", core.ToolNamesHeader, maxToolNamings)
	}
	names, err := parseToolNames(header, t.tools)
	if err != nil {
		return err
	}
	t.servers[header] = t.define(names)
	return nil
}

// server is the turn's server for req's naming of the tools, which
// prepare made.
func (t *turn) server(req *http.Request) *mcp.Server {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.servers[req.Header.Get(core.ToolNamesHeader)]
}

// parseToolNames reads a core.ToolNamesHeader: tool=name pairs of the
// served tools, each name new and of the characters MCP allows.
func parseToolNames(header string, tools []string) (map[string]string, error) {
	names := map[string]string{}
	if header == "" {
		return names, nil
	}
	taken := slices.Clone(tools)
	for pair := range strings.SplitSeq(header, ",") {
		tool, name, _ := strings.Cut(strings.TrimSpace(pair), "=")
		switch {
		case !slices.Contains(tools, tool):
			return nil, fmt.Errorf("%s: no tool %q is served", core.ToolNamesHeader, tool)
		case !validToolName(name) || slices.Contains(taken, name):
			return nil, fmt.Errorf("%s: %q cannot name %s", core.ToolNamesHeader, name, tool)
		}
		names[tool] = name
		taken = append(taken, name)
	}
	return names, nil
}

// validToolName: 1 to 64 of A-Z a-z 0-9 _ - (MCP's tool names, that
// every CLI takes).
func validToolName(name string) bool {
	return len(name) >= 1 && len(name) <= 64 && strings.Trim(name,
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == ""
}

// Open implements core.AgentTools.
func (s *Server) Open(actions core.TurnActions, only []string) (*core.ToolAccess, func()) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	token := hex.EncodeToString(b[:])
	ctx, cancel := context.WithCancelCause(context.Background())
	tools := slices.Clone(s.tools)
	if only != nil {
		tools = slices.DeleteFunc(tools, func(t string) bool { return !slices.Contains(only, t) })
	}
	t := &turn{proc: newProcess(), ctx: ctx, tools: tools, servers: map[string]*mcp.Server{}, define: func(names map[string]string) *mcp.Server {
		return newTurnServer(ctx, tools, names, actions)
	}}
	// Stateless: no session, and so no standing GET event stream, which
	// Gemini CLI holds open and will not exit while it is (the turn
	// waits for the CLI's exit, the stream would close after the turn).
	// The tools ask nothing of the client, so nothing needs one.
	t.handler = mcp.NewStreamableHTTPHandler(t.server, &mcp.StreamableHTTPOptions{Stateless: true})
	s.mu.Lock()
	s.turns[token] = t
	s.mu.Unlock()
	closeTurn := func() {
		s.mu.Lock()
		delete(s.turns, token)
		s.mu.Unlock()
		cancel(errTurnEnded)
		t.mu.Lock()
		defer t.mu.Unlock()
		for _, srv := range t.servers {
			for ss := range srv.Sessions() {
				ss.Close()
			}
		}
	}
	return &core.ToolAccess{URL: s.url, Token: token, Tools: tools, Spawned: t.proc.set}, closeTurn
}
