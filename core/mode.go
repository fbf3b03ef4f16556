package core

import (
	"fmt"
	"slices"
	"strings"
)

// turnFor is the turn m (which may do as may says) runs next in its
// conversation in workdir with p, with the conversation's model and
// modes, bounded to cost at most maxUSD.
// Rights to a mode are checked when /mode sets it, but a shared
// conversation (a Slack thread) takes anyone's message: a mode that lets
// tools run with nobody approving them applies only to the turns of an
// author who may choose it, and the others run as configured. note says
// so, once per conversation and author.
func (r *Router) turnFor(m Message, may permits, conv Conversation, p Plugin, workdir string, maxUSD float64) (t Turn, note string) {
	t = Turn{Key: m.Key, Author: m.Author(), Workdir: workdir, SessionID: conv.SessionID, Ask: r.asks(conv), Model: conv.Model, Mode: conv.Mode, MaxCostUSD: maxUSD}
	if may.bypass == nil {
		return t, ""
	}
	var held []string
	if conv.Approvals == ModeAuto && r.cfg.Ask {
		t.Ask = true
		held = append(held, ModeAuto)
	}
	if t.Mode != "" && p != nil && slices.ContainsFunc(ModesOf(p), func(md Mode) bool { return md.Bypass && strings.EqualFold(md.Name, t.Mode) }) {
		held = append(held, t.Mode)
		t.Mode = ""
	}
	agent := m.origin == OriginAgent || m.origin == OriginAgentSchedule
	if len(held) == 0 || !r.saidOnce.Add(fmt.Sprintf("mode %s %s %t %s", m.Key, m.Author(), agent, strings.Join(held, ",")), struct{}{}) {
		return t, ""
	}
	if agent {
		return t, fmt.Sprintf("This conversation is set to mode %s, which lets tools run with nobody approving them: a turn the agent scheduled never runs so, and runs %s.",
			strings.Join(held, " and "), modeWords(t.Mode, t.Ask))
	}
	return t, fmt.Sprintf("This conversation is set to mode %s, which lets tools run with nobody approving them: only admins may use it, so your turns here run %s.",
		strings.Join(held, " and "), modeWords(t.Mode, t.Ask))
}

// asks reports whether conv's turns have the chat approve tool calls.
func (r *Router) asks(conv Conversation) bool {
	switch conv.Approvals {
	case ModeAsk:
		return true
	case ModeAuto:
		return false
	}
	return r.cfg.Ask
}

// cmdModel shows or sets the conversation's model.
func cmdModel(c *call) (string, error) {
	r, m, conv, name := c.r, c.m, c.conv, c.cmd.Arg
	if name == "" {
		if conv.Model == "" {
			return "Model: the plugin's default. Set one with /model <name>.", nil
		}
		return "Model: " + conv.Model + " (/model default goes back to the plugin's default).", nil
	}
	if strings.EqualFold(name, ModeDefault) {
		name = ""
	} else if !modelName.MatchString(name) {
		return "", Errorf("%q is not a model name", name)
	}
	r.convs.Update(m.Key, func(cv *Conversation) { cv.Model = name })
	r.warm.drop(m.Key)
	r.warmUp(m, c.may)
	if name == "" {
		return "Model: the plugin's default, from the next turn.", nil
	}
	return "Model: " + name + ", from the next turn. If the CLI does not know it, the turn says so.", nil
}

// cmdMode shows the conversation's modes and those it may take, or sets
// one.
func cmdMode(c *call) (string, error) {
	r, m, conv, name := c.r, c.m, c.conv, c.cmd.Arg
	p, err := c.place().Plugin(conv.Plugin, m)
	if err != nil {
		return "", err
	}
	modes := ModesOf(p)
	if name == "" {
		return c.describeModes(conv, modes), nil
	}
	var chosen *Mode
	for i := range modes {
		if strings.EqualFold(modes[i].Name, name) {
			chosen = &modes[i]
		}
	}
	if chosen == nil {
		return "", Errorf("%s has no mode %q. /mode lists them", p.Name(), name)
	}
	if r.bypasses(*chosen) && c.may.bypass != nil {
		if chosen.Name == ModeAuto {
			return "", Errorf("mode auto asks nothing in the chat, so the CLI may run tools with nobody approving them, where the bot is set to ask (APPROVALS=ask): only admins may choose it")
		}
		return "", Errorf("mode %s runs tools with nobody approving them: only admins may choose it", chosen.Name)
	}
	set := func(cv *Conversation) {
		switch chosen.Name {
		case ModeAsk, ModeAuto:
			cv.Approvals = chosen.Name
		case ModeDefault:
			cv.Mode, cv.Approvals = "", ""
		default:
			cv.Mode = chosen.Name
		}
	}
	r.convs.Update(m.Key, set)
	set(&conv) // as the conversation now is
	r.warm.drop(m.Key)
	r.warmUp(m, c.may)
	answer := "From the next turn: " + r.modeSummary(conv) + "."
	if r.bypasses(*chosen) && !r.cfg.AllowBypassModes {
		answer += " It applies to admins' turns only: in this conversation, others' turns run as configured."
	}
	return answer, nil
}

// bypasses reports whether md lets tools run with nobody approving them:
// a CLI mode marked so, or auto where the operator has the chat approve
// (APPROVALS=ask), since auto lets a CLI such as Codex run what its sandbox
// allows without asking anyone.
func (r *Router) bypasses(md Mode) bool {
	return md.Bypass || (md.Name == ModeAuto && r.cfg.Ask)
}

// modeSummary says in words how conv's turns run.
func (r *Router) modeSummary(conv Conversation) string { return modeWords(conv.Mode, r.asks(conv)) }

func (c *call) describeModes(conv Conversation, modes []Mode) string {
	r := c.r
	var b strings.Builder
	fmt.Fprintf(&b, "Now: %s.\nModes (/mode <name>):", r.modeSummary(conv))
	for _, md := range modes {
		mark := ""
		if r.bypasses(md) {
			mark = " (admins only)"
			if r.cfg.AllowBypassModes {
				mark = " (no approvals at all)"
			}
		}
		fmt.Fprintf(&b, "\n%s — %s%s", md.Name, md.Help, mark)
	}
	return b.String()
}
