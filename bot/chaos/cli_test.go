package chaos

import (
	"bufio"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cliEnv makes the test binary a fake Claude Code (TestMain): it reads the
// user's message from stdin, as `claude -p --input-format stream-json`
// does, and plays the script the message carries (turnScript).
const (
	cliEnv    = "JAKEBOT_CHAOS_CLI"
	cliLogEnv = "JAKEBOT_CHAOS_CLI_LOG" // where a CLI writes when it crashes or hangs
)

// turnScript is what one message asks of the fake CLI: k deltas gap apart
// (each "<id>:w<i> ", then "<id>:END"), unless do is "crash" (it kills
// itself halfway, as an out-of-memory kill would) or "hang" (it goes
// silent halfway, until the bot's idle timeout stops it).
type turnScript struct {
	id  string
	k   int
	gap time.Duration
	do  string
}

func (s turnScript) prompt() string {
	return fmt.Sprintf("chaos %s k=%d gap=%s do=%s", s.id, s.k, s.gap, s.do)
}

func parseScript(prompt string) (turnScript, error) {
	var s turnScript
	var gap string
	if i := strings.Index(prompt, "chaos "); i > 0 { // a steered message may come with words before it
		prompt = prompt[i:]
	}
	if _, err := fmt.Sscanf(prompt, "chaos %s k=%d gap=%s do=%s", &s.id, &s.k, &gap, &s.do); err != nil {
		return s, fmt.Errorf("not a chaos script: %q: %w", prompt, err)
	}
	d, err := time.ParseDuration(gap)
	s.gap = d
	return s, err
}

// token is the i-th delta of reply id; the last one is END.
func token(id string, i int) string { return id + ":w" + strconv.Itoa(i) + " " }

func endToken(id string) string { return id + ":END" }

// fakeCLI is the fake Claude Code; it returns the exit code.
func fakeCLI() int {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	prompt, err := readPrompt(in)
	if err != nil {
		return 0 // stdin closed before a message: a warm CLI never used
	}
	// Claude exits at stdin's end; so does the fake, whatever it is
	// doing, so that a bot killed mid-turn leaves no CLI behind. A
	// message written into the running turn (steered) is answered in it,
	// after the turn's own reply, as Claude takes it at its next step.
	steered := make(chan string, 64)
	go func() {
		for {
			p, err := readPrompt(in)
			if err != nil {
				os.Exit(0)
			}
			steered <- p
		}
	}()
	s, err := parseScript(prompt)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake claude:", err)
		return 2
	}
	session := newUUID()
	out := bufio.NewWriter(os.Stdout)
	line := func(v string) {
		out.WriteString(v + "\n")
		out.Flush()
	}
	line(`{"type":"system","subtype":"init","cwd":"/","session_id":"` + session + `","model":"fake"}`)
	delta := func(text string) {
		line(`{"type":"stream_event","event":{"delta":{"text":` + strconv.Quote(text) +
			`,"type":"text_delta"},"index":0,"type":"content_block_delta"},"session_id":"` + session + `","parent_tool_use_id":null}`)
	}
	for i := range s.k {
		if i == s.k/2 && s.do != "ok" {
			logFault(s)
			if s.do == "crash" {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
			select {} // hang: until stdin closes or a signal
		}
		delta(token(s.id, i))
		time.Sleep(s.gap) // the CLI's own pace, not a synchronisation
	}
	delta(endToken(s.id))
	for more := true; more; {
		select {
		case p := <-steered:
			if t, err := parseScript(p); err == nil {
				delta(" ")
				for i := range t.k {
					delta(token(t.id, i))
				}
				delta(endToken(t.id))
			}
		default:
			more = false
		}
	}
	line(`{"type":"result","subtype":"success","is_error":false,"duration_ms":1000,"num_turns":1,"result":"done","session_id":"` +
		session + `","total_cost_usd":0.001}`)
	return 0
}

// readPrompt reads stdin's lines up to the first user message and returns
// its text.
func readPrompt(in *bufio.Reader) (string, error) {
	for {
		l, err := in.ReadString('\n')
		if err != nil {
			return "", err
		}
		var m struct {
			Type    string `json:"type"`
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal([]byte(l), &m) != nil || m.Type != "user" {
			continue
		}
		var text string
		if json.Unmarshal(m.Message.Content, &text) == nil {
			return text, nil
		}
		var blocks []struct{ Type, Text string }
		json.Unmarshal(m.Message.Content, &blocks)
		for _, b := range blocks {
			if b.Type == "text" {
				text += b.Text
			}
		}
		return strings.TrimSpace(text), nil
	}
}

// logFault writes when the CLI crashed or hung, for the time to recover.
func logFault(s turnScript) {
	dir := os.Getenv(cliLogEnv)
	if dir == "" {
		return
	}
	f, err := os.OpenFile(filepath.Join(dir, "cli-faults"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	fmt.Fprintf(f, "%d %s %s\n", time.Now().UnixNano(), s.id, s.do)
	f.Close()
}

func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
