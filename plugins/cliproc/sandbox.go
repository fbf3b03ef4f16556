package cliproc

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The sandbox modes (SANDBOX): bwrap gives each CLI a mount, PID, IPC
// and user namespace of its own (bubblewrap); landlock leaves it in the
// bot's namespaces, its file access restricted by the kernel (Landlock,
// applied by `jakebot sandbox-exec`); off runs it as the bot's user with
// nothing hidden. auto picks the first of bwrap and landlock that works.
const (
	SandboxAuto     = "auto"
	SandboxBwrap    = "bwrap"
	SandboxLandlock = "landlock"
	SandboxOff      = "off"
)

// SandboxExecCommand is the sub-command of the helper (the jakebot
// binary) that applies Landlock's rules to itself, then executes the CLI:
// `jakebot sandbox-exec --write DIR … --read DIR … -- BIN ARGS…`.
const SandboxExecCommand = "sandbox-exec"

// DefaultSandboxUID is the user id CLIs have inside bwrap's sandbox when
// the bot runs as root: nobody's. The files they create are the bot's
// all the same (see SandboxConfig.UID).
const DefaultSandboxUID = 65534

// SandboxConfig says how NewSandbox chooses the sandbox.
type SandboxConfig struct {
	// Mode is one of the Sandbox* modes; empty means auto.
	Mode string
	// UID is the user and group id a CLI has inside bwrap's sandbox when
	// the bot runs as root (zero: DefaultSandboxUID). That id maps to the
	// bot's own outside, so the CLI reads and writes the workdir and its
	// state as the bot does, but holds no capability at all: root's
	// (CAP_DAC_READ_SEARCH's open_by_handle_at, CAP_SYS_ADMIN...) would
	// reach past every mount. A bot that is not root keeps its id.
	UID int
	// Read and Write are more paths every CLI sees, read-only and
	// read-write (SANDBOX_READ, SANDBOX_WRITE): a toolchain outside /usr,
	// a shared cache. A path that does not exist is left out.
	Read, Write []string
	// Helper is the program run as `Helper sandbox-exec …` to apply
	// Landlock (the jakebot binary); empty means this executable.
	Helper string
	// Bwrap is bubblewrap's binary; empty means bwrap on PATH.
	Bwrap string
}

// Sandbox is the wall every CLI the bot starts runs behind: it sees its
// workdir (with the git directory the workdir's repository uses) and its
// own state read-write, the system, its install directory and the
// configured paths read-only, a private /tmp, and nothing else of the
// bot's user. A nil *Sandbox is off. It is safe for concurrent use.
type Sandbox struct {
	mode   string
	bin    string // bwrap, or the Landlock helper
	uid    int    // inside bwrap, when root; -1 keeps the bot's
	read   []string
	write  []string
	detail string
	// nests says a CLI's own sandbox (user and mount namespaces, as
	// Codex's bwrap makes) works inside.
	nests bool
}

// NewSandbox chooses the sandbox cfg.Mode asks for, trying it on a run of
// /bin/true: with auto, bwrap when found on PATH and its trial succeeds,
// else Landlock when the kernel has it and its trial succeeds, else off,
// with Detail saying what failed. A mode asked for by name that fails
// its trial is an error. Off is a nil *Sandbox.
func NewSandbox(ctx context.Context, cfg SandboxConfig) (*Sandbox, error) {
	mode := cfg.Mode
	if mode == "" {
		mode = SandboxAuto
	}
	if !slices.Contains([]string{SandboxAuto, SandboxBwrap, SandboxLandlock, SandboxOff}, mode) {
		return nil, fmt.Errorf("SANDBOX=%q: want auto, bwrap, landlock or off", cfg.Mode)
	}
	if mode == SandboxOff {
		return nil, nil
	}
	var tried []string
	for _, m := range []string{SandboxBwrap, SandboxLandlock} {
		if mode != SandboxAuto && mode != m {
			continue
		}
		s, err := newSandbox(ctx, m, cfg)
		if err == nil {
			if len(tried) > 0 {
				s.detail += " (" + strings.Join(tried, "; ") + ")"
			}
			return s, nil
		}
		if mode != SandboxAuto {
			return nil, fmt.Errorf("SANDBOX=%s: %w", mode, err)
		}
		tried = append(tried, fmt.Sprintf("%s: %v", m, err))
	}
	return &Sandbox{mode: SandboxOff, detail: strings.Join(tried, "; ")}, nil
}

// newSandbox makes the sandbox of mode m and tries it.
func newSandbox(ctx context.Context, m string, cfg SandboxConfig) (*Sandbox, error) {
	s := &Sandbox{mode: m, uid: -1, read: existing(cfg.Read), write: existing(cfg.Write)}
	switch m {
	case SandboxBwrap:
		bin, err := exec.LookPath(cmp.Or(cfg.Bwrap, "bwrap"))
		if err != nil {
			return nil, errors.New("bubblewrap (bwrap) is not installed")
		}
		s.bin = bin
		if os.Geteuid() == 0 {
			s.uid = cmp.Or(cfg.UID, DefaultSandboxUID)
		}
	case SandboxLandlock:
		abi, err := landlockABI()
		if err != nil {
			return nil, err
		}
		s.bin = cfg.Helper
		if s.bin == "" {
			if s.bin, err = os.Executable(); err != nil {
				return nil, err
			}
		}
		s.detail = fmt.Sprintf("Landlock ABI %d", abi)
	}
	if err := s.try(ctx, "/bin/true"); err != nil {
		return nil, err
	}
	// Landlock forbids mounts; inside bwrap, the host may forbid nested
	// user namespaces.
	s.nests = m == SandboxBwrap && s.try(ctx, s.bin, "--unshare-user", "--ro-bind", "/", "/", "/bin/true") == nil
	return s, nil
}

// existing returns the paths of list that exist, absolute and cleaned,
// "~/" the bot's home.
func existing(list []string) []string {
	var out []string
	home, _ := os.UserHomeDir()
	for _, p := range list {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(p, "~/"); ok && home != "" {
			p = filepath.Join(home, rest)
		}
		if abs, err := filepath.Abs(p); err == nil {
			if _, err := os.Stat(abs); err == nil {
				out = append(out, abs)
			}
		}
	}
	return out
}

// try runs prog with args in the sandbox, in a workdir of its own.
func (s *Sandbox) try(ctx context.Context, prog string, args ...string) error {
	dir, err := os.MkdirTemp("", "jakebot-sandbox-try-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = dir
	done, err := s.wrap(cmd, walls{workdir: dir, home: dir, install: installDirs(prog, "")})
	if err != nil {
		return err
	}
	defer done()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("a trial run failed: %w: %s", err, StderrTail(string(out), 3))
	}
	return nil
}

// Mode is the sandbox's mode: bwrap, landlock or off.
func (s *Sandbox) Mode() string {
	if s == nil {
		return SandboxOff
	}
	return s.mode
}

// On reports whether CLIs run in a sandbox.
func (s *Sandbox) On() bool { return s.Mode() != SandboxOff }

// Nests reports whether a CLI's own sandbox can work inside this one (it
// can without one): Codex's needs user and mount namespaces, which
// Landlock forbids, as may the host inside bwrap.
func (s *Sandbox) Nests() bool { return !s.On() || s.nests }

// Summary says in a line what the sandbox is and hides, for the start-up
// log, /status and jakebot doctor.
func (s *Sandbox) Summary() string {
	var b strings.Builder
	switch s.Mode() {
	case SandboxBwrap:
		b.WriteString("bwrap: each CLI sees only its workdir, its own state and the system read-only, with its own /tmp and processes")
		if s.uid >= 0 {
			fmt.Fprintf(&b, ", as uid %d without capabilities", s.uid)
		}
	case SandboxLandlock:
		b.WriteString("landlock: each CLI reads and writes only its workdir and its own state, and reads the system; other processes stay listed")
	default:
		b.WriteString("off: every CLI runs as jakebot's own user, with nothing hidden")
	}
	if s != nil && s.detail != "" {
		b.WriteString(" (" + s.detail + ")")
	}
	return b.String()
}

// Warning says plainly what an agent can reach when there is no sandbox;
// empty when there is one.
func (s *Sandbox) Warning() string {
	if s.On() {
		return ""
	}
	return "no sandbox (SANDBOX=off, or neither bwrap nor Landlock works here): every agent can read and write whatever " +
		"jakebot's user can: the .env, ~/.ssh, other conversations' workdirs, other CLIs' environments (/proc/<pid>/environ)" +
		". Install bubblewrap (apt-get install bubblewrap) for SANDBOX=auto to use it"
}

// walls are the paths one CLI sees.
type walls struct {
	workdir string
	// home is the CLI's HOME: an empty folder unless a state path is
	// under it.
	home string
	// tmp is the CLI's TMPDIR, empty when it has none.
	tmp string
	// git are the git directories the workdir's repository uses outside
	// the workdir (a worktree's main repository's .git).
	git []string
	// state is the CLI's own state, shown read-write in order.
	state []StatePath
	// install are the CLI's install directories (and its
	// interpreter's), shown read-only.
	install []string
}

// StatePath is a file or folder a CLI keeps its state in, which its
// sandbox shows it read-write. A missing one is created first (a file
// holding Seed), so that what the CLI writes there lasts beyond the turn.
type StatePath struct {
	Path string
	// File says the path is a file; else it is a folder.
	File bool
	// Seed is what a missing file starts as: an empty file is not valid
	// JSON, which Claude Code refuses behind Landlock.
	Seed string
	// Empty shows the folder empty, hiding what the state paths before it
	// show there: what the CLI keeps for other workdirs. A state path
	// after it may show one of its entries again.
	Empty bool
}

// StateFunc lists a CLI's state paths, found from the CLI's environment
// (getenv reads it: HOME, CLAUDE_CONFIG_DIR...) for a turn in workdir.
type StateFunc func(getenv func(string) string, workdir string) []StatePath

// prepare creates the state paths that are missing, so that they can be
// shown; those it cannot create are left out.
func prepare(state []StatePath) []StatePath {
	out := make([]StatePath, 0, len(state))
	for _, p := range state {
		if p.Path == "" || !filepath.IsAbs(p.Path) {
			continue
		}
		if p.Empty {
			out = append(out, p)
			continue
		}
		if _, err := os.Lstat(p.Path); errors.Is(err, os.ErrNotExist) {
			if p.File {
				if os.MkdirAll(filepath.Dir(p.Path), 0o700) != nil {
					continue
				}
				if err := createFile(p.Path, p.Seed); err != nil && !errors.Is(err, os.ErrExist) {
					continue
				}
			} else if os.MkdirAll(p.Path, 0o700) != nil {
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

// createFile creates the file at path holding seed; one that exists
// already is left as it is (os.ErrExist).
func createFile(path, seed string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(seed)
	return errors.Join(err, f.Close())
}

// lookupIn returns a getenv over environ, whose last entry for a name
// wins, as in exec.Cmd.Env.
func lookupIn(environ []string) func(string) string {
	return func(name string) string {
		for i := len(environ) - 1; i >= 0; i-- {
			if k, v, ok := strings.Cut(environ[i], "="); ok && k == name {
				return v
			}
		}
		return ""
	}
}

// gitDirs returns the git directories the repository holding workdir
// keeps outside it: for a linked worktree, its main repository's .git,
// which holds the worktree's own. A worktree's .git file is the agent's
// to write: its main repository counts only when that repository's
// record of the worktree points back at this .git file, as git's own
// does. The .git of a plain repository above the workdir is not shown:
// it could be anyone's (a /tmp/.git, a home kept in git), and would show
// the whole repository's history; a workdir below its repository's top
// sees no repository.
func gitDirs(workdir string) []string {
	for dir := workdir; ; {
		dotgit := filepath.Join(dir, ".git")
		fi, err := os.Lstat(dotgit)
		switch {
		case err == nil && fi.IsDir():
			return nil
		case err == nil && fi.Mode().IsRegular():
			if common := worktreeCommon(dotgit); common != "" {
				return []string{common}
			}
			return nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil
		}
		dir = parent
	}
}

// worktreeCommon returns the main repository's git directory of the
// linked worktree whose .git file is dotgit, or "" when the file does not
// name one that names it back.
func worktreeCommon(dotgit string) string {
	data, err := os.ReadFile(dotgit)
	if err != nil {
		return ""
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return ""
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(filepath.Dir(dotgit), gitdir)
	}
	back, err := os.ReadFile(filepath.Join(gitdir, "gitdir"))
	if err != nil || !samePath(strings.TrimSpace(string(back)), dotgit) {
		return ""
	}
	common := filepath.Dir(filepath.Dir(gitdir)) // <common>/worktrees/<name>
	if c, err := os.ReadFile(filepath.Join(gitdir, "commondir")); err == nil {
		common = strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitdir, common)
		}
	}
	common = filepath.Clean(common)
	if _, err := os.Stat(filepath.Join(common, "HEAD")); err != nil {
		return ""
	}
	return common
}

// samePath reports whether a and b name the same file.
func samePath(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}
