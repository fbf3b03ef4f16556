package chaos

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/platforms/slack/slacktest"
	"github.com/jake-bot/jake-bot/platforms/telegram/telegramtest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// The run's size. The defaults are the short step the normal test run
// (and CI) takes; `make chaos` runs the full one.
var (
	seed          = flag.Uint64("chaos.seed", 1, "the seed that chooses the faults, their targets and the turns' scripts")
	conversations = flag.Int("chaos.conversations", 4, "conversations at once, half on Telegram and half on Slack, half of each on a runner")
	messages      = flag.Int("chaos.messages", 5, "messages each conversation sends")
	rounds        = flag.Int("chaos.faults", 1, "how many faults of each kind the run injects")
	transcripts   = flag.Bool("chaos.transcripts", false, "write what each conversation shows, and the faults, beside the processes' logs")
)

func TestMain(m *testing.M) {
	if os.Getenv(cliEnv) != "" {
		os.Exit(fakeCLI())
	}
	os.Exit(m.Run())
}

// TestChaos drives conversations through gateways and runners while it
// injects faults of every kind, then judges what the chat shows: no
// message lost, none shown twice (beyond a killed gateway's last second,
// counted apart), every lost turn told to its user. It prints the table;
// time to recover is measured and reported, never asserted.
func TestChaos(t *testing.T) {
	if *conversations < 2 || *messages < 2 || *rounds < 1 {
		t.Fatal("chaos needs 2 conversations, 2 messages each and 1 round of faults at least")
	}
	dir := t.TempDir()
	logs, err := os.MkdirTemp("", "jakebot-chaos-logs")
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, dir: dir, logs: logs, runners: map[string]*proc{}}
	w.bin = buildJakebot(t, dir)
	var alive func() []plugintest.Process
	w.mark, alive = plugintest.ProcessMarker(t)
	w.nats = startNATS(t, filepath.Join(dir, "nats"))
	w.tg, w.sl = telegramtest.New(t), slacktest.New(t)
	w.sl.RedeliverUnacked(true)
	rng := rand.New(rand.NewPCG(*seed, 0xc4a05))

	convs := plan(rng, w, *conversations, *messages, *rounds)
	t.Cleanup(func() {
		if t.Failed() || *transcripts {
			t.Logf("the processes' logs are kept in %s; the same -chaos.seed runs the same faults", w.logs)
		} else {
			os.RemoveAll(w.logs)
		}
	})
	w.startRunner("box1")
	w.startGateway()
	w.activeGateway(t) // the first takes the lease; the second stands by
	w.startGateway()
	t.Cleanup(func() {
		w.stopAll()
		if procs := alive(); len(procs) > 0 {
			t.Errorf("processes outlived the run: %v", procs)
		}
	})

	start := time.Now()
	prog := newProgress()
	var wg sync.WaitGroup
	for _, c := range convs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.drive(goTB{t}, w, prog.add)
		}()
	}
	// The faults, spread over the run: each once that many messages have
	// been answered.
	in := &injector{t: t, w: w, rng: rng}
	schedule := faultSchedule(rng, *rounds)
	total := len(convs) * *messages
	done := make(chan struct{})
	injected := make(chan struct{})
	go func() {
		defer close(injected)
		for i, kind := range schedule {
			if !prog.waitFor((i+1)*total/(len(schedule)+1), done) {
				return
			}
			in.inject(kind)
		}
	}()
	wg.Wait()
	close(done)
	<-injected
	elapsed := time.Since(start)
	w.stopAll()

	r := judge(w, convs, in.done)
	t.Logf("seed %d, %d conversations × %d messages, %d rounds of faults, %s\n%s", *seed, len(convs), *messages, *rounds,
		elapsed.Round(time.Second), r.table())
	t.Logf("turns lost, user told:\n%s", r.toldList())
	r.check(t)
	if t.Failed() || *transcripts {
		writeTranscripts(t, w, convs, in.done)
	}
}

// writeTranscripts writes what each conversation shows, the messages
// sent, and the faults with their times, beside the processes' logs.
func writeTranscripts(t *testing.T, w *world, convs []*conv, done []*injected) {
	var b strings.Builder
	for _, f := range done {
		fmt.Fprintf(&b, "%s %s: %s\n", f.at.Format("15:04:05.000"), f.kind, f.detail)
	}
	os.WriteFile(filepath.Join(w.logs, "faults"), []byte(b.String()), 0o600)
	for _, c := range convs {
		b.Reset()
		for _, m := range c.msgs {
			fmt.Fprintf(&b, "sent %s at %s (bot messages before: %d, resent %d): %s\n", m.script.id, m.sent.Format("15:04:05.000"), m.before, m.resent, m.script.prompt())
		}
		for i, s := range c.side.shown(c) {
			fmt.Fprintf(&b, "--- %d (%s)\n%s\n", i, s.id, s.text)
		}
		os.WriteFile(filepath.Join(w.logs, c.id+".txt"), []byte(b.String()), 0o600)
	}
	t.Logf("transcripts in %s", w.logs)
}

// plan makes the conversations, and the CLI faults their messages script.
func plan(rng *rand.Rand, w *world, n, m, rounds int) []*conv {
	var convs []*conv
	for i := range n {
		c := &conv{id: fmt.Sprintf("c%d", i)}
		if i%2 == 0 {
			c.tgUser = telegramtest.User{ID: int64(7000 + i), FirstName: "user" + c.id, Username: "user_" + c.id}
			w.tgUser = append(w.tgUser, c.tgUser)
			c.side = telegramSide{w.tg}
		} else {
			c.slUser, c.channel = fmt.Sprintf("UCHAOS%02d", i), fmt.Sprintf("CCHAOS%02d", i)
			w.slUser = append(w.slUser, c.slUser)
			c.side = slackSide{w.sl}
		}
		if i%4 >= 2 {
			c.runner = "box1"
		}
		for j := range m {
			c.msgs = append(c.msgs, &msg{script: turnScript{id: fmt.Sprintf("%s.m%d", c.id, j),
				k: 6 + rng.IntN(10), gap: time.Duration(20+rng.IntN(60)) * time.Millisecond, do: "ok"}})
		}
		convs = append(convs, c)
	}
	// Each round crashes one CLI and hangs another, on this machine or on
	// a runner as the seed says; never a conversation's first message.
	for range rounds {
		for _, do := range []string{"crash", "hang"} {
			for {
				c := convs[rng.IntN(len(convs))]
				if m := c.msgs[1+rng.IntN(len(c.msgs)-1)]; m.script.do == "ok" {
					m.script.do = do
					break
				}
			}
		}
	}
	return convs
}

// faultSchedule is the order of the faults injected at points of the run.
func faultSchedule(rng *rand.Rand, rounds int) []string {
	var s []string
	for range rounds {
		s = append(s, kinds...)
	}
	rng.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
	return s
}
