package configured

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/jake-bot/jake-bot/plugins/cliproc"
)

// Options says what Load checks beyond the file itself.
type Options struct {
	// Taken returns why a plugin id may not be used (a built-in plugin,
	// a command word), or "" when it is free.
	Taken func(id string) string
	// SkipLookPath leaves binaries unchecked, for jakebot doctor, which
	// reports a missing CLI on its own line.
	SkipLookPath bool
}

// ConfigError is a mistake in the plugins file, with where it is.
type ConfigError struct {
	File string
	Line int
	Msg  string
}

func (e *ConfigError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// Defaults for what an entry leaves out.
const (
	DefaultCols   = 100
	DefaultRows   = 40
	DefaultSettle = 300 * time.Millisecond
)

// Load reads and checks the plugins file at path. Every mistake found is
// returned (joined), each a *ConfigError naming the file and line.
func Load(path string, opts Options) ([]Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("plugins file: %w", err)
	}
	return Parse(path, data, opts)
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// Parse checks the plugins file's contents; file names it in errors and
// is where a relative bin with a slash is found from.
func Parse(file string, data []byte, opts Options) ([]Spec, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
			line, _ := strconv.Atoi(m[1])
			return nil, &ConfigError{file, line, m[2]}
		}
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	p := &loader{file: file, opts: opts, ids: map[string]int{}}
	specs := p.document(&doc)
	return specs, errors.Join(p.errs...)
}

type loader struct {
	file string
	opts Options
	errs []error
	ids  map[string]int // id -> line
}

func (l *loader) errorf(n *yaml.Node, format string, args ...any) {
	l.errs = append(l.errs, &ConfigError{l.file, n.Line, fmt.Sprintf(format, args...)})
}

func (l *loader) document(doc *yaml.Node) []Spec {
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil // an empty file configures nothing
	}
	root := doc.Content[0]
	var list *yaml.Node
	for key, val := range l.fields(root, "the top level", "plugins") {
		if key == "plugins" {
			list = val
		}
	}
	if list == nil {
		if root.Kind == yaml.MappingNode {
			l.errorf(root, "want a top-level `plugins:` list")
		}
		return nil
	}
	if list.Kind != yaml.SequenceNode {
		l.errorf(list, "plugins: want a list of entries")
		return nil
	}
	var specs []Spec
	for _, n := range list.Content {
		if s, ok := l.entry(n); ok {
			specs = append(specs, s)
		}
	}
	return specs
}

// fields iterates a mapping's keys and values, reporting keys that are
// not allowed or given twice.
func (l *loader) fields(n *yaml.Node, what string, allowed ...string) func(func(string, *yaml.Node) bool) {
	return func(yield func(string, *yaml.Node) bool) {
		if n.Kind != yaml.MappingNode {
			l.errorf(n, "%s: want a mapping of keys to values", what)
			return
		}
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			switch {
			case !slices.Contains(allowed, k.Value):
				l.errorf(k, "%s: unknown key %q (known: %s)", what, k.Value, strings.Join(allowed, ", "))
				continue
			case seen[k.Value]:
				l.errorf(k, "%s: %q given twice", what, k.Value)
				continue
			}
			seen[k.Value] = true
			if !yield(k.Value, v) {
				return
			}
		}
	}
}

var idRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

var entryKeys = []string{"id", "name", "bin", "args", "mode", "jsonl", "resume", "env", "state",
	"terminal", "format", "grace", "version_args", "safe_modes", "read_only_mode"}

func (l *loader) entry(n *yaml.Node) (Spec, bool) {
	before := len(l.errs)
	s := Spec{Source: fmt.Sprintf("%s:%d", l.file, n.Line), Term: cliproc.TermSize{Cols: DefaultCols, Rows: DefaultRows},
		Settle: DefaultSettle, VersionArgs: []string{"--version"}}
	nodes := l.entryFields(n, &s)
	if n.Kind != yaml.MappingNode {
		return s, false
	}
	if s.Name == "" {
		s.Name = s.ID
	}
	l.checkID(n, nodes.id, s.ID)
	l.checkBin(n, nodes.bin, &s)
	l.checkMode(n, nodes, &s)
	switch {
	case s.Mode == ModeACP:
		s.Args = l.acpArgs(nodes.args)
	case nodes.args == nil:
		l.errorf(n, "plugin %q: missing args (with a {message} placeholder)", s.ID)
	default:
		s.Args = l.args(nodes.args, &s)
	}
	return s, len(l.errs) == before
}

// entryNodes are the nodes of an entry's keys that are read once the
// others are known.
type entryNodes struct{ args, mode, jsonl, resume, term, id, bin, safe, readOnly *yaml.Node }

// entryFields reads an entry's keys into s, keeping the nodes of those
// that depend on others.
func (l *loader) entryFields(n *yaml.Node, s *Spec) entryNodes {
	var nodes entryNodes
	for key, v := range l.fields(n, "plugin entry", entryKeys...) {
		switch key {
		case "id":
			nodes.id, s.ID = v, l.str(v, key)
		case "name":
			s.Name = l.str(v, key)
		case "bin":
			nodes.bin, s.Bin = v, l.str(v, key)
		case "args":
			nodes.args = v
		case "mode":
			nodes.mode, s.Mode = v, Mode(l.str(v, key))
		case "jsonl":
			nodes.jsonl = v
		case "resume":
			nodes.resume = v
		case "env":
			s.Env = l.env(v)
		case "state":
			s.State = l.strs(v, key)
		case "terminal":
			nodes.term = v
		case "format":
			switch f := l.str(v, key); f {
			case "text", "":
			case "code":
				s.Code = true
			default:
				l.errorf(v, "format %q: want text or code", f)
			}
		case "grace":
			s.Grace = l.duration(v, key)
		case "version_args":
			s.VersionArgs = l.strs(v, key)
		case "safe_modes":
			nodes.safe, s.SafeModes = v, l.strs(v, key)
		case "read_only_mode":
			nodes.readOnly, s.ReadOnlyMode = v, l.str(v, key)
		}
	}
	return nodes
}

// checkMode checks the entry's mode and reads the keys that only some
// modes take.
func (l *loader) checkMode(n *yaml.Node, nodes entryNodes, s *Spec) {
	switch s.Mode {
	case ModeJSONL:
		if nodes.jsonl == nil {
			l.errorf(nodes.mode, "mode jsonl needs a `jsonl:` mapping of fields (text, session, error)")
		} else {
			s.JSONL = l.mapping(nodes.jsonl)
		}
	case ModePlain, ModePTY, ModeACP:
		if nodes.jsonl != nil {
			l.errorf(nodes.jsonl, "`jsonl:` is for mode jsonl, not %s", s.Mode)
		}
	case "":
		l.errorf(n, "plugin %q: missing mode (jsonl, plain, pty or acp)", s.ID)
	default:
		l.errorf(nodes.mode, "unknown mode %q: want jsonl, plain, pty or acp", s.Mode)
	}
	if nodes.resume != nil {
		switch s.Mode {
		case ModeJSONL:
			l.errorf(nodes.resume, "`resume:` is for plain and pty modes; in jsonl mode map the session id with jsonl.session")
		case ModeACP:
			l.errorf(nodes.resume, "`resume:` is for plain and pty modes; in mode acp the agent gives the session id")
		default:
			s.Resume = l.resumeRE(nodes.resume)
		}
	}
	if nodes.safe != nil && s.Mode != ModeACP {
		l.errorf(nodes.safe, "`safe_modes:` is for mode acp")
	}
	if nodes.readOnly != nil && s.Mode != ModeACP {
		l.errorf(nodes.readOnly, "`read_only_mode:` is for mode acp: no other mode can keep an agent from writing")
	}
	if nodes.term != nil {
		if s.Mode != ModePTY {
			l.errorf(nodes.term, "`terminal:` is for mode pty")
		}
		l.terminal(nodes.term, s)
	}
}

// acpArgs are an acp entry's arguments, literals only: the message, the
// workdir and the session go to the agent over the protocol.
func (l *loader) acpArgs(n *yaml.Node) []Arg {
	if n == nil {
		return nil
	}
	var out []Arg
	for _, v := range l.strs(n, "args") {
		if placeholderRE.MatchString(v) {
			l.errorf(n, "args: %q: mode acp takes no placeholders (the message, workdir and session go over the protocol)", v)
			continue
		}
		out = append(out, Arg{Literal: v})
	}
	return out
}

func (l *loader) checkID(entry, n *yaml.Node, id string) {
	switch {
	case n == nil:
		l.errorf(entry, "plugin entry: missing id")
		return
	case !idRE.MatchString(id):
		l.errorf(n, "id %q: want a lowercase letter, then up to 31 lowercase letters, digits or _ (it becomes the command /%s)", id, id)
		return
	}
	if first, dup := l.ids[id]; dup {
		l.errorf(n, "duplicate id %q (first defined at line %d)", id, first)
		return
	}
	l.ids[id] = n.Line
	if l.opts.Taken != nil {
		if why := l.opts.Taken(id); why != "" {
			l.errorf(n, "id %q is taken: %s", id, why)
		}
	}
}

func (l *loader) checkBin(entry, n *yaml.Node, s *Spec) {
	if n == nil || s.Bin == "" {
		l.errorf(entry, "plugin %q: missing bin (the CLI's executable)", s.ID)
		return
	}
	if strings.Contains(s.Bin, "/") && !filepath.IsAbs(s.Bin) {
		s.Bin = filepath.Join(filepath.Dir(l.file), s.Bin)
	}
	if l.opts.SkipLookPath {
		return
	}
	if _, err := exec.LookPath(s.Bin); err != nil {
		l.errorf(n, "bin %q: not found (%v); install the CLI or give its full path", s.Bin, unwrapExec(err))
	}
}

// unwrapExec drops exec's repetition of the name from its error.
func unwrapExec(err error) error {
	var e *exec.Error
	if errors.As(err, &e) {
		return e.Err
	}
	return err
}

func (l *loader) str(n *yaml.Node, key string) string {
	if n.Kind != yaml.ScalarNode {
		l.errorf(n, "%s: want a single value", key)
		return ""
	}
	return n.Value
}

func (l *loader) strs(n *yaml.Node, key string) []string {
	if n.Kind != yaml.SequenceNode {
		l.errorf(n, "%s: want a list", key)
		return nil
	}
	out := []string{}
	for _, c := range n.Content {
		out = append(out, l.str(c, key))
	}
	return out
}

func (l *loader) duration(n *yaml.Node, key string) time.Duration {
	d, err := time.ParseDuration(l.str(n, key))
	if err != nil || d < 0 {
		l.errorf(n, "%s %q: want a duration such as 5s", key, n.Value)
	}
	return d
}

func (l *loader) env(n *yaml.Node) []string {
	var out []string
	for k, v := range l.fields(n, "env", l.keys(n)...) {
		out = append(out, k+"="+l.str(v, "env "+k))
	}
	return out
}

// keys returns a mapping's keys, for fields that take any key.
func (l *loader) keys(n *yaml.Node) []string {
	var out []string
	for i := 0; i+1 < len(n.Content) && n.Kind == yaml.MappingNode; i += 2 {
		out = append(out, n.Content[i].Value)
	}
	return out
}

func (l *loader) terminal(n *yaml.Node, s *Spec) {
	for key, v := range l.fields(n, "terminal", "cols", "rows", "settle") {
		switch key {
		case "cols", "rows":
			x, err := strconv.Atoi(l.str(v, key))
			if err != nil || x < 10 || x > 1000 {
				l.errorf(v, "terminal %s %q: want a number from 10 to 1000", key, v.Value)
				continue
			}
			if key == "cols" {
				s.Term.Cols = uint16(x)
			} else {
				s.Term.Rows = uint16(x)
			}
		case "settle":
			if s.Settle = l.duration(v, "terminal settle"); s.Settle == 0 {
				l.errorf(v, "terminal settle: want more than 0")
			}
		}
	}
}

func (l *loader) resumeRE(n *yaml.Node) *regexp.Regexp {
	re, err := regexp.Compile(l.str(n, "resume"))
	switch {
	case err != nil:
		l.errorf(n, "resume: %v", err)
		return nil
	case re.NumSubexp() != 1:
		l.errorf(n, "resume %q: want exactly one capture group around the session id, like 'session: (\\S+)'", n.Value)
		return nil
	}
	return re
}
