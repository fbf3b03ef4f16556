package core

import (
	"fmt"
	"strings"
)

// Access decides who may use the bot, per platform. It denies by default:
// a platform with no allowed users serves nobody. It is read-only after
// construction and so safe for concurrent use.
type Access struct {
	allowed map[string]map[string]bool
	admins  map[string]map[string]bool
}

// NewAccess returns an empty (deny-all) policy.
func NewAccess() *Access {
	return &Access{allowed: map[string]map[string]bool{}, admins: map[string]map[string]bool{}}
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

// Serves reports whether anyone at all may use platform.
func (a *Access) Serves(platform string) bool { return len(a.allowed[platform]) > 0 }

// AllowsEveryone reports whether platform is open to all users.
func (a *Access) AllowsEveryone(platform string) bool { return a.allowed[platform]["*"] }

// Refusal is the reply to a user who is not allowed; it shows their id so
// the owner can add it.
func Refusal(m Message) string {
	return fmt.Sprintf("Sorry, you are not on this bot's allow-list. Your %s user id is %s.", m.Key.Platform, m.Author())
}
