// Package state keeps the router's conversations across restarts: it
// mirrors core.Conversations, which stays the source of truth, to a JSON
// file that is written atomically (temporary file, fsync, rename) and at
// most once per debounce interval, and read back at start-up.
//
// It lives under bot, not core, because it is wiring: a file format and
// disk I/O for one process, chosen by the bot's configuration. core only
// offers the hooks (Conversations.All, Load, OnChange).
package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jake-bot/jake-bot/core"
)

// version is the file format's version; a file of another version is
// treated like a corrupt one.
const version = 1

type file struct {
	Version       int       `json:"version"`
	Saved         time.Time `json:"saved"`
	Conversations []entry   `json:"conversations"`
	Sessions      []owner   `json:"sessions,omitempty"`
	// Spend is each user's spend per UTC day, the last month of it.
	Spend []daySpend `json:"spend,omitempty"`
	// Schedules are the messages /at and /every send.
	Schedules []schedule `json:"schedules,omitempty"`
	// Windows are the CLIs' usage windows as last reported, for /usage
	// and the continuations at their resets.
	Windows []core.UsageWindow `json:"usage_windows,omitempty"`
}

type schedule struct {
	ID       int       `json:"id"`
	Platform string    `json:"platform"`
	User     string    `json:"user,omitempty"`
	Channel  string    `json:"channel,omitempty"`
	Thread   string    `json:"thread,omitempty"`
	From     string    `json:"from"`
	UserName string    `json:"user_name,omitempty"`
	Text     string    `json:"text"`
	Next     time.Time `json:"next"`
	Every    string    `json:"every,omitempty"`
	Cron     string    `json:"cron,omitempty"`
	// Limit names the usage window at whose reset a refused turn is sent
	// again, Prompt the refused message itself.
	Limit  string `json:"limit,omitempty"`
	Prompt string `json:"prompt,omitempty"`
	// Agent marks a schedule the agent of a turn set, whose message is
	// never a command nor an answer (core.Schedule.Agent).
	Agent bool `json:"agent,omitempty"`
	Depth int  `json:"depth,omitempty"`
}

// spend is what turns cost, in dollars where known and tokens.
type spend struct {
	CostUSD      float64 `json:"cost_usd,omitempty"`
	InputTokens  int     `json:"input_tokens,omitempty"`
	OutputTokens int     `json:"output_tokens,omitempty"`
	Turns        int     `json:"turns,omitempty"`
	Unpriced     int     `json:"unpriced_turns,omitempty"`
}

type daySpend struct {
	User string `json:"user"`
	Day  string `json:"day"`
	spend
}

func toSpend(s core.Spend) spend {
	return spend{CostUSD: s.CostUSD, InputTokens: s.InputTokens, OutputTokens: s.OutputTokens, Turns: s.Turns, Unpriced: s.Unpriced}
}

func (s spend) core() core.Spend {
	return core.Spend{CostUSD: s.CostUSD, InputTokens: s.InputTokens, OutputTokens: s.OutputTokens, Turns: s.Turns, Unpriced: s.Unpriced}
}

// owner says who started a CLI session from chat.
type owner struct {
	Plugin  string `json:"plugin"`
	Session string `json:"session"`
	Owner   string `json:"owner"`
}

// Snapshot is what the file holds: the active conversations, who
// started each CLI session from chat, and what users spent.
type Snapshot struct {
	Conversations []core.Entry
	Owners        []core.SessionOwner
	Spend         []core.UserSpend
	Schedules     []core.Schedule
	Windows       []core.UsageWindow
}

// Take returns convs' snapshot.
func Take(convs *core.State) Snapshot {
	return Snapshot{Conversations: convs.All(), Owners: convs.Owners(), Spend: convs.Spends(), Schedules: convs.Schedules(), Windows: convs.Windows()}
}

type entry struct {
	Platform string `json:"platform"`
	User     string `json:"user,omitempty"`
	Channel  string `json:"channel,omitempty"`
	Thread   string `json:"thread,omitempty"`
	Plugin   string `json:"plugin"`
	// Runner is the runner the conversation works on; Workdir, Worktree
	// and Repo are paths there. A file written before there was a runner
	// field kept them as "runner:path" (see oldForm).
	Runner    string    `json:"runner,omitempty"`
	Workdir   string    `json:"workdir"`
	SessionID string    `json:"resume_token,omitempty"`
	Started   time.Time `json:"started"`
	LastUsed  time.Time `json:"last_used"`
	// AllowedTools are the tools always allowed in the conversation.
	AllowedTools []string `json:"allowed_tools,omitempty"`
	// Model, Mode and Approvals are what /model and /mode chose.
	Model     string `json:"model,omitempty"`
	Mode      string `json:"mode,omitempty"`
	Approvals string `json:"approvals,omitempty"`
	// Worktree, Branch and Repo are the conversation's own worktree.
	Worktree string `json:"worktree,omitempty"`
	Branch   string `json:"branch,omitempty"`
	Repo     string `json:"repo,omitempty"`
	// Spent is what the conversation's turns cost.
	Spent *spend `json:"spent,omitempty"`
	// Helpers are its other agents' sessions (/ask, /review, /pair);
	// Pair and PairRounds what /pair chose; Reviewed the parts of the
	// diff the last review saw.
	Helpers    []helper `json:"helpers,omitempty"`
	Pair       string   `json:"pair,omitempty"`
	PairRounds int      `json:"pair_rounds,omitempty"`
	Reviewed   []string `json:"reviewed,omitempty"`
	// LastRequest is its person's last request to its author, which a
	// review shows the reviewer.
	LastRequest string `json:"last_request,omitempty"`
}

// helper is one of a conversation's helper agents (core.Helper).
type helper struct {
	Plugin    string `json:"plugin"`
	SessionID string `json:"resume_token,omitempty"`
}

func helpersOf(hs []core.Helper) []helper {
	var out []helper
	for _, h := range hs {
		out = append(out, helper{Plugin: h.Plugin, SessionID: h.SessionID})
	}
	return out
}

func (e entry) helpers() []core.Helper {
	var out []core.Helper
	for _, h := range e.Helpers {
		if h.Plugin != "" {
			out = append(out, core.Helper{Plugin: h.Plugin, SessionID: h.SessionID})
		}
	}
	return out
}

// DefaultPath returns $XDG_STATE_HOME/jakebot/state.json, or
// ~/.local/state/jakebot/state.json when XDG_STATE_HOME is unset.
func DefaultPath() (string, error) {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("state file: %w", err)
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "jakebot", "state.json"), nil
}

// Decode parses a state file's contents.
func Decode(data []byte) (Snapshot, error) {
	var f file
	if err := json.Unmarshal(data, &f); err != nil {
		return Snapshot{}, fmt.Errorf("decode state: %w", err)
	}
	if f.Version != version {
		return Snapshot{}, fmt.Errorf("decode state: version %d, want %d", f.Version, version)
	}
	out := make([]core.Entry, 0, len(f.Conversations))
	for i, e := range f.Conversations {
		if e.Platform == "" || e.Plugin == "" || e.Workdir == "" {
			return Snapshot{}, fmt.Errorf("decode state: conversation %d lacks its platform, plugin or workdir", i)
		}
		out = append(out, core.Entry{
			Key: core.ConversationKey{Platform: e.Platform, User: e.User, Channel: e.Channel, Thread: e.Thread},
			Conversation: oldForm(core.Conversation{Plugin: e.Plugin, Runner: e.Runner, Workdir: e.Workdir, SessionID: e.SessionID,
				Started: e.Started, LastUsed: e.LastUsed, AllowedTools: e.AllowedTools,
				Model: e.Model, Mode: e.Mode, Approvals: e.Approvals, Worktree: e.Worktree, Branch: e.Branch, Repo: e.Repo, Spent: e.Spent.orZero(),
				Helpers: e.helpers(), Pair: e.Pair, PairRounds: e.PairRounds, Reviewed: e.Reviewed, LastRequest: e.LastRequest}),
		})
	}
	var owners []core.SessionOwner
	for i, o := range f.Sessions {
		if o.Plugin == "" || o.Session == "" || o.Owner == "" {
			return Snapshot{}, fmt.Errorf("decode state: session %d lacks its plugin, id or owner", i)
		}
		owners = append(owners, core.SessionOwner{Plugin: o.Plugin, SessionID: o.Session, Owner: o.Owner})
	}
	var spends []core.UserSpend
	for i, d := range f.Spend {
		if d.User == "" || d.Day == "" {
			return Snapshot{}, fmt.Errorf("decode state: spend %d lacks its user or day", i)
		}
		spends = append(spends, core.UserSpend{User: d.User, Day: d.Day, Spend: d.spend.core()})
	}
	var schedules []core.Schedule
	for i, sc := range f.Schedules {
		every, err := parseEvery(sc.Every)
		if sc.ID <= 0 || sc.Platform == "" || sc.From == "" || sc.Text == "" || sc.Next.IsZero() || err != nil {
			return Snapshot{}, fmt.Errorf("decode state: schedule %d lacks its id, place, author, text or time", i)
		}
		schedules = append(schedules, core.Schedule{ID: sc.ID,
			Key:  core.ConversationKey{Platform: sc.Platform, User: sc.User, Channel: sc.Channel, Thread: sc.Thread},
			From: sc.From, UserName: sc.UserName, Text: sc.Text, Next: sc.Next, Every: every, Cron: sc.Cron, Limit: sc.Limit, Prompt: sc.Prompt, Agent: sc.Agent, Depth: sc.Depth})
	}
	for i, w := range f.Windows {
		if w.Plugin == "" || w.Window == "" {
			return Snapshot{}, fmt.Errorf("decode state: usage window %d lacks its plugin or name", i)
		}
	}
	return Snapshot{Conversations: out, Owners: owners, Spend: spends, Schedules: schedules, Windows: f.Windows}, nil
}

// oldForm converts a conversation on a runner saved before there was a
// runner field, its paths "runner:path", to the runner and plain paths.
// A path here is absolute, so never of that form.
func oldForm(c core.Conversation) core.Conversation {
	runner, workdir, ok := core.SplitRunner(c.Workdir)
	if c.Runner != "" || !ok {
		return c
	}
	c.Runner, c.Workdir = runner, workdir
	c.Worktree = strings.TrimPrefix(c.Worktree, runner+":")
	c.Repo = strings.TrimPrefix(c.Repo, runner+":")
	return c
}

// Encode returns a state file's contents for a snapshot.
func Encode(snap Snapshot, saved time.Time) ([]byte, error) {
	f := file{Version: version, Saved: saved.UTC(), Conversations: make([]entry, 0, len(snap.Conversations))}
	for _, o := range snap.Owners {
		f.Sessions = append(f.Sessions, owner{Plugin: o.Plugin, Session: o.SessionID, Owner: o.Owner})
	}
	for _, sc := range snap.Schedules {
		every := ""
		if sc.Every > 0 {
			every = sc.Every.String()
		}
		f.Schedules = append(f.Schedules, schedule{ID: sc.ID, Platform: sc.Key.Platform, User: sc.Key.User, Channel: sc.Key.Channel,
			Thread: sc.Key.Thread, From: sc.From, UserName: sc.UserName, Text: sc.Text, Next: sc.Next.UTC(),
			Every: every, Cron: sc.Cron, Limit: sc.Limit, Prompt: sc.Prompt, Agent: sc.Agent, Depth: sc.Depth})
	}
	f.Windows = snap.Windows
	for _, d := range snap.Spend {
		f.Spend = append(f.Spend, daySpend{User: d.User, Day: d.Day, spend: toSpend(d.Spend)})
	}
	for _, e := range snap.Conversations {
		f.Conversations = append(f.Conversations, entry{
			Platform: e.Key.Platform, User: e.Key.User, Channel: e.Key.Channel, Thread: e.Key.Thread,
			Plugin: e.Plugin, Runner: e.Runner, Workdir: e.Workdir, SessionID: e.SessionID, Started: e.Started, LastUsed: e.LastUsed,
			AllowedTools: e.AllowedTools, Model: e.Model, Mode: e.Mode, Approvals: e.Approvals,
			Worktree: e.Worktree, Branch: e.Branch, Repo: e.Repo, Spent: spendOrNil(e.Spent),
			Helpers: helpersOf(e.Helpers), Pair: e.Pair, PairRounds: e.PairRounds, Reviewed: e.Reviewed, LastRequest: e.LastRequest,
		})
	}
	return json.MarshalIndent(f, "", "  ")
}

// Load reads the state file at path. A missing file is no conversations
// and no error. A file that cannot be read or decoded is moved aside (to
// path.corrupt-<time>) with a warning and the bot starts empty: a bad
// state file must never keep the bot from starting.
func Load(path string, logger *slog.Logger) Snapshot {
	logger = core.OrDiscard(logger)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Snapshot{}
	}
	if err == nil {
		var snap Snapshot
		if snap, err = Decode(data); err == nil {
			logger.Info("state loaded", "path", path, "conversations", len(snap.Conversations), "sessions", len(snap.Owners))
			return snap
		}
	}
	aside := fmt.Sprintf("%s.corrupt-%s", path, time.Now().UTC().Format("20060102T150405Z"))
	if rerr := os.Rename(path, aside); rerr != nil {
		logger.Warn("state file unusable and could not be moved aside; starting empty", "path", path, "err", err, "rename_err", rerr)
		return Snapshot{}
	}
	logger.Warn("state file unusable, moved aside; starting with no conversations", "path", path, "moved_to", aside, "err", err)
	return Snapshot{}
}

// Save writes snap to path atomically: a crash leaves either the old
// file or the new one, never a torn one. The file is private to the
// bot's user (it names workdirs and sessions).
func Save(path string, snap Snapshot, now time.Time) error {
	data, err := Encode(snap, now)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing to remove
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("save state: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("save state: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	// Make the rename itself durable.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Mirror writes a Conversations map to a file whenever it changes, at most
// once per interval. It is safe for concurrent use.
type Mirror struct {
	path     string // for logs
	write    func(Snapshot, time.Time) error
	convs    *core.State
	interval time.Duration
	clock    core.Clock
	logger   *slog.Logger

	mu      sync.Mutex
	pending bool // a write is scheduled
	closed  bool
	// saving serialises writes, so an older snapshot never lands last.
	saving sync.Mutex
}

// NewMirror starts mirroring convs to path; it registers convs.OnChange,
// so call it before the map is used. A nil clock is the system clock.
func NewMirror(path string, convs *core.State, interval time.Duration, clock core.Clock, logger *slog.Logger) *Mirror {
	return NewMirrorTo(path, func(s Snapshot, now time.Time) error { return Save(path, s, now) }, convs, interval, clock, logger)
}

// NewMirrorTo is NewMirror writing with write instead of to a file; where
// names the place in logs.
func NewMirrorTo(where string, write func(Snapshot, time.Time) error, convs *core.State, interval time.Duration, clock core.Clock, logger *slog.Logger) *Mirror {
	if clock == nil {
		clock = core.SystemClock{}
	}
	logger = core.OrDiscard(logger)
	m := &Mirror{path: where, write: write, convs: convs, interval: interval, clock: clock, logger: logger}
	convs.OnChange(m.changed)
	return m
}

func (m *Mirror) changed() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pending || m.closed {
		return
	}
	m.pending = true
	m.clock.AfterFunc(m.interval, m.flush)
}

func (m *Mirror) flush() {
	m.mu.Lock()
	m.pending = false
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return // Close wrote the final state; the store may be gone
	}
	if err := m.save(); err != nil {
		m.logger.Error("state not saved", "path", m.path, "err", err)
	}
}

func (m *Mirror) save() error {
	m.saving.Lock()
	defer m.saving.Unlock()
	return m.write(Take(m.convs), m.clock.Now())
}

// Flush writes the state now, and says whether that failed.
func (m *Mirror) Flush() error { return m.save() }

// Close stops mirroring and writes the final state.
func (m *Mirror) Close() error {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	return m.save()
}

func (s *spend) orZero() core.Spend {
	if s == nil {
		return core.Spend{}
	}
	return s.core()
}

func spendOrNil(s core.Spend) *spend {
	if s == (core.Spend{}) {
		return nil
	}
	sp := toSpend(s)
	return &sp
}

func parseEvery(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	return time.ParseDuration(s)
}
