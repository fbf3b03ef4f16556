package core

import (
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/jake-bot/jake-bot/core/recent"
)

// Conversation is what the bot remembers between turns: which CLI, where,
// and the token to continue its session. No process runs between turns.
type Conversation struct {
	Plugin string
	// Runner is the runner the conversation works on ("box2"), empty
	// for this machine. Workdir, Worktree and Repo are paths there.
	Runner    string
	Workdir   string
	SessionID string
	Started   time.Time
	LastUsed  time.Time
	// AllowedTools are the tools answered "always allow" in this
	// conversation: asked about again, they are allowed at once.
	AllowedTools []string
	// Model and Mode are what /model and /mode chose; empty means the
	// plugin's configured ones. Approvals is "ask" or "auto" when /mode
	// chose one, empty for the bot's APPROVALS.
	Model     string
	Mode      string
	Approvals string
	// Worktree is the conversation's own git worktree, when it has one
	// (--worktree): its path, its branch, and the repository's main
	// worktree, into whose branch /merge merges.
	Worktree string
	Branch   string
	Repo     string
	// Spent is what the conversation's turns cost, its helpers' too.
	Spent Spend
	// Helpers are the conversation's other agents (/ask, /review, /pair),
	// each with its own session (core/sidebyside.go). Changed only by
	// replacing the slice: copies of the conversation share it.
	Helpers []Helper
	// Pair is the reviewer /pair chose: a plugin ID, PairOff, or empty
	// for the bot's REVIEW_PLUGIN; PairRounds its rounds, 0 for the
	// bot's REVIEW_ROUNDS.
	Pair       string
	PairRounds int
	// Reviewed are the hashes of the parts of the diff the last review
	// saw (core/review.go): the next one reviews what changed since.
	Reviewed []string
	// LastRequest is the last request its author's agent answered (its
	// first maxRequest bytes), which a review shows the reviewer: kept
	// here, it outlives a restart, where the reply, kept in memory only
	// (sideBySide), does not.
	LastRequest string
}

// Shown is path, one of c's, as the user sees it: with its runner's name
// before it on a runner ("box2:/src/app"). No path is shown as none.
func (c Conversation) Shown(path string) string {
	if c.Runner == "" || path == "" {
		return path
	}
	return c.Runner + ":" + path
}

// State is what the router remembers, in memory and (mirrored by
// bot/state) across restarts: the active conversations and where recently
// ended ones were, who started each CLI session from chat, each user's
// spend per day, the schedules, and the CLIs' usage windows. It is safe for concurrent use.
type State struct {
	mu     sync.RWMutex
	active map[ConversationKey]Conversation
	// ended remembers where an ended conversation was (its plugin,
	// workdir and worktree), for a bare /resume; the most recent ones
	// only.
	ended *recent.Map[ConversationKey, Conversation]
	// owners records who started each CLI session from chat.
	owners map[sessionRef]string
	// spent is each user's spend per UTC day, the last month of it.
	spent map[string]UserSpend
	// schedules are the messages /at and /every send, by ID.
	schedules    map[int]Schedule
	nextSchedule int
	// windows are the CLIs' usage windows as last reported (usageBook).
	windows map[[3]string]UsageWindow
	// onChange, when set, is called after every change (outside the lock),
	// so the map can be mirrored to disk.
	onChange func()
}

// maxEnded bounds how many ended conversations a bare /resume remembers.
const maxEnded = 10_000

// NewState returns an empty State.
func NewState() *State {
	return &State{active: make(map[ConversationKey]Conversation), ended: recent.New[ConversationKey, Conversation](maxEnded), owners: make(map[sessionRef]string), spent: make(map[string]UserSpend),
		schedules: make(map[int]Schedule), windows: make(map[[3]string]UsageWindow)}
}

// Same reports whether c and other are one conversation, perhaps at two
// moments: a /start or /resume in between makes a new one.
func (c Conversation) Same(other Conversation) bool {
	return c.Started.Equal(other.Started) && c.Plugin == other.Plugin
}

// Get returns the active conversation for k.
func (c *State) Get(k ConversationKey) (Conversation, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	conv, ok := c.active[k]
	return conv, ok
}

// Still returns the active conversation for k as it is now, provided it
// is still was (Conversation.Same): what a turn or a loop started on.
func (c *State) Still(k ConversationKey, was Conversation) (Conversation, bool) {
	conv, ok := c.Get(k)
	return conv, ok && conv.Same(was)
}

// Put stores conv as the active conversation for k.
func (c *State) Put(k ConversationKey, conv Conversation) {
	c.mu.Lock()
	c.active[k] = conv
	c.ended.Delete(k)
	c.mu.Unlock()
	c.changed()
}

// Update applies f to the active conversation for k, if there is one, and
// reports whether there was.
func (c *State) Update(k ConversationKey, f func(*Conversation)) bool {
	c.mu.Lock()
	conv, ok := c.active[k]
	if ok {
		f(&conv)
		c.active[k] = conv
	}
	c.mu.Unlock()
	if ok {
		c.changed()
	}
	return ok
}

// UpdateStill is Update of the conversation for k provided it is still
// was: what a turn learnt is kept in the conversation it ran in, never in
// one a /start or /resume made meanwhile.
func (c *State) UpdateStill(k ConversationKey, was Conversation, f func(*Conversation)) {
	c.Update(k, func(conv *Conversation) {
		if conv.Same(was) {
			f(conv)
		}
	})
}

// End removes the conversation for k and returns it.
func (c *State) End(k ConversationKey) (Conversation, bool) {
	c.mu.Lock()
	conv, ok := c.active[k]
	if ok {
		delete(c.active, k)
		c.ended.Set(k, Conversation{Plugin: conv.Plugin, Runner: conv.Runner, Workdir: conv.Workdir,
			Worktree: conv.Worktree, Branch: conv.Branch, Repo: conv.Repo})
	}
	c.mu.Unlock()
	if ok {
		c.changed()
	}
	return conv, ok
}

// Ended returns where k's last ended conversation was, while k has no
// active one: its plugin, workdir and worktree (the rest is forgotten).
func (c *State) Ended(k ConversationKey) (Conversation, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if _, ok := c.active[k]; ok {
		return Conversation{}, false
	}
	return c.ended.Get(k)
}

// Len returns the number of active conversations.
func (c *State) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.active)
}

// Entry is one active conversation with its key.
type Entry struct {
	Key ConversationKey
	Conversation
}

// All returns every active conversation, most recently used first.
func (c *State) All() []Entry {
	c.mu.RLock()
	out := make([]Entry, 0, len(c.active))
	for k, v := range c.active {
		out = append(out, Entry{k, v})
	}
	c.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].LastUsed.After(out[j].LastUsed) })
	return out
}

// Latest returns the most recently used active conversation that match
// accepts. It copies and sorts nothing: starting a conversation asks it
// of every other, and with All that made starting 10,000 conversations
// quadratic (issue 33).
func (c *State) Latest(match func(Entry) bool) (Entry, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var best Entry
	found := false
	for k, v := range c.active {
		e := Entry{k, v}
		if (!found || e.LastUsed.After(best.LastUsed)) && match(e) {
			best, found = e, true
		}
	}
	return best, found
}

// Load replaces the map's contents, as at start-up from a saved state.
func (c *State) Load(entries []Entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range entries {
		c.active[e.Key] = e.Conversation
	}
}

// SessionOwner is who started a CLI session from chat: only they (and
// admins) may list and resume it.
type SessionOwner struct {
	Plugin    string
	SessionID string
	// Owner is the author's "platform/user".
	Owner string
}

type sessionRef struct{ plugin, session string }

// OwnerOf returns the "platform/user" form SessionOwner.Owner takes.
func OwnerOf(m Message) string { return m.Key.Platform + "/" + m.Author() }

// SetOwner records owner as the one who started plugin's session, unless
// someone already did.
func (c *State) SetOwner(plugin, session, owner string) {
	c.mu.Lock()
	ref := sessionRef{plugin, session}
	if _, ok := c.owners[ref]; ok || session == "" {
		c.mu.Unlock()
		return
	}
	c.owners[ref] = owner
	c.mu.Unlock()
	c.changed()
}

// Owner returns who started plugin's session from chat, or "" when it was
// not started from chat.
func (c *State) Owner(plugin, session string) string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.owners[sessionRef{plugin, session}]
}

// Owners returns every recorded session owner, for saving.
func (c *State) Owners() []SessionOwner {
	c.mu.RLock()
	out := make([]SessionOwner, 0, len(c.owners))
	for ref, owner := range c.owners {
		out = append(out, SessionOwner{Plugin: ref.plugin, SessionID: ref.session, Owner: owner})
	}
	c.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Plugin != out[j].Plugin {
			return out[i].Plugin < out[j].Plugin
		}
		return out[i].SessionID < out[j].SessionID
	})
	return out
}

// LoadOwners adds saved session owners, as at start-up.
func (c *State) LoadOwners(owners []SessionOwner) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, o := range owners {
		c.owners[sessionRef{o.Plugin, o.SessionID}] = o.Owner
	}
}

// OnChange sets a function called after each change. Set it before use.
func (c *State) OnChange(f func()) { c.onChange = f }

func (c *State) changed() {
	if c.onChange != nil {
		c.onChange()
	}
}

// Helper is one of a conversation's helper agents: a plugin other than
// its author's, and the session it continues.
type Helper struct {
	Plugin    string
	SessionID string
}

// helperSession is the session of conv's helper plugin, or "".
func (c Conversation) helperSession(plugin string) string {
	if i := slices.IndexFunc(c.Helpers, func(h Helper) bool { return h.Plugin == plugin }); i >= 0 {
		return c.Helpers[i].SessionID
	}
	return ""
}

// keepHelperSession sets the session of c's helper plugin, replacing the
// slice (copies of c share the old one).
func (c *Conversation) keepHelperSession(plugin, session string) {
	hs := slices.Clone(c.Helpers)
	if i := slices.IndexFunc(hs, func(h Helper) bool { return h.Plugin == plugin }); i >= 0 {
		hs[i].SessionID = session
	} else {
		hs = append(hs, Helper{Plugin: plugin, SessionID: session})
	}
	c.Helpers = hs
}

// Schedule is a message /at or /every sends on a user's behalf, into the
// conversation it was set in, as if they had typed it then.
type Schedule struct {
	ID  int
	Key ConversationKey
	// From and UserName are the author's, as on their message. Whether
	// they may still use the bot is checked each time it fires, against
	// Access or, for a user Access does not list, by asking the platform's
	// own rule again (Readmitter: a Discord role); how they were admitted
	// when they scheduled it is not stored.
	From     string
	UserName string
	Text     string
	// Next is when it runs next. Every or Cron repeats it; neither means
	// it runs once.
	Next  time.Time
	Every time.Duration
	Cron  string
	// Limit, for a turn refused by a usage window, names the window
	// ("Claude Code 5h") at whose reset Next sends it again, and Prompt
	// is the refused message itself (Text may be "continue"): what its
	// Start with another CLI now button sends.
	Limit  string
	Prompt string
	// Agent marks a schedule the agent of a turn of From set (its
	// schedule tool): its message only ever starts a turn of its own,
	// marked as the agent's, with an agent's rights (Router.permitsOf).
	// Depth is how many agent schedules in a row it ends: 1 for one set
	// in a person's turn, 2 for one set in the turn that one started.
	Agent bool
	Depth int
}

// Spend is what turns cost: dollars where the CLI reports them (Claude
// Code), tokens where it reports only those (Codex, Gemini CLI).
type Spend struct {
	CostUSD      float64
	InputTokens  int
	OutputTokens int
	Turns        int
	// Unpriced counts the turns whose CLI reported no cost.
	Unpriced int
}

// add counts one turn's result.
func (s *Spend) add(res TurnResult) {
	s.CostUSD += res.CostUSD
	s.InputTokens += res.InputTokens
	s.OutputTokens += res.OutputTokens
	s.Turns++
	if res.CostUSD == 0 {
		s.Unpriced++
	}
}

// String says it in a line: "$0.0123 · 3 turns · 12.0k in / 3.1k out
// tokens", with a note when some turns' cost is unknown.
func (s Spend) String() string {
	if s.Turns == 0 {
		return "nothing yet"
	}
	out := fmt.Sprintf("$%.4f · %s · %s", s.CostUSD, plural(s.Turns, "turn"), Tokens(s.InputTokens, s.OutputTokens))
	if s.Unpriced > 0 {
		out += fmt.Sprintf(" (%d of them with no cost reported: counted in tokens only)", s.Unpriced)
	}
	return out
}

// UserSpend is one user's spend on one UTC day, as the state file keeps
// it.
type UserSpend struct {
	User string // "platform/user", as OwnerOf
	Day  string // 2006-01-02, UTC
	Spend
}

func (u UserSpend) key() string { return u.Day + " " + u.User }
