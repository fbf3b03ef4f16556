package bot_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// The images the Dockerfile builds, run as a user runs them. These tests
// run only where JAKEBOT_IMAGE (the image with the CLIs, the default
// target) and JAKEBOT_IMAGE_BOT (--target bot) are built: .ci/docker-test
// builds them and sets JAKEBOT_CONTAINER_RUN, the command that runs a
// container on the host's network ("podman run --rm --network host" and
// what this machine needs besides).

// containerRun returns the command that runs image with args, named name
// (removed when the test ends), with stdin attached and flags (-e, -v)
// before the image.
func containerRun(t *testing.T, image, name string, flags []string, args ...string) *exec.Cmd {
	t.Helper()
	run := strings.Fields(os.Getenv("JAKEBOT_CONTAINER_RUN"))
	if len(run) == 0 {
		run = []string{"docker", "run", "--rm", "--network", "host"}
	}
	argv := append(append(run[1:], "--interactive", "--name", name), flags...)
	argv = append(append(argv, image), args...)
	t.Cleanup(func() { exec.Command(run[0], "rm", "-f", "-v", name).Run() })
	return exec.Command(run[0], argv...)
}

// containerCLI is the container tool (podman, docker) JAKEBOT_CONTAINER_RUN
// names.
func containerCLI() string {
	if run := strings.Fields(os.Getenv("JAKEBOT_CONTAINER_RUN")); len(run) > 0 {
		return run[0]
	}
	return "docker"
}

// containerTool runs the container tool on a running container, failing
// the test unless it succeeds.
func containerTool(t *testing.T, args ...string) string {
	t.Helper()
	tool := containerCLI()
	out, err := exec.Command(tool, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// envFlags returns the -e flags that give a container env.
func envFlags(env ...string) []string {
	var flags []string
	for _, kv := range env {
		flags = append(flags, "-e", kv)
	}
	return flags
}

func image(t *testing.T, name string) string {
	t.Helper()
	img := os.Getenv(name)
	if img == "" {
		t.Skipf("%s is not set: no image to run (.ci/docker-test builds them)", name)
	}
	return img
}

// healthAddr is HEALTH_ADDR on a free port of the host's loopback, which a
// container on the host's network shares: the image's 9090 may be taken.
func healthAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return "HEALTH_ADDR=" + l.Addr().String()
}

var containerSeq atomic.Int64

func containerName() string {
	return fmt.Sprintf("jakebot-test-%d-%d", os.Getpid(), containerSeq.Add(1))
}

// notRoot fails the test if any process in the container runs as root.
func notRoot(t *testing.T, name string) {
	t.Helper()
	out := containerTool(t, "top", name, "user", "args")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 2 {
		t.Fatalf("no processes in the container:\n%s", out)
	}
	for _, l := range lines[1:] {
		if f := strings.Fields(l); len(f) > 0 && (f[0] == "root" || f[0] == "0") {
			t.Errorf("a process in the container runs as root:\n%s", out)
		}
	}
}

// The bot image: its help, and a gateway that runs as its own user,
// answers its HEALTHCHECK and stops on SIGTERM.
func TestBotImage(t *testing.T) {
	img := image(t, "JAKEBOT_IMAGE_BOT")
	out, err := containerRun(t, img, containerName(), nil, "--help").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "usage:") || !strings.Contains(string(out), "jakebot runner") {
		t.Fatalf("jakebot --help in %s = %v:\n%s", img, err, out)
	}

	name := containerName()
	b := startProcess(t, containerRun(t, img, name, envFlags(healthAddr(t), "CONSOLE_INPUT=typed")))
	// The console answers once the bot is set up, its health server with it.
	b.say("/status")
	b.expect(`No conversation here yet`)
	notRoot(t, name)
	containerTool(t, "healthcheck", "run", name)
	containerTool(t, "stop", "-t", "10", name)
	if code := b.wait(); code != 0 {
		t.Fatalf("the bot's container exited %d after SIGTERM, want 0 (not killed)\n%s", code, b.stderr.String())
	}
}

// The default image runs a turn: doctor passes, the real Claude Code in the
// container answers from the fake model on the host, as a user other than
// root; SIGTERM during a turn stops the turn and the container exits by
// itself within docker stop's 10 seconds; the next container on the same
// volume goes on with the conversation in the CLI's session.
func TestImageRunsATurn(t *testing.T) {
	img := image(t, "JAKEBOT_IMAGE")
	out, err := containerRun(t, img, containerName(), nil, "doctor").CombinedOutput()
	if err != nil {
		t.Fatalf("jakebot doctor in %s = %v:\n%s", img, err, out)
	}
	t.Logf("jakebot doctor in %s:\n%s", img, out)

	hold := make(chan struct{})
	defer close(hold)
	model := plugintest.NewAnthropic(t,
		plugintest.Reply{Text: []string{"Hello from ", "inside the container."}},
		plugintest.Reply{Text: []string{"Never sent."}, Hold: hold},
		plugintest.Reply{Text: []string{"Still here."}})
	volume := containerName()
	t.Cleanup(func() { exec.Command(containerCLI(), "volume", "rm", "-f", volume).Run() })
	flags := append(envFlags(append(plugintest.ClaudeVars(model), healthAddr(t), "CONSOLE_INPUT=typed")...), "-v", volume+":/data")
	name := containerName()
	b := startProcess(t, containerRun(t, img, name, flags))
	b.say("/claude start", "say hello")
	reply := b.expect(`Hello from inside the container\.`)
	t.Logf("the container's reply: %s", reply)
	notRoot(t, name)

	b.say("take your time")
	<-model.Arrived() // the first turn's request
	<-model.Arrived() // this one: the CLI waits for the model
	containerTool(t, "stop", "-t", "10", name)
	b.expect(`The bot is restarting; this turn was stopped\.`)
	if code := b.wait(); code != 0 {
		t.Fatalf("the container exited %d after SIGTERM, want 0: its turn stopped, not killed\n%s", code, b.stderr.String())
	}

	b = startProcess(t, containerRun(t, img, containerName(), flags))
	b.say("are you there?")
	b.expect(`Still here\.`)
	reqs := model.Requests()
	if last := reqs[len(reqs)-1].Text(); !strings.Contains(last, "say hello") {
		t.Errorf("the next container's turn did not resume the session kept in the volume: %q", last)
	}
}
