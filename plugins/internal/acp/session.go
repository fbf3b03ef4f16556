package acp

import (
	"encoding/json"
	"strings"
)

// Capabilities are what an agent says of itself in initialize's answer.
type Capabilities struct {
	ProtocolVersion int
	// Agent is the agent's name and version, when it gives them.
	Agent string
	// LoadSession: session/load resumes a session. ListSessions:
	// session/list lists them.
	LoadSession, ListSessions bool
	// AuthMethods are the sign-ins the agent knows, by name.
	AuthMethods []string
	// MCPHTTP: the agent connects to MCP servers over streamable HTTP
	// (mcpCapabilities.http), not only stdio.
	MCPHTTP bool
}

// CapabilitiesOf reads initialize's answer.
func CapabilitiesOf(result json.RawMessage) Capabilities {
	var r struct {
		ProtocolVersion int `json:"protocolVersion"`
		AgentInfo       struct {
			Name    string `json:"name"`
			Title   string `json:"title"`
			Version string `json:"version"`
		} `json:"agentInfo"`
		AuthMethods []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"authMethods"`
		Caps struct {
			LoadSession bool `json:"loadSession"`
			MCP         struct {
				HTTP bool `json:"http"`
			} `json:"mcpCapabilities"`
			Session struct {
				List json.RawMessage `json:"list"`
			} `json:"sessionCapabilities"`
		} `json:"agentCapabilities"`
	}
	_ = json.Unmarshal(result, &r)
	c := Capabilities{ProtocolVersion: r.ProtocolVersion, LoadSession: r.Caps.LoadSession, MCPHTTP: r.Caps.MCP.HTTP,
		ListSessions: len(r.Caps.Session.List) > 0 && string(r.Caps.Session.List) != "null",
		Agent:        strings.TrimSpace(firstOf(r.AgentInfo.Title, r.AgentInfo.Name) + " " + r.AgentInfo.Version)}
	for _, m := range r.AuthMethods {
		c.AuthMethods = append(c.AuthMethods, firstOf(m.Name, m.ID))
	}
	return c
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// Session is what an agent announced of a session in its answer to
// session/new or session/load.
type Session struct {
	ID     string
	Modes  []Choice
	Models []Choice
}

// Choice is one of a session's modes or models.
type Choice struct {
	ID, Name, Description string
}

// SessionOf reads session/new's or session/load's answer.
func SessionOf(result json.RawMessage) Session {
	type choice struct {
		ID          string `json:"id"`
		ModelID     string `json:"modelId"`
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	var r struct {
		SessionID string `json:"sessionId"`
		Modes     struct {
			Available []choice `json:"availableModes"`
		} `json:"modes"`
		Models struct {
			Available []choice `json:"availableModels"`
		} `json:"models"`
	}
	_ = json.Unmarshal(result, &r)
	s := Session{ID: r.SessionID}
	for _, m := range r.Modes.Available {
		s.Modes = append(s.Modes, Choice{m.ID, m.Name, m.Description})
	}
	for _, m := range r.Models.Available {
		s.Models = append(s.Models, Choice{m.ModelID, m.Name, m.Description})
	}
	return s
}

// mode is the id of the announced mode want names.
func (s Session) mode(want string) (string, bool) { return find(s.Modes, want) }

// model is the id of the announced model want names, by id or name.
func (s Session) model(want string) (string, bool) { return find(s.Models, want) }

// offered lists the announced models for a warning.
func (s Session) offered() string {
	if len(s.Models) == 0 {
		return "; it announces none, so this turn uses its own."
	}
	names := make([]string, len(s.Models))
	for i, m := range s.Models {
		names[i] = firstOf(m.Name, m.ID)
	}
	return " (it offers " + strings.Join(names, ", ") + "); this turn uses its own."
}

func find(cs []Choice, want string) (string, bool) {
	if want == "" {
		return "", false
	}
	for _, c := range cs {
		if c.ID == want || strings.EqualFold(c.Name, want) {
			return c.ID, true
		}
	}
	return "", false
}
