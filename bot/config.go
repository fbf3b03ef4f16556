package bot

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"

	"github.com/jake-bot/jake-bot/bot/state"
	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/discord"
	"github.com/jake-bot/jake-bot/platforms/matrix"
	"github.com/jake-bot/jake-bot/platforms/mattermost"
	"github.com/jake-bot/jake-bot/platforms/slack"
	"github.com/jake-bot/jake-bot/platforms/telegram"
	"github.com/jake-bot/jake-bot/platforms/web"
	"github.com/jake-bot/jake-bot/plugins/claude"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/codex"
	"github.com/jake-bot/jake-bot/plugins/gemini"
	"github.com/jake-bot/jake-bot/plugins/remote"
)

// Config is everything jakebot reads from its environment. Every variable
// is documented in .env.example.
type Config struct {
	// AllowedRoots are the directories workdirs must stay inside; empty
	// means the directory jakebot starts in.
	AllowedRoots   []string      `env:"ALLOWED_ROOTS" envSeparator:","`
	DefaultWorkdir string        `env:"DEFAULT_WORKDIR"`
	TurnTimeout    time.Duration `env:"TURN_TIMEOUT" envDefault:"30m"`
	// TurnIdleTimeout stops a turn whose CLI printed nothing for that
	// long; zero means 10 minutes.
	TurnIdleTimeout time.Duration `env:"TURN_IDLE_TIMEOUT" envDefault:"10m"`
	QueueLimit      int           `env:"QUEUE_LIMIT" envDefault:"5"`
	// MaxRunningTurns and MaxUserTurns bound the turns running at once,
	// in the whole bot and per user; 0 means no limit.
	MaxRunningTurns int `env:"MAX_RUNNING_TURNS" envDefault:"8"`
	MaxUserTurns    int `env:"MAX_USER_TURNS" envDefault:"3"`
	// MaxMessageBytes is the longest message passed to a CLI; zero means
	// 100,000.
	MaxMessageBytes int    `env:"MAX_MESSAGE_BYTES" envDefault:"100000"`
	LogLevel        string `env:"LOG_LEVEL"`
	// ConsoleInput says how the console reads its input: "typed" sends
	// each line at once (a person can /stop a turn), "script" runs each
	// line once the one before it is done, and "auto" (or empty) is typed
	// on a terminal and a script otherwise.
	ConsoleInput string `env:"CONSOLE_INPUT" envDefault:"auto"`

	// WarmTTL, when positive, starts the next turn's CLI as soon as a
	// turn ends and stops it unused after WarmTTL; WarmMax bounds the
	// warm CLIs of the whole bot, zero (unset) meaning one per 1.6 GiB of
	// memory available at start-up, at most 4 (warmMax).
	WarmTTL time.Duration `env:"WARM_TTL" envDefault:"10m"`
	WarmMax int           `env:"WARM_MAX"`
	// Approvals says who decides on a tool call the CLI's permission mode
	// does not allow: "ask" (or empty) asks the chat, "auto" leaves it to
	// the mode. ApprovalTimeout denies a question nobody answered.
	Approvals       string        `env:"APPROVALS" envDefault:"ask"`
	ApprovalTimeout time.Duration `env:"APPROVAL_TIMEOUT" envDefault:"10m"`
	// Busy is what a message written while its conversation's turn runs
	// does: "steer" adds it to the turn where the CLI can take it, "queue"
	// has it wait for the turn to end (with Steer and Send now buttons).
	Busy string `env:"BUSY" envDefault:"steer"`
	// AgentTools are the tools of the bot's own MCP server that every
	// turn's agent reaches its chat through (issue 31): "all" (those of
	// core.AllAgentTools), a comma list of them, or "off".
	AgentTools string `env:"AGENT_TOOLS" envDefault:"all"`
	// BackgroundLimit is how long a turn stays open after its answer for
	// background work its CLI reports on when it ends.
	BackgroundLimit time.Duration `env:"BACKGROUND_LIMIT" envDefault:"30m"`
	// AllowBypassModes lets users who are not admins pick, with /mode, a
	// mode in which tools run with nobody approving them.
	AllowBypassModes bool `env:"ALLOW_BYPASS_MODES" envDefault:"false"`
	// Worktrees is "always" to give every conversation started in a git
	// repository a worktree of its own, "never" (the default) to do so
	// only for /<plugin> start --worktree. WorktreeDir is where worktrees
	// go (inside ALLOWED_ROOTS); empty means <repository>/.jakebot/worktrees.
	Worktrees string `env:"WORKTREES" envDefault:"never"`
	// BudgetTurnUSD stops a turn whose reported cost reaches it;
	// BudgetUserDailyUSD refuses new turns to a user who spent it today
	// (UTC), BudgetUserDailyTokens to one whose turns used that many
	// tokens today. Zero is no budget. Admins are exempt unless
	// BudgetAdmins.
	BudgetTurnUSD         float64 `env:"BUDGET_TURN_USD" envDefault:"0"`
	BudgetUserDailyUSD    float64 `env:"BUDGET_USER_DAILY_USD" envDefault:"0"`
	BudgetUserDailyTokens int     `env:"BUDGET_USER_DAILY_TOKENS" envDefault:"0"`
	BudgetAdmins          bool    `env:"BUDGET_ADMINS" envDefault:"false"`
	// NotifyAfter: a turn that ran longer @mentions its author when it
	// ends (a new message on Telegram); 0 is never. Questions always do.
	NotifyAfter time.Duration `env:"NOTIFY_AFTER" envDefault:"60s"`
	WorktreeDir string        `env:"WORKTREE_DIR"`
	// LimitWarn: a reply warns of a CLI's usage window used past this
	// percent (1 to 100; 100 warns only when a window refused a turn).
	LimitWarn int `env:"LIMIT_WARN" envDefault:"80"`
	// UnattendedApprovals answers the questions of turns the bot sent on
	// a user's behalf (schedules, continuations at a window's reset):
	// deny at once, or ask as any other.
	UnattendedApprovals string `env:"UNATTENDED_APPROVALS" envDefault:"deny"`
	// UnattendedTurnsPerDay caps each user's turns per UTC day that
	// nobody started by writing (schedules, the agent's schedules,
	// continuations); 0: no cap. A schedule every 15 minutes (96 a day)
	// fits; an agent keeping its conversation going through its
	// schedules stops within the day.
	UnattendedTurnsPerDay int `env:"UNATTENDED_TURNS_PER_DAY" envDefault:"100"`
	// Reactions marks each user's message with its turn's state (👀 ⏳ ✅
	// ❌ 🛑 🔁, or what the platform accepts) where the platform can.
	Reactions bool `env:"REACTIONS" envDefault:"true"`
	// ReviewPlugin pairs every new conversation of another plugin with
	// it as reviewer, for ReviewRounds rounds, as /pair does; empty: no
	// pairing unless /pair asks.
	ReviewPlugin string `env:"REVIEW_PLUGIN"`
	ReviewRounds int    `env:"REVIEW_ROUNDS" envDefault:"2"`
	// AttachmentMaxBytes bounds a file a user sends or /file sends back
	// (Telegram's own getFile limit by default).
	AttachmentMaxBytes int64 `env:"ATTACHMENT_MAX_BYTES" envDefault:"20971520"`
	// TranscribeCmd hears voice notes: a command, with {file} where the
	// note's path goes, that prints its text (a local whisper.cpp, say).
	// Empty: voice notes are refused with how to set it.
	TranscribeCmd cliproc.Args `env:"TRANSCRIBE_CMD"`
	// LongReplyPages: an answer longer than that many messages comes as
	// its first page and the whole answer as a .md file, where the
	// platform sends files; 0 streams every page.
	LongReplyPages int `env:"LONG_REPLY_PAGES" envDefault:"4"`

	// UserRate limits messages per user, "N/s", "N/m" or "N/h"; empty or
	// "off" is no limit.
	UserRate string `env:"USER_RATE" envDefault:"20/m"`
	// ShutdownGrace is how long running turns may finish after SIGINT or
	// SIGTERM before they are cancelled; zero means 30 seconds.
	// ShutdownDeadline is how long a cancelled turn may take to end before
	// jakebot exits without it, its CLI killed; zero means 15 seconds.
	ShutdownGrace    time.Duration `env:"SHUTDOWN_GRACE" envDefault:"30s"`
	ShutdownDeadline time.Duration `env:"SHUTDOWN_DEADLINE" envDefault:"15s"`
	// StateFile is where conversations are kept across restarts. From the
	// environment, empty means the default path (state.DefaultPath);
	// "off", or empty in a Config built by hand, keeps them in memory only.
	StateFile string `env:"STATE_FILE"`
	// AuditLog, when set, is a file that gets one JSON line per command
	// and turn; AuditLogText adds the message text.
	AuditLog     string `env:"AUDIT_LOG"`
	AuditLogText bool   `env:"AUDIT_LOG_TEXT" envDefault:"false"`
	// HealthAddr, when set, serves /healthz and /metrics there, e.g.
	// 127.0.0.1:9090.
	HealthAddr string `env:"HEALTH_ADDR"`
	// PluginsFile is a YAML file of further CLIs to run as plugins
	// (plugins/configured); empty means none.
	PluginsFile string `env:"PLUGINS_FILE"`
	// SandboxMode is the wall every CLI runs behind: auto (or empty),
	// bwrap, landlock or off (cliproc.NewSandbox). SandboxUID is the
	// user id inside bwrap when jakebot is root; SandboxRead and
	// SandboxWrite are more paths every CLI sees.
	SandboxMode  string   `env:"SANDBOX" envDefault:"auto"`
	SandboxUID   int      `env:"SANDBOX_UID"`
	SandboxRead  []string `env:"SANDBOX_READ" envSeparator:","`
	SandboxWrite []string `env:"SANDBOX_WRITE" envSeparator:","`

	Claude   claude.Config
	Codex    codex.Config
	Gemini   gemini.Config
	Discord  discord.Config
	Slack    slack.Config
	Telegram telegram.Config
	Web      web.Config
	// Mattermost is the Mattermost bot account (MATTERMOST_*).
	Mattermost mattermost.Config
	// Matrix is the Matrix bot account (MATRIX_*).
	Matrix matrix.Config
	// NATS, when NATS_URL is set, reaches the runners on other machines
	// (and is how `jakebot runner` reaches the bot).
	NATS remote.Config

	// Secrets are the values of secret-looking variables (tokens, keys,
	// passwords) found by LoadConfig; they are blanked out of every log
	// and audit line and of everything sent to a chat, in case anything
	// ever prints one.
	Secrets []string `env:"-"`
	// ChildEnv is the environment every CLI starts from: jakebot's own
	// and .env's (the real environment wins), minus the bot's own secrets
	// (WithheldVars). Nil, in a Config built by hand, means jakebot's own.
	ChildEnv []string `env:"-"`
	// Sandbox is the sandbox chosen at start-up from SandboxMode
	// (ChooseSandbox), which every plugin's CLI runs behind; nil is none.
	Sandbox *cliproc.Sandbox `env:"-"`
	// Clock and Timers replace real time in the router when set (see
	// core.RouterConfig): tests pass fake clocks to decide when edit
	// intervals pass, schedules fire and questions time out.
	Clock  core.Clock `env:"-"`
	Timers core.Clock `env:"-"`
	// Dotenv is the .env file read, when there was one, and DotenvWithheld
	// the withheld variables it sets: such a file must stay out of every
	// agent's reach (see CheckSecretFiles).
	Dotenv         string   `env:"-"`
	DotenvWithheld []string `env:"-"`
}

// LoadConfig reads the configuration from environ (os.Environ's form) and,
// when dotenv names a readable file, from it too; the real environment
// wins over the file.
func LoadConfig(environ []string, dotenv string) (Config, error) {
	var cfg Config
	vars, fileVars, err := readVars(environ, dotenv)
	if err != nil {
		return Config{}, err
	}
	if fileVars != nil {
		if cfg.Dotenv, err = filepath.Abs(dotenv); err != nil {
			return Config{}, err
		}
	}
	if err := env.ParseWithOptions(&cfg, env.Options{Environment: vars}); err != nil {
		return Config{}, explain(err, vars)
	}
	if err := cfg.check(); err != nil {
		return Config{}, err
	}
	if cfg.StateFile == "" {
		if cfg.StateFile, err = state.DefaultPath(); err != nil {
			return Config{}, err
		}
	}
	cfg.Secrets = secretValues(vars)
	cfg.ChildEnv = childEnv(environ, fileVars)
	for k := range fileVars {
		if Withheld(k) {
			cfg.DotenvWithheld = append(cfg.DotenvWithheld, k)
		}
	}
	slices.Sort(cfg.DotenvWithheld)
	return cfg, nil
}

// readVars reads the variables of dotenv (nil when there is no such file)
// and of environ, which wins, into one map.
func readVars(environ []string, dotenv string) (vars, fileVars map[string]string, err error) {
	vars = map[string]string{}
	if dotenv != "" {
		fileVars, err = readDotenv(dotenv)
		if err != nil && !os.IsNotExist(err) {
			return nil, nil, err
		}
		maps.Copy(vars, fileVars)
	}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	return vars, fileVars, nil
}

// check refuses settings that parse but mean nothing.
func (cfg Config) check() error {
	if _, err := parseLevel(cfg.LogLevel); err != nil {
		return err
	}
	switch {
	case !slices.Contains([]string{"", "auto", "typed", "script"}, cfg.ConsoleInput):
		return fmt.Errorf("CONSOLE_INPUT=%q: want auto, typed or script", cfg.ConsoleInput)
	case !slices.Contains([]string{"", "ask", "auto"}, cfg.Approvals):
		return fmt.Errorf("APPROVALS=%q: want ask or auto", cfg.Approvals)
	case !slices.Contains([]string{"", "steer", "queue"}, cfg.Busy):
		return fmt.Errorf("BUSY=%q: want steer or queue", cfg.Busy)
	case cfg.BackgroundLimit <= 0:
		return fmt.Errorf("BACKGROUND_LIMIT=%s: want a duration above 0", cfg.BackgroundLimit)
	case cfg.BudgetTurnUSD < 0 || cfg.BudgetUserDailyUSD < 0 || cfg.BudgetUserDailyTokens < 0:
		return fmt.Errorf("BUDGET_TURN_USD, BUDGET_USER_DAILY_USD and BUDGET_USER_DAILY_TOKENS must be 0 (no budget) or more")
	case !slices.Contains([]string{"", core.UnattendedDeny, core.UnattendedAsk}, cfg.UnattendedApprovals):
		return fmt.Errorf("UNATTENDED_APPROVALS=%q: want deny or ask", cfg.UnattendedApprovals)
	case cfg.UnattendedTurnsPerDay < 0:
		return fmt.Errorf("UNATTENDED_TURNS_PER_DAY=%d: want 0 (no cap) or more", cfg.UnattendedTurnsPerDay)
	case cfg.LimitWarn < 1 || cfg.LimitWarn > 100:
		return fmt.Errorf("LIMIT_WARN=%d: want a percent from 1 to 100", cfg.LimitWarn)
	case cfg.ReviewRounds < 1 || cfg.ReviewRounds > 10:
		return fmt.Errorf("REVIEW_ROUNDS=%d: want a number of rounds from 1 to 10", cfg.ReviewRounds)
	case cfg.LongReplyPages < 0:
		return fmt.Errorf("LONG_REPLY_PAGES=%d: want 0 (off) or more", cfg.LongReplyPages)
	case cfg.ShutdownDeadline <= 0:
		return fmt.Errorf("SHUTDOWN_DEADLINE=%s: want a duration above 0, such as 15s", cfg.ShutdownDeadline)
	case cfg.AttachmentMaxBytes < 0:
		return fmt.Errorf("ATTACHMENT_MAX_BYTES=%d: want a size in bytes", cfg.AttachmentMaxBytes)
	case !slices.Contains([]string{"", "never", "always"}, cfg.Worktrees):
		return fmt.Errorf("WORKTREES=%q: want always or never", cfg.Worktrees)
	case !slices.Contains([]string{"", cliproc.SandboxAuto, cliproc.SandboxBwrap, cliproc.SandboxLandlock, cliproc.SandboxOff}, cfg.SandboxMode):
		return fmt.Errorf("SANDBOX=%q: want auto, bwrap, landlock or off", cfg.SandboxMode)
	case cfg.SandboxUID < 0:
		return fmt.Errorf("SANDBOX_UID=%d: want a user id", cfg.SandboxUID)
	}
	if _, err := cfg.agentTools(); err != nil {
		return err
	}
	if _, err := core.ParseRate(cfg.UserRate); err != nil {
		return fmt.Errorf("USER_RATE: %w", err)
	}
	return nil
}

// readDotenv reads KEY=VALUE lines; blank lines and # comments are
// skipped, and one pair of surrounding quotes is removed from a value.
func readDotenv(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	vars := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if !ok {
			return nil, fmt.Errorf("%s:%d: want KEY=VALUE", path, n)
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		vars[strings.TrimSpace(k)] = v
	}
	return vars, sc.Err()
}

// parseLevel reads LOG_LEVEL; unset is info (the console raises it to
// warn, see Run).
func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if s == "" {
		return slog.LevelInfo, nil
	}
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("LOG_LEVEL %q: want debug, info, warn or error", s)
	}
	return l, nil
}

// budgets are the router's Budgets.
func (cfg Config) budgets() core.Budgets {
	return core.Budgets{TurnUSD: cfg.BudgetTurnUSD, UserDailyUSD: cfg.BudgetUserDailyUSD,
		UserDailyTokens: cfg.BudgetUserDailyTokens, Admins: cfg.BudgetAdmins}
}

// BudgetWarning is what start-up warns of a dollar budget that leaves some
// CLIs unbounded: only Claude Code reports what a turn cost, and
// BUDGET_USER_DAILY_TOKENS, which bounds every CLI, is not set. Empty when
// there is nothing to warn of.
func (cfg Config) BudgetWarning() string {
	if (cfg.BudgetTurnUSD == 0 && cfg.BudgetUserDailyUSD == 0) || cfg.BudgetUserDailyTokens > 0 {
		return ""
	}
	return "BUDGET_TURN_USD and BUDGET_USER_DAILY_USD count dollars, which only Claude Code reports: turns of Codex, " +
		"Gemini CLI and PLUGINS_FILE CLIs are not bounded by them (their chats are told so). Set BUDGET_USER_DAILY_TOKENS to bound every CLI"
}

// agentTools reads AGENT_TOOLS: nil for off.
func (cfg Config) agentTools() ([]string, error) {
	v := strings.TrimSpace(cfg.AgentTools)
	switch v {
	case "off", "":
		return nil, nil
	case "all":
		return slices.Clone(core.AllAgentTools), nil
	}
	var tools []string
	for t := range strings.SplitSeq(v, ",") {
		t = strings.TrimSpace(t)
		if !slices.Contains(core.AllAgentTools, t) {
			return nil, fmt.Errorf("AGENT_TOOLS: no tool %q: want all, off or a comma list of %s", t, strings.Join(core.AllAgentTools, ", "))
		}
		if !slices.Contains(tools, t) {
			tools = append(tools, t)
		}
	}
	return tools, nil
}

// ChooseSandbox chooses the sandbox SANDBOX asks for, trying it (see
// cliproc.NewSandbox): a mode asked for by name that does not work here is
// an error. The helper that applies Landlock is this executable.
func (cfg Config) ChooseSandbox(ctx context.Context) (*cliproc.Sandbox, error) {
	return cliproc.NewSandbox(ctx, cliproc.SandboxConfig{Mode: cfg.SandboxMode, UID: cfg.SandboxUID,
		Read: cfg.SandboxRead, Write: cfg.SandboxWrite})
}

// logSandbox says at start-up which sandbox the CLIs run behind, and
// warns of what an agent reaches when there is none.
func logSandbox(s *cliproc.Sandbox, logger *slog.Logger) {
	logger.Info("sandbox", "mode", s.Mode(), "summary", s.Summary())
	if w := s.Warning(); w != "" {
		logger.Warn(w)
	}
}
