package agenttools

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/jake-bot/jake-bot/plugins/cliproc"
)

// spawnWait bounds how long a call waits for its turn's process to be
// known (core.ToolAccess.Spawned): the plugin says it as soon as the
// process has started, before the CLI could connect; a plugin that never
// says it gets its calls refused, not held.
const spawnWait = 10 * time.Second

// process is the process a turn's token was given to, once its plugin
// has started it.
type process struct {
	once    sync.Once
	pid     int
	spawned chan struct{}
}

func newProcess() *process { return &process{spawned: make(chan struct{})} }

// set records the process's id; later calls are ignored.
func (p *process) set(pid int) {
	p.once.Do(func() {
		p.pid = pid
		close(p.spawned)
	})
}

// errNoPeerCheck is why a call is served on its token alone.
var errNoPeerCheck = cliproc.ErrNoPeerCheck

// checkPeer returns nil when req came from the turn's process or one it
// started: every CLI runs as the bot's user and can read any other's
// token, but none can make itself another's descendant. It waits for the
// process to be known, at most spawnWait, and fails closed. Outside
// Linux, where the check cannot be made, it returns errNoPeerCheck (Start
// warns of it).
func (p *process) checkPeer(ctx context.Context, req *http.Request) error {
	timer := time.NewTimer(spawnWait)
	defer timer.Stop()
	select {
	case <-p.spawned:
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-timer.C:
		return errors.New("the bot does not know which process this turn's token was given to")
	}
	client, err := netip.ParseAddrPort(req.RemoteAddr)
	if err != nil {
		return fmt.Errorf("the client's address %q: %w", req.RemoteAddr, err)
	}
	local, ok := req.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return errors.New("the server's own address is unknown")
	}
	server, err := netip.ParseAddrPort(local.String())
	if err != nil {
		return fmt.Errorf("the server's address %q: %w", local, err)
	}
	return cliproc.ConnFromTree(p.pid, client, server)
}
