package doctor

import (
	"context"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jake-bot/jake-bot/bot"
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
