package doctor_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jake-bot/jake-bot/bot"
	"github.com/jake-bot/jake-bot/bot/doctor"
	"github.com/jake-bot/jake-bot/bot/state"
	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/remote"
)

// runNATS runs a NATS server on loopback for the test.
func runNATS(t *testing.T, opts *server.Options) *server.Server {
	t.Helper()
	opts.Host, opts.Port, opts.NoLog, opts.NoSigs = "127.0.0.1", -1, true, true
	ns, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server did not start")
	}
	t.Cleanup(ns.Shutdown)
	return ns
}

// loopbackDialer reaches addr whatever host a URL names: a server on
// loopback stands in for one on another machine.
type loopbackDialer struct{ addr string }

func (d loopbackDialer) Dial(network, _ string) (net.Conn, error) { return net.Dial(network, d.addr) }

// NATS beyond this host without TLS, or without credentials, is warned
// about: a runner obeys the admin flag of whoever may publish on its
// subjects. Loopback is fine either way.
func TestDoctorNATSExposure(t *testing.T) {
	t.Parallel()
	ns := runNATS(t, &server.Options{})
	away := loopbackDialer{strings.TrimPrefix(ns.ClientURL(), "nats://")}
	type row struct {
		want   doctor.Status
		detail string
	}
	for _, tc := range []struct {
		name      string
		nats      remote.Config
		exposure  *row // loopback only
		tls, sign row
		// reached: the doctor connected (to the server on loopback).
		reached bool
	}{
		{name: "loopback, anonymous", nats: remote.Config{URL: ns.ClientURL()}, reached: true, exposure: &row{doctor.OK, "loopback only"}},
		{name: "another host, anonymous", nats: remote.Config{URL: "nats://box9.example:4222"}, reached: true,
			tls:  row{doctor.Warn, "box9.example is beyond this host and reached without TLS"},
			sign: row{doctor.Warn, "a runner obeys the admin flag of any request there"}},
		{name: "another host, a user", nats: remote.Config{URL: "nats://box9.example:4222", User: "gateway", Password: "pw-of-the-gateway"}, reached: true,
			tls: row{doctor.Warn, "without TLS"}, sign: row{doctor.OK, "credentials of its own"}},
		{name: "a list, one host away, user in its URL", nats: remote.Config{URL: "nats://127.0.0.1:4222, nats://gw:pw@box9.example:4222"},
			tls: row{doctor.Warn, "box9.example is beyond"}, sign: row{doctor.OK, "credentials of its own"}},
		{name: "another host over TLS", nats: remote.Config{URL: "tls://box9.example:4222", Creds: "/nonexistent/box.creds"},
			tls: row{doctor.OK, "box9.example over TLS"}, sign: row{doctor.OK, "credentials of its own"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := bot.Config{AllowedRoots: []string{dir}}
			cfg.Claude.Bin = script(t, dir, "claude", "echo 1.0")
			cfg.NATS = tc.nats
			cfg.NATS.RunnerName = "box2"
			r := doctor.Run(context.Background(), cfg, doctor.Options{Getenv: env(nil), Home: dir, NATSDialer: away})
			if tc.reached {
				expect(t, r, "nats", doctor.OK, "round trip")
			}
			if tc.exposure != nil {
				expect(t, r, "nats exposure", tc.exposure.want, tc.exposure.detail)
				return
			}
			expect(t, r, "nats tls", tc.tls.want, tc.tls.detail)
			expect(t, r, "nats sign-in", tc.sign.want, tc.sign.detail)
			if strings.Contains(text(t, r), "pw-of-the-gateway") {
				t.Error("the report prints the NATS password")
			}
		})
	}
}

// The doctor reads the gateways' lease: none yet, the active gateway and
// since when, and a FAILOVER_AFTER the bucket does not keep.
func TestDoctorGatewayLease(t *testing.T) {
	t.Parallel()
	ns := runNATS(t, &server.Options{JetStream: true, StoreDir: t.TempDir()})
	check := func(cfg remote.Config, want doctor.Status, detail string) {
		t.Helper()
		dir := t.TempDir()
		c := bot.Config{AllowedRoots: []string{dir}, NATS: cfg}
		c.Claude.Bin = script(t, dir, "claude", "echo 1.0")
		expect(t, doctor.Run(context.Background(), c, doctor.Options{Getenv: env(nil), Home: dir}), "gateway lease", want, detail)
	}
	check(remote.Config{URL: ns.ClientURL(), GatewayName: "gw-b"}, doctor.OK, "no gateway has run on this server yet: gw-b will be active")
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	lease, err := remote.OpenLease(context.Background(), nc, remote.LeaseConfig{Name: "gw-a", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lease.Acquire(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	defer lease.Release()
	check(remote.Config{URL: ns.ClientURL(), GatewayName: "gw-b", FailoverAfter: time.Minute}, doctor.OK, "gw-a is active since")
	check(remote.Config{URL: ns.ClientURL(), GatewayName: "gw-b", FailoverAfter: 10 * time.Second}, doctor.Warn, "the lease bucket lives 1m0s, not FAILOVER_AFTER=10s")
	check(remote.Config{URL: ns.ClientURL(), GatewayName: "gw b"}, doctor.Fail, `gateway name "gw b"`)
}

// The doctor says how large the state kept in NATS is and in how many
// messages (more than one beyond max_payload), and fails when a gateway
// could not read it back.
func TestDoctorStateInNATS(t *testing.T) {
	t.Parallel()
	ns := runNATS(t, &server.Options{JetStream: true, StoreDir: t.TempDir(), MaxPayload: 32 << 10})
	check := func(want doctor.Status, detail string) {
		t.Helper()
		dir := t.TempDir()
		c := bot.Config{AllowedRoots: []string{dir}, NATS: remote.Config{URL: ns.ClientURL()}}
		c.Claude.Bin = script(t, dir, "claude", "echo 1.0")
		expect(t, doctor.Run(context.Background(), c, doctor.Options{Getenv: env(nil), Home: dir}), "state", want, detail)
	}
	check(doctor.OK, "no conversations kept on this server yet")

	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx := context.Background()
	store, err := remote.OpenState(ctx, nc)
	if err != nil {
		t.Fatal(err)
	}
	var snap state.Snapshot
	for i := range 40 {
		snap.Conversations = append(snap.Conversations, core.Entry{
			Key:          core.ConversationKey{Platform: "slack", Channel: fmt.Sprint("C", i)},
			Conversation: core.Conversation{Plugin: "claude", Workdir: "/src/app", LastRequest: rand.Text() + rand.Text() + rand.Text()}})
	}
	data, err := state.Encode(snap, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Save(ctx, data); err != nil {
		t.Fatal(err)
	}
	check(doctor.OK, "40 conversations, 0 schedules")

	// Forty conversations each with 4 KB that hardly compress.
	for i := range snap.Conversations {
		var text strings.Builder
		for text.Len() < 4000 {
			text.WriteString(rand.Text())
		}
		snap.Conversations[i].LastRequest = text.String()
	}
	if data, err = state.Encode(snap, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := store.Save(ctx, data); err != nil {
		t.Fatal(err)
	}
	check(doctor.OK, "messages (larger than one, max_payload 32 KB)")

	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := js.Stream(ctx, "KV_jakebot_state")
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Purge(ctx, jetstream.WithPurgeSubject("$KV.jakebot_state.chunks.>")); err != nil {
		t.Fatal(err)
	}
	check(doctor.Fail, "state unreadable")
}
