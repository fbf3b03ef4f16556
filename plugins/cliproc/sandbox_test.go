package cliproc_test

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// probe is a CLI an agent has taken over: it tries what its sandbox must
// refuse and prints how each try went: reading $SECRET, the environment
// of each process of $PEEK (/proc/PID/environ), writing $OUTSIDE, and
// opening $HANDLE (the secret's file handle, "type:hex", as
// name_to_handle_at gave it outside: root's way past every mount) through
// its workdir; and writing in its workdir and in $STATE, which it must be
// able to do. Then its user id and effective capabilities.
func probe() {
	report := func(name string, err error) {
		if err != nil {
			fmt.Printf("%s=denied\n", name)
		} else {
			fmt.Printf("%s=ok\n", name)
		}
	}
	_, err := os.ReadFile(os.Getenv("SECRET"))
	report("read-secret", err)
	for pid := range strings.SplitSeq(os.Getenv("PEEK"), ",") {
		_, err := os.ReadFile("/proc/" + pid + "/environ")
		report("environ-"+pid, err)
	}
	report("write-outside", os.WriteFile(os.Getenv("OUTSIDE"), []byte("x"), 0o600))
	report("write-workdir", os.WriteFile("written", []byte("x"), 0o600))
	report("write-state", os.WriteFile(filepath.Join(os.Getenv("STATE"), "written"), []byte("x"), 0o600))
	report("open-by-handle", openByHandle(os.Getenv("HANDLE")))
	status, _ := os.ReadFile("/proc/self/status")
	for line := range strings.SplitSeq(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			fmt.Printf("caps=%s\n", strings.TrimSpace(v))
		}
	}
	fmt.Printf("uid=%d\n", os.Getuid())
}

func openByHandle(handle string) error {
	typ, bytes, _ := strings.Cut(handle, ":")
	t, _ := strconv.Atoi(typ)
	b, err := hex.DecodeString(bytes)
	if err != nil {
		return err
	}
	mount, err := unix.Open(".", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer unix.Close(mount)
	fd, err := unix.OpenByHandleAt(mount, unix.NewFileHandle(int32(t), b), unix.O_RDONLY)
	if err != nil {
		return err
	}
	unix.Close(fd)
	return nil
}

// graceful is a CLI that, on SIGTERM, writes "stopped" in its workdir and
// exits 3: what a CLI ending its turn gracefully does.
func graceful() {
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	fmt.Println("ready")
	<-term
	os.WriteFile("stopped", []byte("gracefully"), 0o600)
	os.Exit(3)
}

// walledPlace is what a probe runs among: a secret outside its workdir,
// the workdir, the CLI's state, and a home.
type walledPlace struct {
	secret, workdir, state, home, outside string
}

func newWalledPlace(t *testing.T) walledPlace {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := walledPlace{secret: filepath.Join(dir, "bot", ".env"), workdir: filepath.Join(dir, "work"),
		home: filepath.Join(dir, "home"), outside: filepath.Join(dir, "bot", "planted")}
	p.state = filepath.Join(p.home, ".fake")
	for _, d := range []string{filepath.Dir(p.secret), p.workdir, p.state} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(p.secret, []byte("TELEGRAM_TOKEN=secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// handleOf returns path's file handle as probe takes it.
func handleOf(t *testing.T, path string) string {
	t.Helper()
	h, _, err := unix.NameToHandleAt(unix.AT_FDCWD, path, 0)
	if err != nil {
		t.Skipf("no file handles here: %v", err)
	}
	return fmt.Sprintf("%d:%s", h.Type(), hex.EncodeToString(h.Bytes()))
}

// runProbe runs probe in sb (nil: none) in p's workdir, peeking at pids.
func runProbe(t *testing.T, sb *cliproc.Sandbox, p walledPlace, pids []int) map[string]string {
	t.Helper()
	peek := make([]string, len(pids))
	for i, pid := range pids {
		peek[i] = strconv.Itoa(pid)
	}
	mark := plugintest.NoLeaks(t)
	proc, err := cliproc.Start(context.Background(), cliproc.Spec{Bin: os.Args[0], Dir: p.workdir, Sandbox: sb,
		Env: []string{"JAKEBOT_HELPER=probe", "HOME=" + p.home, "SECRET=" + p.secret, "OUTSIDE=" + p.outside,
			"STATE=" + p.state, "PEEK=" + strings.Join(peek, ","), "HANDLE=" + handleOf(t, p.secret), mark},
		State: func(getenv func(string) string, workdir string) []cliproc.StatePath {
			return []cliproc.StatePath{{Path: filepath.Join(getenv("HOME"), ".fake")}}
		}})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(proc.Stdout)
	res, err := proc.Wait()
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("the probe ended with %+v, %v:\n%s", res, err, out)
	}
	got := map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		got[k] = v
	}
	return got
}

// A CLI behind the sandbox, acting for an agent, cannot read a file
// outside its workdir (the bot's .env), another CLI's environment or the
// test's, write outside, or open the secret by its file handle; it writes
// its workdir and its state. Without a sandbox it can do all of it.
func TestSandboxWallsTheCLI(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{cliproc.SandboxBwrap, cliproc.SandboxLandlock, cliproc.SandboxOff} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			var sb *cliproc.Sandbox
			if mode != cliproc.SandboxOff {
				sb = plugintest.Sandbox(t, mode, "")
			}
			p := newWalledPlace(t)
			pids := plugintest.OtherCLI(t, sb, "other-turn-token")
			if mode != cliproc.SandboxOff {
				// The bot's own: a root CLI without the bot's
				// capabilities cannot read it even without a sandbox.
				pids = append(pids, os.Getpid())
			}
			got := runProbe(t, sb, p, pids)
			want := "denied"
			if mode == cliproc.SandboxOff {
				want = "ok"
			}
			keys := []string{"read-secret", "write-outside"}
			for _, pid := range pids {
				keys = append(keys, "environ-"+strconv.Itoa(pid))
			}
			if os.Geteuid() == 0 {
				keys = append(keys, "open-by-handle")
			}
			for _, k := range keys {
				if got[k] != want {
					t.Errorf("%s = %q, want %s (%v)", k, got[k], want, got)
				}
			}
			for _, k := range []string{"write-workdir", "write-state"} {
				if got[k] != "ok" {
					t.Errorf("%s = %q, want ok (%v)", k, got[k], got)
				}
			}
			if _, err := os.Stat(filepath.Join(p.state, "written")); err != nil {
				t.Errorf("what the CLI wrote in its state is not there: %v", err)
			}
			if _, err := os.Stat(p.outside); (err == nil) != (mode == cliproc.SandboxOff) {
				t.Errorf("the file written outside: %v", err)
			}
			if mode == cliproc.SandboxLandlock && sb.Nests() {
				t.Errorf("a CLI's own sandbox nests in Landlock, which forbids mounts")
			}
			if mode != cliproc.SandboxOff && os.Geteuid() == 0 {
				if got["caps"] != "0000000000000000" {
					t.Errorf("the CLI of a root bot has capabilities %s", got["caps"])
				}
				if mode == cliproc.SandboxBwrap && got["uid"] != strconv.Itoa(cliproc.DefaultSandboxUID) {
					t.Errorf("the CLI of a root bot runs as uid %s, want %d", got["uid"], cliproc.DefaultSandboxUID)
				}
			}
		})
	}
}

// Stopping a turn reaches the CLI inside bwrap, not bwrap alone: the CLI
// ends gracefully (here: writes a file, exits 3) and its exit status is
// the turn's.
func TestSandboxedCLIStopsGracefully(t *testing.T) {
	t.Parallel()
	sb := plugintest.Sandbox(t, cliproc.SandboxBwrap, "")
	wd := t.TempDir()
	mark := plugintest.NoLeaks(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := cliproc.Start(ctx, cliproc.Spec{Bin: os.Args[0], Dir: wd, Sandbox: sb,
		Env: []string{"JAKEBOT_HELPER=graceful", mark}})
	if err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(p.Stdout)
	if line, _ := out.ReadString('\n'); line != "ready\n" {
		res, _ := p.Wait()
		t.Fatalf("the CLI said %q, then %+v", line, res)
	}
	cancel()
	io.Copy(io.Discard, out)
	res, err := p.Wait()
	if err != nil || res.ExitCode != 3 {
		t.Errorf("Wait = %+v, %v; want the CLI's own exit code 3", res, err)
	}
	if data, err := os.ReadFile(filepath.Join(wd, "stopped")); string(data) != "gracefully" {
		t.Errorf("the CLI did not stop gracefully: %q, %v", data, err)
	}
}

// SANDBOX=off is no sandbox, and says what that leaves open; a mode this
// machine lacks is an error when asked for by name.
func TestNewSandboxModes(t *testing.T) {
	t.Parallel()
	off, err := cliproc.NewSandbox(context.Background(), cliproc.SandboxConfig{Mode: "off"})
	if err != nil || off.On() || off.Mode() != "off" || !strings.Contains(off.Warning(), "/proc/<pid>/environ") {
		t.Errorf("off = %v (%q), %v", off.Mode(), off.Warning(), err)
	}
	if _, err := cliproc.NewSandbox(context.Background(), cliproc.SandboxConfig{Mode: "jail"}); err == nil ||
		!strings.Contains(err.Error(), "want auto, bwrap, landlock or off") {
		t.Errorf("SANDBOX=jail: %v", err)
	}
	_, err = cliproc.NewSandbox(context.Background(), cliproc.SandboxConfig{Mode: "bwrap", Bwrap: "/nonexistent/bwrap"})
	if err == nil || !strings.Contains(err.Error(), "bubblewrap (bwrap) is not installed") {
		t.Errorf("SANDBOX=bwrap without bwrap: %v", err)
	}
	auto, err := cliproc.NewSandbox(context.Background(), cliproc.SandboxConfig{Bwrap: "/nonexistent/bwrap"})
	if err != nil || auto.Mode() == cliproc.SandboxBwrap || !strings.Contains(auto.Summary(), "bwrap: bubblewrap (bwrap) is not installed") {
		t.Errorf("auto without bwrap = %s (%s), %v", auto.Mode(), auto.Summary(), err)
	}
	if !slices.Contains([]string{cliproc.SandboxLandlock, cliproc.SandboxOff}, auto.Mode()) {
		t.Errorf("auto without bwrap = %s", auto.Mode())
	}
}

// BenchmarkSandboxStart is what the sandbox adds to a turn's start: from
// Start to the CLI's first line (a CLI that prints one and exits), with
// no sandbox, behind bwrap and behind Landlock; the median and the
// fastest are reported, the machine's load aside.
func BenchmarkSandboxStart(b *testing.B) {
	for _, mode := range []string{cliproc.SandboxOff, cliproc.SandboxBwrap, cliproc.SandboxLandlock} {
		b.Run(mode, func(b *testing.B) {
			var sb *cliproc.Sandbox
			if mode != cliproc.SandboxOff {
				sb = plugintest.Sandbox(b, mode, "")
			}
			wd := b.TempDir()
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				p, err := cliproc.Start(context.Background(), cliproc.Spec{Bin: os.Args[0], Dir: wd, Sandbox: sb,
					Env: []string{"JAKEBOT_HELPER=stream", "STREAM=hello"}})
				if err != nil {
					b.Fatal(err)
				}
				if line, _ := bufio.NewReader(p.Stdout).ReadString('\n'); line != "hello\n" {
					b.Fatalf("the CLI said %q", line)
				}
				took = append(took, time.Since(start))
				io.Copy(io.Discard, p.Stdout)
				p.Wait()
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "median-ms")
			b.ReportMetric(float64(took[0].Microseconds())/1000, "fastest-ms")
		})
	}
}

// runIn runs sh -c script behind sb in dir and returns its output and
// exit code.
func runIn(t *testing.T, sb *cliproc.Sandbox, dir, script string) (string, int) {
	t.Helper()
	p, err := cliproc.Start(context.Background(), cliproc.Spec{Bin: "sh", Args: []string{"-c", script}, Dir: dir, Sandbox: sb,
		Env: []string{"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b", plugintest.NoLeaks(t)}})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(p.Stdout)
	res, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	return string(out) + res.Stderr, res.ExitCode
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// A worktree's CLI commits in it: its main repository's .git, where git
// keeps the worktree, is shown too. A .git file naming another
// repository (an agent can write one) shows nothing of it, nor does a
// workdir below a repository's top show that repository's .git.
func TestSandboxShowsAWorktreesRepository(t *testing.T) {
	t.Parallel()
	sb := plugintest.Sandbox(t, cliproc.SandboxBwrap, "")
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo, wt, other := filepath.Join(dir, "repo"), filepath.Join(dir, "wt"), filepath.Join(dir, "other")
	for _, r := range []string{repo, other} {
		git(t, dir, "init", "-q", r)
		git(t, r, "commit", "-q", "--allow-empty", "-m", "first")
	}
	git(t, repo, "worktree", "add", "-q", "-b", "side", wt)
	if out, code := runIn(t, sb, wt, "git commit -q --allow-empty -m inside && git log --oneline | wc -l"); code != 0 || strings.TrimSpace(out) != "2" {
		t.Errorf("a commit in the worktree = %q, exit %d", out, code)
	}

	forged := filepath.Join(dir, "forged")
	os.Mkdir(forged, 0o755)
	os.WriteFile(filepath.Join(forged, ".git"), []byte("gitdir: "+filepath.Join(other, ".git")+"\n"), 0o644)
	if out, code := runIn(t, sb, forged, "cat "+filepath.Join(other, ".git", "HEAD")); code == 0 {
		t.Errorf("a forged .git file showed another repository: %q", out)
	}

	sub := filepath.Join(other, "sub")
	os.Mkdir(sub, 0o755)
	if out, code := runIn(t, sb, sub, "cat ../.git/HEAD"); code == 0 {
		t.Errorf("a workdir below its repository's top showed the repository's .git: %q", out)
	}
}
