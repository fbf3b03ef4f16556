package discord

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/jake-bot/jake-bot/core"
)

// applicationCommands are the slash commands, one per plugin plus the
// shared ones; each maps onto the text command core parses.
func applicationCommands(plugins []core.Plugin) []*discordgo.ApplicationCommand {
	str := func(name, desc string, required bool) *discordgo.ApplicationCommandOption {
		return &discordgo.ApplicationCommandOption{Type: discordgo.ApplicationCommandOptionString, Name: name,
			Description: desc, Required: required, Autocomplete: true}
	}
	sub := func(name, desc string, opts ...*discordgo.ApplicationCommandOption) *discordgo.ApplicationCommandOption {
		return &discordgo.ApplicationCommandOption{Type: discordgo.ApplicationCommandOptionSubCommand, Name: name,
			Description: desc, Options: opts}
	}
	var cmds []*discordgo.ApplicationCommand
	for _, p := range plugins {
		cmds = append(cmds, &discordgo.ApplicationCommand{
			Name:        p.ID(),
			Description: core.Shorten("Talk to "+p.Name(), 100),
			Options: []*discordgo.ApplicationCommandOption{
				sub("start", core.Shorten("Start a "+p.Name()+" conversation", 100),
					str("workdir", "Working directory (default: the bot's default)", false)),
				sub("conversations", core.Shorten("List past "+p.Name()+" conversations in this workdir", 100)),
				sub("resume", core.Shorten("Continue a past "+p.Name()+" conversation", 100),
					str("id", "Conversation id (or the start of it)", true)),
			},
		})
	}
	cmds = append(cmds,
		&discordgo.ApplicationCommand{Name: "conversation", Description: "The conversation here",
			Options: []*discordgo.ApplicationCommandOption{sub("end", "End it (its history stays with the CLI)")}},
		&discordgo.ApplicationCommand{Name: "status", Description: "Show the conversation here",
			Options: []*discordgo.ApplicationCommandOption{{Type: discordgo.ApplicationCommandOptionBoolean,
				Name: "all", Description: "Every active conversation (admins only)"}}},
		&discordgo.ApplicationCommand{Name: "workdir", Description: "The working directory",
			Options: []*discordgo.ApplicationCommandOption{sub("set", "Change the working directory",
				str("path", "Directory under the allowed roots", true))}},
		&discordgo.ApplicationCommand{Name: "stop", Description: "Cancel the running turn"},
		&discordgo.ApplicationCommand{Name: "help", Description: "List the commands"},
	)
	return cmds
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

// autocomplete suggests resume ids and workdirs. Users the configuration
// does not admit get no suggestions: directory names are not for them.
func (a *Adapter) autocomplete(ctx context.Context, i *discordgo.Interaction, user string, roles []string) {
	ctx, cancel := context.WithTimeout(ctx, autocompleteTimeout)
	defer cancel()
	var choices []*discordgo.ApplicationCommandOptionChoice
	d := i.ApplicationCommandData()
	if f := focused(d.Options); f != nil && a.cfg.admits(user, roles) {
		typed := strings.TrimSpace(fmt.Sprint(f.Value))
		if f.Value == nil {
			typed = ""
		}
		key := core.ConversationKey{Platform: Name, User: user, Channel: i.ChannelID}
		switch f.Name {
		case "id":
			choices = a.resumeChoices(ctx, d.Name, a.workdir(key), typed)
		case "workdir", "path":
			choices = dirChoices(a.opts.Roots, a.workdir(key), typed)
		}
	}
	resp := &discordgo.InteractionResponse{Type: discordgo.InteractionApplicationCommandAutocompleteResult,
		Data: &discordgo.InteractionResponseData{Choices: choices}}
	if err := a.api.InteractionRespond(i, resp, discordgo.WithContext(ctx)); err != nil {
		a.logger.Debug("autocomplete", "err", err)
	}
}

// workdir is the conversation's workdir at key, or the default, as the
// router would use for a listing.
func (a *Adapter) workdir(key core.ConversationKey) string {
	if a.opts.Conversations != nil {
		if c, ok := a.opts.Conversations.Get(key); ok {
			return c.Workdir
		}
	}
	return a.defaultWorkdir()
}

func (a *Adapter) defaultWorkdir() string {
	if a.opts.DefaultWorkdir != "" {
		return a.opts.DefaultWorkdir
	}
	if len(a.opts.Roots) > 0 {
		return a.opts.Roots[0]
	}
	return ""
}

// resumeChoices lists the plugin's past conversations in workdir whose id
// starts with, or whose title contains, what the user typed.
func (a *Adapter) resumeChoices(ctx context.Context, pluginID, workdir, typed string) []*discordgo.ApplicationCommandOptionChoice {
	p, ok := a.plugins[pluginID]
	if !ok || workdir == "" {
		return nil
	}
	infos, err := p.Conversations(ctx, workdir)
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
		if len(c.ID) > maxChoiceLength || (typed != "" && !strings.HasPrefix(c.ID, typed) &&
			!strings.Contains(strings.ToLower(c.Title), low)) {
			continue
		}
		name := c.ID
		if len(name) > 8 {
			name = name[:8]
		}
		if !c.Updated.IsZero() {
			name += " · " + c.Updated.Local().Format("2006-01-02 15:04")
		}
		if c.Title != "" {
			name += " · " + c.Title
		}
		out = append(out, &discordgo.ApplicationCommandOptionChoice{Name: core.Shorten(name, maxChoiceLength), Value: c.ID})
	}
	return out
}
