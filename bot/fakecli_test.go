package bot_test

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const fakeSession = "5f0c2a8e-1b3d-4c5e-8f90-123456789abc"

// fakeClaude behaves like `claude -p --output-format stream-json` gone
// wrong in one of several ways, and returns the exit code. Its arguments
// are the plugin's; it ignores them.
func fakeClaude(mode string) int {
	w := bufio.NewWriterSize(os.Stdout, 64<<10)
	defer w.Flush()
	line := func(s string) { w.WriteString(s + "\n") }
	delta := func(text string) string {
		return `{"type":"stream_event","event":{"delta":{"text":` + strconv.Quote(text) + `,"type":"text_delta"},"index":0,"type":"content_block_delta"},"session_id":"` + fakeSession + `","parent_tool_use_id":null}`
	}
	rawDelta := func(text string) string { // text goes in unescaped, bytes as they are
		return `{"type":"stream_event","event":{"delta":{"text":"` + text + `","type":"text_delta"},"index":0,"type":"content_block_delta"},"session_id":"` + fakeSession + `","parent_tool_use_id":null}`
	}
	result := `{"type":"result","subtype":"success","is_error":false,"duration_ms":1200,"num_turns":1,"result":"done","session_id":"` + fakeSession + `","total_cost_usd":0.0125}`
	line(`{"type":"system","subtype":"init","cwd":"/","session_id":"` + fakeSession + `","model":"fake"}`)

	switch mode {
	case "ok":
		line(delta("All good."))
		line(result)
	case "invalid-utf8":
		line(rawDelta("caf\xe9 \xff\xfe ok"))
		line("\xff\xfe\x00 not json at all \xc3")
		line(result)
	case "huge-line":
		chunk := strings.Repeat("x", 1<<20)
		for range 100 { // 100 MB, no newline
			w.WriteString(chunk)
		}
	case "flood":
		n, _ := strconv.Atoi(os.Getenv("FAKE_EVENTS"))
		for range n {
			line(delta("x"))
		}
		line(result)
	case "silent-hang":
		w.Reset(os.Stdout) // not even the init line
		time.Sleep(time.Hour)
	case "no-result":
		line(delta("Half an answer"))
	case "exit-137":
		line(delta("Working on it"))
		w.Flush()
		fmt.Fprintln(os.Stderr, "Killed")
		return 137
	case "killed":
		line(delta("Working on it"))
		w.Flush()
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		time.Sleep(time.Hour)
	case "load":
		// FAKE_EVENTS deltas "<i>.<write time>; ", FAKE_BATCH of them
		// written at once every FAKE_GAP: the load benchmark measures how
		// long each takes to reach the platform.
		n, _ := strconv.Atoi(os.Getenv("FAKE_EVENTS"))
		batch, _ := strconv.Atoi(os.Getenv("FAKE_BATCH"))
		gap, _ := time.ParseDuration(os.Getenv("FAKE_GAP"))
		w.Flush()
		for i := range n {
			line(delta(fmt.Sprintf("%d.%d; ", i, time.Now().UnixMicro()%1e10)))
			if batch <= 1 || i%batch == batch-1 {
				w.Flush()
				time.Sleep(gap)
			}
		}
		line(result)
	default:
		fmt.Fprintln(os.Stderr, "fake claude: unknown mode", mode)
		return 2
	}
	return 0
}
