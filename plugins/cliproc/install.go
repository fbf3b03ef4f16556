// The folders of a CLI's install that its sandbox shows it, read-only.

package cliproc

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// installs caches installDirs by binary.
var installs sync.Map // string -> []string

// installDirs returns the folders (or files) a CLI's binary needs to
// run, to be shown read-only: the binary's package (the outermost
// node_modules that holds it, so that its sibling packages resolve; the
// virtual environment of a Python program; else the binary alone), and
// the same of the interpreter its #! line names, looked up on path. What
// /usr holds is shown anyway.
func installDirs(bin, path string) []string {
	key := bin + "\x00" + path
	if v, ok := installs.Load(key); ok {
		return v.([]string)
	}
	var out []string
	for _, f := range []string{bin, interpreter(bin, path)} {
		if f == "" {
			continue
		}
		if d := installDir(f); d != "" && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	installs.Store(key, out)
	return out
}

// installDir is the folder that holds the program at path, as
// installDirs says; "" when /usr shows it anyway.
func installDir(path string) string {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return ""
	}
	if underSystem(real) {
		return ""
	}
	if i := strings.Index(real, "/node_modules/"); i >= 0 {
		return real[:i+len("/node_modules")]
	}
	// A Python virtual environment is the program's own; any other
	// folder may hold anything (the bot's .env beside a CLI copied there):
	// the program alone.
	if bin := filepath.Dir(real); filepath.Base(bin) == "bin" {
		if _, err := os.Stat(filepath.Join(filepath.Dir(bin), "pyvenv.cfg")); err == nil {
			return filepath.Dir(bin)
		}
	}
	return real
}

// underSystem reports whether path is in a folder every sandbox shows.
func underSystem(path string) bool {
	for _, d := range []string{"/usr", "/bin", "/lib", "/lib64", "/sbin"} {
		if path == d || strings.HasPrefix(path, d+"/") {
			return true
		}
	}
	return false
}

// interpreter returns the program bin's #! line runs it with, found on
// path for `#!/usr/bin/env NAME`; "" for a binary.
func interpreter(bin, path string) string {
	f, err := os.Open(bin)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 256)
	n, _ := f.Read(head)
	line, ok := strings.CutPrefix(string(head[:n]), "#!")
	if !ok {
		return ""
	}
	line, _, _ = strings.Cut(line, "\n")
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return ""
	}
	prog := fields[0]
	if filepath.Base(prog) == "env" {
		rest := slices.DeleteFunc(fields[1:], func(s string) bool { return strings.HasPrefix(s, "-") })
		if len(rest) == 0 {
			return ""
		}
		return lookPathIn(rest[0], path)
	}
	return prog
}

// lookPathIn finds name in the folders of path (a PATH value).
func lookPathIn(name, path string) string {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}
