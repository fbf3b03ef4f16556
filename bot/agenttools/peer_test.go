package agenttools

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
)

// openHere opens a turn whose process is this test's: its own calls are
// served.
func openHere(s *Server, actions core.TurnActions, only []string) (*core.ToolAccess, func()) {
	access, closeTurn := s.Open(actions, only)
	access.Spawned(os.Getpid())
	return access, closeTurn
}

// helperVar makes the test binary a CLI of a turn (cliHelper).
const helperVar = "AGENTTOOLS_TEST_CLI"

func TestMain(m *testing.M) {
	if url := os.Getenv(helperVar); url != "" {
		cliHelper(url)
		return
	}
	os.Exit(m.Run())
}

// cliHelper is a turn's CLI, given its token in its environment as the
// engine gives it (cliproc.ToolTokenEnv). It answers each line of its
// stdin with the status of a tools/list it posts to url: "own" with its
// own token, "child" by a process it starts, "steal PID" with the token
// it reads from process PID's environment, as any process of the bot's
// user can. "once" as the helper's argument: one call with its own token.
func cliHelper(url string) {
	post := func(token string) string {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "error " + err.Error()
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body)
		return strconv.Itoa(resp.StatusCode)
	}
	own := os.Getenv(cliproc.ToolTokenEnv)
	if len(os.Args) > 1 && os.Args[1] == "once" {
		fmt.Println(post(own))
		return
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		cmd, arg, _ := strings.Cut(in.Text(), " ")
		switch cmd {
		case "own":
			fmt.Println(post(own))
		case "child":
			out, err := exec.Command(os.Args[0], "once").Output()
			if err != nil {
				fmt.Println("error", err)
				continue
			}
			fmt.Print(string(out))
		case "steal":
			env, err := os.ReadFile("/proc/" + arg + "/environ")
			token := ""
			for kv := range bytes.SplitSeq(env, []byte{0}) {
				if v, ok := bytes.CutPrefix(kv, []byte(cliproc.ToolTokenEnv+"=")); ok {
					token = string(v)
				}
			}
			if err != nil || token == "" {
				fmt.Println("no token read:", err)
				continue
			}
			fmt.Println(post(token))
		}
	}
}

// cli is a running cliHelper.
type cli struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

// startCLI starts a cliHelper with access's token, as the engine starts
// a CLI, and tells the server its process (access.Spawned).
func startCLI(t *testing.T, access *core.ToolAccess) *cli {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperVar+"="+access.URL, cliproc.ToolTokenEnv+"="+access.Token)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	access.Spawned(cmd.Process.Pid)
	t.Cleanup(func() {
		in.Close()
		cmd.Wait()
	})
	return &cli{cmd: cmd, in: in, out: bufio.NewScanner(out)}
}

// do has the CLI do line, and returns what it answered.
func (c *cli) do(t *testing.T, line string) string {
	t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
	if !c.out.Scan() {
		t.Fatalf("%s: the CLI answered nothing: %v", line, c.out.Err())
	}
	return c.out.Text()
}

// Every CLI runs as the bot's user, so alice's agent reads bob's token
// in bob's CLI's environment (issue 41, Medium 4): the server serves a
// token only to the process it was given to and to what that process
// started. Before, alice's CLI was served with bob's token (200) and
// acted in bob's conversation, as bob.
func TestAnotherCLIsTokenIsRefused(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("a connection's process is found only on Linux")
	}
	s := start(t, core.AllAgentTools)
	aliceAccess, closeAlice := s.Open(&fakeActions{}, nil)
	defer closeAlice()
	bobAccess, closeBob := s.Open(&fakeActions{}, nil)
	defer closeBob()
	alice, bob := startCLI(t, aliceAccess), startCLI(t, bobAccess)
	for _, tc := range []struct {
		name string
		cli  *cli
		line string
		want string
	}{
		{"alice with bob's token", alice, "steal " + strconv.Itoa(bob.cmd.Process.Pid), "403"},
		{"bob with his own", bob, "own", "200"},
		{"a process bob's CLI started, with his", bob, "child", "200"},
		{"alice with her own", alice, "own", "200"},
		{"bob with alice's", bob, "steal " + strconv.Itoa(alice.cmd.Process.Pid), "403"},
	} {
		if got := tc.cli.do(t, tc.line); got != tc.want {
			t.Errorf("%s: status %s, want %s", tc.name, got, tc.want)
		}
	}
	// This test's own process started both CLIs, but is neither.
	if status, _ := listTools(t, bobAccess.URL, map[string]string{"Authorization": "Bearer " + bobAccess.Token}); status != http.StatusForbidden {
		t.Errorf("bob's token from the bot's own process: status %d, want 403", status)
	}
}
