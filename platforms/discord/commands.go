package discord

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/jake-bot/jake-bot/core"
)

// applicationCommands are the slash commands, built from core's command
// table: one per first word, its further words as subcommands (Discord
// cannot also run a command bare once it has subcommands, so a bare entry
// beside them is left to its text form).
func applicationCommands(table *core.Commands, plugins map[string]core.Plugin) []*discordgo.ApplicationCommand {
	var cmds []*discordgo.ApplicationCommand
	byWord := map[string]*discordgo.ApplicationCommand{}
	for _, s := range table.Specs() {
		if s.Alias || len(s.Words) > 2 {
			continue
		}
		c, ok := byWord[s.Words[0]]
		if !ok {
			c = &discordgo.ApplicationCommand{Name: s.Words[0], Description: describe(s.Help)}
			if p, ok := plugins[s.Plugin]; ok {
				c.Description = describe("Talk to " + p.Name())
			}
			byWord[s.Words[0]] = c
			cmds = append(cmds, c)
		}
		if len(s.Words) == 1 {
			c.Options = append(c.Options, option(s)...)
			continue
		}
		if len(c.Options) > 0 && c.Options[0].Type != discordgo.ApplicationCommandOptionSubCommand {
			c.Options = nil // the bare form's options give way to subcommands
		}
		c.Options = append(c.Options, &discordgo.ApplicationCommandOption{Type: discordgo.ApplicationCommandOptionSubCommand,
			Name: s.Words[1], Description: describe(s.Help), Options: option(s)})
	}
	return cmds
}

// option is the option a command's argument becomes.
func option(s core.CommandSpec) []*discordgo.ApplicationCommandOption {
	o := &discordgo.ApplicationCommandOption{Name: s.Arg, Description: describe(s.ArgHelp)}
	switch s.Kind {
	case core.ArgNone:
		return nil
	case core.ArgFlag:
		o.Type = discordgo.ApplicationCommandOptionBoolean
	default:
		o.Type = discordgo.ApplicationCommandOptionString
		o.Required = !s.Optional
		o.Autocomplete = s.Suggest != core.SuggestNothing
	}
	return []*discordgo.ApplicationCommandOption{o}
}

// describe fits a description to Discord's rules: capitalised, at most
// 100 characters.
func describe(s string) string {
	if s == "" {
		return "-"
	}
	return core.Shorten(strings.ToUpper(s[:1])+s[1:], 100)
}

// commandText turns a slash command or a button press into the text
// command core parses: "/claude start workdir:~/proj" becomes
// "/claude start ~/proj". A button's custom id is its command.
func commandText(i *discordgo.Interaction) string {
	if i.Type == discordgo.InteractionMessageComponent {
		if id := i.MessageComponentData().CustomID; core.IsCommand(id) {
			return id
		}
		return ""
	}
	d := i.ApplicationCommandData()
	if d.Name == "" {
		return ""
	}
	parts := []string{"/" + d.Name}
	appendOptions(&parts, d.Options)
	return strings.Join(parts, " ")
}

func appendOptions(parts *[]string, opts []*discordgo.ApplicationCommandInteractionDataOption) {
	for _, o := range opts {
		switch o.Type {
		case discordgo.ApplicationCommandOptionSubCommand, discordgo.ApplicationCommandOptionSubCommandGroup:
			*parts = append(*parts, o.Name)
			appendOptions(parts, o.Options)
		case discordgo.ApplicationCommandOptionBoolean:
			if b, _ := o.Value.(bool); b {
				*parts = append(*parts, o.Name)
			}
		default:
			if s := strings.TrimSpace(fmt.Sprint(o.Value)); s != "" && o.Value != nil {
				*parts = append(*parts, s)
			}
		}
	}
}

// focused finds the option the user is typing in.
func focused(opts []*discordgo.ApplicationCommandInteractionDataOption) *discordgo.ApplicationCommandInteractionDataOption {
	for _, o := range opts {
		if o.Focused {
			return o
		}
		if f := focused(o.Options); f != nil {
			return f
		}
	}
	return nil
}

// autocompleteTimeout keeps the answer inside Discord's three seconds.
const autocompleteTimeout = 2 * time.Second

// maxChoices is how many suggestions Discord shows.
const maxChoices = 25

// autocomplete suggests session ids, workdirs and modes: what the router
// would accept from this user, as core's Lookup answers (someone it does
// not serve gets nothing).
func (a *Adapter) autocomplete(ctx context.Context, i *discordgo.Interaction, user string, roles []string) {
	ctx, cancel := context.WithTimeout(ctx, autocompleteTimeout)
	defer cancel()
	var choices []*discordgo.ApplicationCommandOptionChoice
	d := i.ApplicationCommandData()
	if f := focused(d.Options); f != nil {
		typed := strings.TrimSpace(fmt.Sprint(f.Value))
		if f.Value == nil {
			typed = ""
		}
		m := core.Message{Key: core.ConversationKey{Platform: Name, User: user, Channel: i.ChannelID},
			Allowed: a.cfg.roleAllowed(roles)}
		switch f.Name {
		case "id":
			choices = a.resumeChoices(ctx, d.Name, m, typed)
		case "workdir", "path":
			for _, dir := range a.lookup.WorkdirSuggestions(m, typed, maxChoices) {
				if len(dir) <= maxChoiceLength {
					choices = append(choices, &discordgo.ApplicationCommandOptionChoice{Name: dir, Value: dir})
				}
			}
		case "name":
			if d.Name == "mode" && a.lookup.Admits(m) {
				choices = a.modeChoices(m.Key, typed)
			}
		}
	}
	resp := &discordgo.InteractionResponse{Type: discordgo.InteractionApplicationCommandAutocompleteResult,
		Data: &discordgo.InteractionResponseData{Choices: choices}}
	if err := a.api.InteractionRespond(i, resp, discordgo.WithContext(ctx)); err != nil {
		a.logger.Debug("autocomplete", "err", err)
	}
}

// modeChoices lists the modes of the plugin of key's conversation whose
// name starts with what the user typed.
func (a *Adapter) modeChoices(key core.ConversationKey, typed string) []*discordgo.ApplicationCommandOptionChoice {
	conv, ok := a.lookup.Conversation(key)
	p, known := a.plugins[conv.Plugin]
	if !ok || !known {
		return nil
	}
	var out []*discordgo.ApplicationCommandOptionChoice
	for _, md := range core.ModesOf(p) {
		if len(out) < maxChoices && strings.HasPrefix(strings.ToLower(md.Name), strings.ToLower(typed)) {
			out = append(out, &discordgo.ApplicationCommandOptionChoice{Name: core.Shorten(md.Name+" — "+md.Help, maxChoiceLength), Value: md.Name})
		}
	}
	return out
}

// resumeChoices lists the sessions core lets m's author resume where they
// typed whose id starts with, or whose title contains, what they typed.
func (a *Adapter) resumeChoices(ctx context.Context, pluginID string, m core.Message, typed string) []*discordgo.ApplicationCommandOptionChoice {
	infos, err := a.lookup.ResumeCandidates(ctx, m, pluginID)
	if err != nil {
		a.logger.Debug("autocomplete conversations", "plugin", pluginID, "err", err)
		return nil
	}
	low := strings.ToLower(typed)
	var out []*discordgo.ApplicationCommandOptionChoice
	for _, c := range infos {
		if len(out) == maxChoices {
			break
		}
		if len(c.SessionID) > maxChoiceLength || (typed != "" && !strings.HasPrefix(c.SessionID, typed) &&
			!strings.Contains(strings.ToLower(c.Title), low)) {
			continue
		}
		name := c.SessionID
		if len(name) > 8 {
			name = name[:8]
		}
		if !c.Updated.IsZero() {
			name += " · " + c.Updated.Local().Format("2006-01-02 15:04")
		}
		if c.Title != "" {
			name += " · " + c.Title
		}
		out = append(out, &discordgo.ApplicationCommandOptionChoice{Name: core.Shorten(name, maxChoiceLength), Value: c.SessionID})
	}
	return out
}
