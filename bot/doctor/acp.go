package doctor

import (
	"context"
	"strings"
	"time"

	"github.com/jake-bot/jake-bot/bot"
	"github.com/jake-bot/jake-bot/plugins/configured"
)

// acpStartup bounds an ACP agent's start and initialize: Qwen Code takes
// about 7 s cold, more than a --version.
const acpStartup = 45 * time.Second

// checkACP starts the agent of an acp entry and reports what its
// initialize says: the protocol version, and the sign-ins it knows, which
// jake-bot does not perform (the agent must be signed in already, or get
// its key from its env or args).
func checkACP(ctx context.Context, r *Report, cfg bot.Config, s configured.Spec) {
	name := s.ID + " ACP"
	s.Environ = cfg.ChildEnv
	ctx, cancel := context.WithTimeout(ctx, acpStartup)
	defer cancel()
	probe, err := configured.New(s, nil).Probe(ctx, "")
	switch {
	case err != nil:
		r.add("plugin", name, Fail, "the agent did not answer initialize: %v", err)
		return
	case probe.Err != "":
		r.add("plugin", name, Fail, "initialize failed: %s", probe.Err)
		return
	case probe.Caps.ProtocolVersion != configured.ACPVersion:
		r.add("plugin", name, Fail, "the agent speaks ACP version %d; jake-bot speaks %d", probe.Caps.ProtocolVersion, configured.ACPVersion)
		return
	}
	c := probe.Caps
	var can []string
	if c.LoadSession {
		can = append(can, "resume (session/load)")
	} else {
		can = append(can, "no resume: each conversation's turns start new sessions")
	}
	if c.ListSessions {
		can = append(can, "lists sessions")
	}
	detail := strings.TrimSpace(c.Agent+" ") + ", ACP version 1: " + strings.Join(can, ", ")
	if len(c.AuthMethods) > 0 {
		detail += "; its sign-ins (" + strings.Join(c.AuthMethods, "; ") + ") are not made by jake-bot: sign it in beforehand, or give it a key in env or args"
	}
	r.add("plugin", name, OK, "%s", strings.TrimPrefix(detail, ", "))
}
