package remote_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/remote"
)

// write writes data to a new file in dir and returns its path.
func write(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// certs makes a throwaway CA and, signed by it, a certificate for the
// server on 127.0.0.1 and one for clients; it returns their files.
func certs(t *testing.T) (ca, serverCert, serverKey, clientCert, clientKey string) {
	t.Helper()
	dir := t.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caParsed, _ := x509.ParseCertificate(caDER)
	ca = write(t, dir, "ca.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}))
	leaf := func(name string, serial int64, usage x509.ExtKeyUsage) (string, string) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caParsed, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		keyDER, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		return write(t, dir, name+".pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
			write(t, dir, name+"-key.pem", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	}
	serverCert, serverKey = leaf("server", 2, x509.ExtKeyUsageServerAuth)
	clientCert, clientKey = leaf("client", 3, x509.ExtKeyUsageClientAuth)
	return
}

// tlsServer requires TLS with a client certificate from the CA.
func tlsServer(t *testing.T) (*server.Options, remote.Config, remote.Config) {
	ca, cert, key, clientCert, clientKey := certs(t)
	tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: cert, KeyFile: key, CaFile: ca, Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	opts := &server.Options{TLS: true, TLSVerify: true, TLSConfig: tc, TLSTimeout: 5}
	good := remote.Config{CA: ca, Cert: clientCert, Key: clientKey}
	return opts, good, remote.Config{CA: ca} // no client certificate
}

// seedFile makes a user nkey and writes its seed to a file.
func seedFile(t *testing.T) (path, public string) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := kp.Seed()
	public, _ = kp.PublicKey()
	return write(t, t.TempDir(), "user.nk", seed), public
}

// nkeyServer knows one user by its nkey.
func nkeyServer(t *testing.T) (*server.Options, remote.Config, remote.Config) {
	seed, public := seedFile(t)
	stranger, _ := seedFile(t)
	opts := &server.Options{Nkeys: []*server.NkeyUser{{Nkey: public}}}
	return opts, remote.Config{NkeySeed: seed}, remote.Config{NkeySeed: stranger}
}

// credsServer trusts an operator, which signed an account (with
// JetStream), which signed the user of the credentials file.
func credsServer(t *testing.T) (*server.Options, remote.Config, remote.Config) {
	operator, _ := nkeys.CreateOperator()
	operatorPub, _ := operator.PublicKey()
	account, _ := nkeys.CreateAccount()
	accountPub, _ := account.PublicKey()
	ac := jwt.NewAccountClaims(accountPub)
	ac.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
	accountJWT, err := ac.Encode(operator)
	if err != nil {
		t.Fatal(err)
	}
	// JetStream in operator mode needs a system account.
	system, _ := nkeys.CreateAccount()
	systemPub, _ := system.PublicKey()
	systemJWT, err := jwt.NewAccountClaims(systemPub).Encode(operator)
	if err != nil {
		t.Fatal(err)
	}
	resolver := &server.MemAccResolver{}
	for pub, claims := range map[string]string{accountPub: accountJWT, systemPub: systemJWT} {
		if err := resolver.Store(pub, claims); err != nil {
			t.Fatal(err)
		}
	}
	creds := func(signer nkeys.KeyPair) string {
		user, _ := nkeys.CreateUser()
		userPub, _ := user.PublicKey()
		userJWT, err := jwt.NewUserClaims(userPub).Encode(signer)
		if err != nil {
			t.Fatal(err)
		}
		seed, _ := user.Seed()
		file, err := jwt.FormatUserConfig(userJWT, seed)
		if err != nil {
			t.Fatal(err)
		}
		return write(t, t.TempDir(), "user.creds", file)
	}
	other, _ := nkeys.CreateAccount() // an account the operator never signed
	opts := &server.Options{TrustedKeys: []string{operatorPub}, AccountResolver: resolver, SystemAccount: systemPub}
	return opts, remote.Config{Creds: creds(account)}, remote.Config{Creds: creds(other)}
}

// Each way of signing in that README.md offers, on a server that
// requires it: a gateway and a runner connected so run a turn, and a
// client without the credential is refused.
func TestSecureConnections(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		server func(*testing.T) (*server.Options, remote.Config, remote.Config)
	}{
		{"tls with client certificates", tlsServer},
		{"nkey", nkeyServer},
		{"credentials file", credsServer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts, good, bad := tc.server(t)
			w := &world{t: t, url: runNATS(t, opts), convs: core.NewState(), gwNATS: good}
			box2 := w.startRunner(runnerOpts{name: "box2", nats: good})
			w.startGateway()
			w.waitOnline("box2")
			w.startOn(box2)
			w.say("hello")
			w.expect("box2 echo: hello")

			bad.URL = w.url
			if nc, err := remote.Connect(bad, "stranger", nil); err == nil {
				nc.Close()
				t.Error("a client without the credential connected")
			}
		})
	}
}
