package doctor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jake-bot/jake-bot/bot"
	"github.com/jake-bot/jake-bot/bot/state"
	"github.com/jake-bot/jake-bot/core/workspace"
	"github.com/jake-bot/jake-bot/plugins/remote"
)

// checkNATS connects to NATS_URL as the bot and a runner would, and
// reports the server and the round trip, and how exposed the connection
// is; it checks the runner's name too.
func checkNATS(r *Report, cfg bot.Config, opts Options) {
	if !cfg.NATS.Enabled() {
		r.add("runners", "nats", OK, "NATS_URL is not set: every turn runs on this machine")
		return
	}
	if name, err := cfg.NATS.Name(); err != nil {
		r.add("runners", "runner name", Warn, "%v (only `jakebot runner` needs it)", err)
	} else {
		r.add("runners", "runner name", OK, "%s (what `jakebot runner` on this machine answers to)", name)
	}
	var more []nats.Option
	if opts.NATSDialer != nil {
		more = append(more, nats.SetCustomDialer(opts.NATSDialer))
	}
	nc, err := remote.Connect(cfg.NATS, "jakebot doctor", nil, more...)
	if err != nil {
		checkNATSExposure(r, cfg.NATS, nil)
		r.add("runners", "nats", Fail, "%v", err)
		return
	}
	defer nc.Close()
	checkNATSExposure(r, cfg.NATS, nc)
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
	checkLease(r, cfg, nc)
	checkState(r, nc)
}

// checkState says how large the state kept in NATS is and in how many
// messages, or that the next gateway could not read it.
func checkState(r *Report, nc *nats.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	info, err := remote.ReadState(ctx, nc)
	switch {
	case errors.Is(err, remote.ErrStateUnreadable):
		r.add("runners", "state", Fail, "%v: a gateway starting now would start with no conversations (its first save replaces it)", err)
		return
	case err != nil:
		r.add("runners", "state", Fail, "%v", err)
		return
	case info.Data == nil:
		r.add("runners", "state", OK, "no conversations kept on this server yet")
		return
	}
	snap, err := state.Decode(info.Data)
	if err != nil {
		r.add("runners", "state", Fail, "%v: a gateway starting now would start with no conversations (its first save replaces it)", err)
		return
	}
	where := "one message"
	if info.Messages > 1 {
		where = fmt.Sprintf("%d messages (larger than one, max_payload %s)", info.Messages, workspace.Size(nc.MaxPayload()))
	}
	r.add("runners", "state", OK, "%d conversations, %d schedules: %s, kept as %s in %s", len(snap.Conversations), len(snap.Schedules),
		workspace.Size(int64(len(info.Data))), workspace.Size(int64(info.Stored)), where)
}

// checkLease reports which gateway holds the lease, whether this one's
// name is usable, and whether its FAILOVER_AFTER is the bucket's.
func checkLease(r *Report, cfg bot.Config, nc *nats.Conn) {
	name, err := cfg.NATS.Gateway()
	if err != nil {
		r.add("runners", "gateway lease", Fail, "%v", err)
		return
	}
	ttl := cmp.Or(cfg.NATS.FailoverAfter, remote.FailoverAfter)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	info, err := remote.ReadLease(ctx, nc)
	switch {
	case err != nil:
		r.add("runners", "gateway lease", Fail, "%v", err)
	case !info.Exists:
		r.add("runners", "gateway lease", OK, "no gateway has run on this server yet: %s will be active, and a second one stands by (FAILOVER_AFTER %s)", name, ttl)
	case info.TTL != ttl:
		r.add("runners", "gateway lease", Warn, "the lease bucket lives %s, not FAILOVER_AFTER=%s: the bucket's holds for every gateway (delete the bucket jakebot_lease, with no gateway running, to change it)", info.TTL, ttl)
	case info.Holder == nil:
		r.add("runners", "gateway lease", OK, "no gateway is active now: %s would take over at once (FAILOVER_AFTER %s)", name, info.TTL)
	case info.Holder.Name == name:
		r.add("runners", "gateway lease", OK, "this gateway's name %s is active since %s: started again here, it waits up to %s unless the running one stops (two gateways of one name cannot be told apart: give each GATEWAY_NAME)", name, info.Holder.Since.UTC().Format(time.DateTime), info.TTL)
	default:
		r.add("runners", "gateway lease", OK, "%s is active since %s UTC; %s would stand by and take over within %s of its end", info.Holder.Name, info.Holder.Since.UTC().Format(time.DateTime), name, info.TTL)
	}
}

// checkNATSExposure warns about a NATS server beyond this host reached
// without TLS (turns, answers and files travel in clear) or without
// credentials (whoever reaches the server may publish on a runner's
// subjects, and a runner obeys the admin flag of any request there). nc,
// when connected, says whether TLS is in use (a server that requires it
// upgrades a nats:// URL).
func checkNATSExposure(r *Report, c remote.Config, nc *nats.Conn) {
	hosts, secureURL, userInURL := natsHosts(c.URL)
	if len(hosts) == 0 {
		r.add("runners", "nats exposure", OK, "loopback only")
		return
	}
	where := strings.Join(hosts, ", ")
	secure := secureURL || c.CA != "" || c.Cert != ""
	if nc != nil {
		_, err := nc.TLSConnectionState()
		secure = err == nil
	}
	if secure {
		r.add("runners", "nats tls", OK, "%s over TLS", where)
	} else {
		r.add("runners", "nats tls", Warn, "%s is beyond this host and reached without TLS: prompts, answers and files travel in clear, and so would a password; use a tls:// URL (NATS_CA, NATS_CERT/NATS_KEY) (README, Several machines)", where)
	}
	if c.Creds != "" || c.NkeySeed != "" || c.User != "" || userInURL {
		r.add("runners", "nats sign-in", OK, "signed in with credentials of its own")
	} else {
		r.add("runners", "nats sign-in", Warn, "%s is beyond this host and reached without credentials: whoever reaches the server may publish on a runner's subjects, and a runner obeys the admin flag of any request there; give the gateway and each runner a NATS user of its own (NATS_CREDS, NATS_NKEY or NATS_USER/NATS_PASSWORD) with the permissions in README, Several machines", where)
	}
}

// natsHosts returns the hosts of NATS_URL (a list, comma-separated) that
// are not loopback, whether every URL asks for TLS, and whether any
// carries a user or token.
func natsHosts(list string) (hosts []string, secure, user bool) {
	secure = true
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if !strings.Contains(s, "://") {
			s = "nats://" + s
		}
		u, err := url.Parse(s)
		if err != nil {
			continue
		}
		secure = secure && (u.Scheme == "tls" || u.Scheme == "wss")
		user = user || u.User != nil
		host := u.Hostname()
		if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
			continue
		}
		hosts = append(hosts, host)
	}
	return hosts, secure, user
}
