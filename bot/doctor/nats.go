package doctor

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jake-bot/jake-bot/bot"
	"github.com/jake-bot/jake-bot/plugins/remote"
)

// checkNATS connects to NATS_URL as the bot and a runner would, and
// reports the server and the round trip; it checks the runner's name too.
func checkNATS(r *Report, cfg bot.Config) {
	if !cfg.NATS.Enabled() {
		r.add("runners", "nats", OK, "NATS_URL is not set: every turn runs on this machine")
		return
	}
	if name, err := cfg.NATS.Name(); err != nil {
		r.add("runners", "runner name", Warn, "%v (only `jakebot runner` needs it)", err)
	} else {
		r.add("runners", "runner name", OK, "%s (what `jakebot runner` on this machine answers to)", name)
	}
	nc, err := remote.Connect(cfg.NATS, "jakebot doctor", nil)
	if err != nil {
		r.add("runners", "nats", Fail, "%v", err)
		return
	}
	defer nc.Close()
	rtt, err := nc.RTT()
	if err != nil {
		r.add("runners", "nats", Fail, "connected to %s, but it does not answer: %v", nc.ConnectedUrlRedacted(), err)
		return
	}
	r.add("runners", "nats", OK, "%s (server %s, round trip %s)", nc.ConnectedUrlRedacted(), nc.ConnectedServerVersion(), rtt.Round(time.Microsecond))
	js, err := jetstream.New(nc)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err = js.AccountInfo(ctx)
	}
	if err != nil {
		r.add("runners", "jetstream", Fail, "a gateway keeps the messages of turns on runners, the turns it follows and (unless STATE_FILE=off) its conversations in JetStream, which this server does not offer (%v): run nats-server -js", err)
		return
	}
	r.add("runners", "jetstream", OK, "available: turn messages, followed turns and conversations are kept there")
}
