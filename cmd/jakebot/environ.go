package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/jake-bot/jake-bot/bot"
)

// secretsFDVar names the descriptor on which a re-executed jakebot finds
// the secrets taken out of its environment.
const secretsFDVar = "JAKEBOT_SECRETS_FD"

// scrubEnviron returns jakebot's environment, first moving the bot's own
// secrets (platform tokens) out of the environment block the kernel shows
// in /proc/<pid>/environ: the agents run as the same user and could read
// it there. It does so by executing itself again with those variables
// removed, passing them through a pipe. A failure to do so leaves the
// environment as it is and says why.
func scrubEnviron() []string {
	environ := os.Environ()
	if fd := os.Getenv(secretsFDVar); fd != "" {
		return readSecrets(environ, fd)
	}
	var keep, secret []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if bot.Withheld(k) {
			secret = append(secret, kv)
		} else {
			keep = append(keep, kv)
		}
	}
	if len(secret) == 0 {
		return environ
	}
	if err := reexec(keep, secret); err != nil {
		fmt.Fprintln(os.Stderr, "jakebot: cannot hide its tokens from the CLIs it runs:", err)
	}
	return environ
}

// reexec executes jakebot again with environ keep, secret on a pipe. It
// returns only on failure.
func reexec(keep, secret []string) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	// A pipe holds 64 KiB: far more than any set of tokens.
	_, err = io.WriteString(w, strings.Join(secret, "\x00"))
	w.Close()
	if err != nil {
		return err
	}
	// The read end must survive exec.
	if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, r.Fd(), syscall.F_SETFD, 0); errno != 0 {
		return errno
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	env := append(keep, secretsFDVar+"="+strconv.Itoa(int(r.Fd())))
	return syscall.Exec(exe, os.Args, env)
}

// readSecrets returns environ without secretsFDVar and with the secrets
// read from descriptor fd.
func readSecrets(environ []string, fd string) []string {
	var out []string
	for _, kv := range environ {
		if !strings.HasPrefix(kv, secretsFDVar+"=") {
			out = append(out, kv)
		}
	}
	n, err := strconv.Atoi(fd)
	if err != nil {
		return out
	}
	f := os.NewFile(uintptr(n), "secrets")
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		fmt.Fprintln(os.Stderr, "jakebot: read its tokens back:", err)
		return out
	}
	return append(out, strings.Split(string(data), "\x00")...)
}
