package core

import (
	"fmt"
	"log/slog"
	"strings"
)

// Access decides who may use the bot, per platform. It denies by default:
// a platform with no allowed users and no rule of its own serves nobody.
// It is read-only after construction and so safe for concurrent use.
type Access struct {
	allowed map[string]map[string]bool
	admins  map[string]map[string]bool
	// rules describe, per platform, how its adapter admits users that
	// Access does not list (Message.Allowed), for Serves and Report.
	rules map[string][]string
}

// NewAccess returns an empty (deny-all) policy.
func NewAccess() *Access {
	return &Access{allowed: map[string]map[string]bool{}, admins: map[string]map[string]bool{}, rules: map[string][]string{}}
}

// AllowBy records that platform's adapter also admits users by a rule of
// its own, such as a Discord role, marking their messages Message.Allowed.
// Access cannot check the rule; it only knows, for Serves and Report, that
// the platform serves someone. rule describes it, e.g. "members of 2
// roles".
func (a *Access) AllowBy(platform, rule string) {
	a.rules[platform] = append(a.rules[platform], rule)
}

// Allow lets users use the bot on platform; "*" allows everyone.
func (a *Access) Allow(platform string, users ...string) { add(a.allowed, platform, users) }

// Admin makes users admins on platform: they may set workdirs outside the
// default root and see every conversation. Admins are allowed users.
func (a *Access) Admin(platform string, users ...string) {
	add(a.admins, platform, users)
	add(a.allowed, platform, users)
}

func add(m map[string]map[string]bool, platform string, users []string) {
	if m[platform] == nil {
		m[platform] = map[string]bool{}
	}
	for _, u := range users {
		if u = strings.TrimSpace(u); u != "" {
			m[platform][u] = true
		}
	}
}

// Allowed reports whether user may use the bot on platform.
func (a *Access) Allowed(platform, user string) bool {
	set := a.allowed[platform]
	return set[user] || set["*"]
}

// IsAdmin reports whether user is an admin on platform.
func (a *Access) IsAdmin(platform, user string) bool {
	set := a.admins[platform]
	return set[user] || set["*"]
}

// Rights are what a message's author may do beyond using the bot,
// decided once per message: the router's call carries them, and a Place
// is narrowed to them.
type Rights struct {
	// Admin: an admin of the message's platform, who may work in every
	// root and see every conversation.
	Admin bool
}

// RightsOf returns the rights of m's author.
func (a *Access) RightsOf(m Message) Rights {
	return Rights{Admin: a.IsAdmin(m.Key.Platform, m.Author())}
}

// Serves reports whether anyone at all may use platform.
func (a *Access) Serves(platform string) bool {
	return len(a.allowed[platform]) > 0 || len(a.rules[platform]) > 0
}

// AllowsEveryone reports whether platform is open to all users.
func (a *Access) AllowsEveryone(platform string) bool { return a.allowed[platform]["*"] }

// Refusal is the reply to a user who is not allowed; it shows their id so
// the owner can add it.
func Refusal(m Message) string {
	return fmt.Sprintf("Sorry, you are not on this bot's allow-list. Your %s user id is %s.", m.Key.Platform, m.Author())
}

// Report logs, at start-up, whom platform serves, so that a deny-all or
// allow-all policy is never a surprise: no allowed users and no rule
// (AllowBy) is an error-level line saying the platform serves nobody, "*" a
// loud warning. It returns
// the same text it logged.
func (a *Access) Report(logger *slog.Logger, platform, allowVar string) string {
	logger = OrDiscard(logger)
	switch {
	case !a.Serves(platform):
		msg := fmt.Sprintf("%s serves nobody: no allowed users. Set %s to a comma-separated list of user ids (anyone who writes is told their id)", platform, allowVar)
		logger.Error(msg, "platform", platform)
		return msg
	case a.AllowsEveryone(platform):
		msg := fmt.Sprintf("WARNING: %s allows EVERYONE (%s contains \"*\"): anyone who can message the bot can run coding agents with shell access on this host", platform, allowVar)
		if a.admins[platform]["*"] {
			msg += ", and everyone is an admin"
		}
		logger.Warn(msg, "platform", platform)
		return msg
	}
	msg := fmt.Sprintf("%s serves %d allowed users (%d admins)", platform, len(a.allowed[platform]), len(a.admins[platform]))
	for _, rule := range a.rules[platform] {
		msg += " and " + rule
	}
	logger.Info(msg, "platform", platform)
	return msg
}
