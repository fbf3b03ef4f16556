package discord

import (
	"context"
	"errors"

	"github.com/bwmarrin/discordgo"

	"github.com/jake-bot/jake-bot/core"
)

// Readmit reports whether user, whom DISCORD_ALLOWED_USERS does not list,
// is still admitted by DISCORD_ALLOWED_ROLES where key is: whether they
// are now a member, with one of the roles, of the server the channel or
// thread belongs to, as Discord answers (a guild member's roles). In a DM
// no role admits anyone. The router asks before it sends a scheduled
// message of such a user, so losing the role stops their schedules.
func (a *Adapter) Readmit(ctx context.Context, key core.ConversationKey, user string) (bool, error) {
	if len(a.cfg.AllowedRoles) == 0 {
		return false, nil
	}
	ch, err := a.api.Channel(key.Channel, discordgo.WithContext(ctx))
	if err != nil {
		return false, apiError("get channel", err)
	}
	if ch.GuildID == "" {
		return false, nil
	}
	m, err := a.api.GuildMember(ch.GuildID, user, discordgo.WithContext(ctx))
	var rest *discordgo.RESTError
	if errors.As(err, &rest) && rest.Message != nil && rest.Message.Code == discordgo.ErrCodeUnknownMember {
		return false, nil // they left the server
	}
	if err != nil {
		return false, apiError("get member", err)
	}
	return a.cfg.roleAllowed(m.Roles), nil
}
