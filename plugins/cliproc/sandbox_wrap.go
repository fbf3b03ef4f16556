package cliproc

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
)

// systemFiles are what every sandbox shows of /etc, read-only: what
// resolving names, TLS, users' and groups' names, the time zone, the
// dynamic linker and git's system configuration need. Not /etc itself,
// which holds the machine's secrets (/etc/shadow is root's to read, and
// inside bwrap a root bot's files are the CLI's).
var systemFiles = []string{"/etc/resolv.conf", "/etc/hosts", "/etc/host.conf", "/etc/nsswitch.conf", "/etc/gai.conf",
	"/etc/ssl", "/etc/ca-certificates", "/etc/pki", "/etc/passwd", "/etc/group", "/etc/localtime", "/etc/timezone",
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/gitconfig", "/etc/os-release"}

// systemTop are the folders beside /usr that merged-/usr systems make
// links into it.
var systemTop = []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// systemArgs are bwrap's arguments that show the system: /usr and what
// lies beside it as this machine has it (a link into /usr, or a folder),
// and systemFiles, read-only.
var systemArgs = sync.OnceValue(func() []string {
	args := []string{"--ro-bind", "/usr", "/usr"}
	for _, d := range systemTop {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(d); err == nil {
				args = append(args, "--symlink", target, d)
			}
		case fi.IsDir():
			args = append(args, "--ro-bind", d, d)
		}
	}
	for _, f := range systemFiles {
		// Those this machine has: fewer mounts for bwrap to try.
		if _, err := os.Stat(f); err == nil {
			args = append(args, "--ro-bind-try", f, f)
		}
	}
	return args
})

// wrap makes cmd, made for the CLI's binary (its Path found on PATH),
// run in the sandbox showing w: bwrap, or the Landlock helper, runs the
// binary with its arguments. The returned function removes what the
// sandbox made for the run, once it is over.
func (s *Sandbox) wrap(cmd *exec.Cmd, w walls) (func(), error) {
	bin, err := filepath.EvalSymlinks(cmd.Path)
	if err != nil {
		return nil, err
	}
	w.state = prepare(w.state)
	switch s.Mode() {
	case SandboxBwrap:
		args := append([]string{s.bin}, s.bwrapArgs(w)...)
		cmd.Path, cmd.Args = s.bin, append(append(args, "--", bin), cmd.Args[1:]...)
		return func() {}, nil
	case SandboxLandlock:
		// No private /tmp: a folder of the run's own, named by TMPDIR.
		tmp, err := os.MkdirTemp("", "jakebot-tmp-")
		if err != nil {
			return nil, err
		}
		args := append([]string{s.bin, SandboxExecCommand}, s.landlockArgs(w, tmp)...)
		cmd.Path, cmd.Args = s.bin, append(append(args, "--", bin), cmd.Args[1:]...)
		cmd.Env = append(cmd.Env, "TMPDIR="+tmp)
		return func() { os.RemoveAll(tmp) }, nil
	}
	return func() {}, nil
}

// bwrapArgs are bwrap's options for w: namespaces of the CLI's own but
// the network's, the system read-only, a private /proc, /dev, /tmp and
// TMPDIR, an empty home, then the workdir, its git directories and the CLI's
// state read-write, its install folders read-only, and the configured
// paths. Later mounts go over earlier ones: a state folder's Empty entry
// hides what the folder shows there. Not --new-session: the CLI stays in
// bwrap's process group, which the bot signals to stop it gracefully.
func (s *Sandbox) bwrapArgs(w walls) []string {
	args := []string{"--unshare-user"}
	if s.uid >= 0 {
		uid := strconv.Itoa(s.uid)
		args = append(args, "--uid", uid, "--gid", uid)
	}
	args = append(args, "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--cap-drop", "ALL")
	args = append(args, systemArgs()...)
	args = append(args, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp")
	// TMPDIR, when the CLI has one, is as private as /tmp: where Codex
	// makes its helpers, which it refuses to do under TMPDIR when its
	// home is there too.
	if filepath.IsAbs(w.tmp) && filepath.Clean(w.tmp) != "/tmp" {
		args = append(args, "--tmpfs", w.tmp)
	}
	if filepath.IsAbs(w.home) && w.home != "/" {
		args = append(args, "--dir", w.home)
	}
	// What is read-only first: a folder written in it (a workdir holding
	// its CLI's install) is mounted over it.
	for _, d := range w.install {
		args = append(args, "--ro-bind", d, d)
	}
	for _, d := range s.read {
		args = append(args, "--ro-bind-try", d, d)
	}
	args = append(args, "--bind", w.workdir, w.workdir)
	for _, g := range w.git {
		args = append(args, "--bind", g, g)
	}
	for _, p := range w.state {
		if p.Empty {
			args = append(args, "--tmpfs", p.Path)
		} else {
			args = append(args, "--bind", p.Path, p.Path)
		}
	}
	for _, d := range s.write {
		args = append(args, "--bind-try", d, d)
	}
	return append(args, "--chdir", w.workdir)
}

// landlockArgs are `jakebot sandbox-exec`'s options for w: what the CLI
// may write (its workdir, git directories, state, run's temporary folder
// and /dev) and read (the system, its install folders, /proc). Landlock
// adds rights and cannot take any back: an Empty state entry hides
// nothing there.
func (s *Sandbox) landlockArgs(w walls, tmp string) []string {
	write := []string{w.workdir, tmp, "/dev"}
	write = append(write, w.git...)
	for _, p := range w.state {
		if !p.Empty {
			write = append(write, p.Path)
		}
	}
	write = append(write, s.write...)
	read := append([]string{"/usr", "/proc", "/sys"}, systemTop...)
	read = append(append(append(read, systemFiles...), w.install...), s.read...)
	var args []string
	for _, p := range write {
		args = append(args, "--write", p)
	}
	for _, p := range slices.DeleteFunc(read, func(p string) bool { _, err := os.Stat(p); return err != nil }) {
		args = append(args, "--read", p)
	}
	return args
}
