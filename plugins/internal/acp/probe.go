package acp

import (
	"encoding/json"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/internal/jsonrpc"
)

// Probe is a protocol that asks an agent what it is, and, when it lists
// sessions and Cwd is set, the sessions of Cwd, then ends: for jakebot
// doctor and conversation lists. Read it once the run is over.
type Probe struct {
	// Cwd is the folder whose sessions are listed; empty lists none.
	Cwd string
	// Initialized is set once initialize was answered, with Caps.
	Initialized bool
	Caps        Capabilities
	// Sessions are the listed sessions; Err is the agent's error.
	Sessions []SessionInfo
	Err      string

	link *cliproc.Link
	rpc  jsonrpc.Peer
}

// SessionInfo is one session session/list gave.
type SessionInfo struct {
	ID, Title string
	Updated   time.Time
}

// NewProbe returns the protocol of a probe of the agent on link, which it
// starts at once.
func NewProbe(cwd string) (*Probe, func(*cliproc.Link) cliproc.Protocol) {
	p := &Probe{Cwd: cwd}
	return p, func(link *cliproc.Link) cliproc.Protocol {
		p.link, p.rpc = link, jsonrpc.Peer{Send: link.Send, V2: true}
		_ = p.rpc.Call(idInitialize, "initialize", InitializeParams())
		return p
	}
}

func (p *Probe) Line(b []byte) {
	m, ok := jsonrpc.Decode(b)
	switch {
	case !ok, m.IsNotification():
	case m.IsRequest():
		_ = p.rpc.Refuse(m.ID, m.Method)
	case m.Error != nil:
		p.Err = m.Error.Message
		p.link.Done()
	case m.Answers(idInitialize):
		p.Initialized, p.Caps = true, CapabilitiesOf(m.Result)
		if p.Cwd == "" || !p.Caps.ListSessions {
			p.link.Done()
			return
		}
		_ = p.rpc.Call(idSession, "session/list", map[string]any{"cwd": p.Cwd})
	case m.Answers(idSession):
		p.Sessions = sessionsOf(m.Result, p.Cwd)
		p.link.Done()
	}
}

// sessionsOf reads session/list's answer, keeping cwd's sessions.
func sessionsOf(result json.RawMessage, cwd string) []SessionInfo {
	var r struct {
		Sessions []struct {
			ID      string    `json:"sessionId"`
			Cwd     string    `json:"cwd"`
			Title   string    `json:"title"`
			Updated time.Time `json:"updatedAt"`
		} `json:"sessions"`
	}
	_ = json.Unmarshal(result, &r)
	var out []SessionInfo
	for _, s := range r.Sessions {
		if s.ID != "" && (s.Cwd == "" || s.Cwd == cwd) {
			out = append(out, SessionInfo{ID: s.ID, Title: s.Title, Updated: s.Updated})
		}
	}
	return out
}

// Outcome is a finished probe: nothing of a turn.
func (p *Probe) Outcome() cliproc.Outcome { return cliproc.Outcome{Result: &core.TurnResult{}} }
