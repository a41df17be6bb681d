package main

import (
	"bytes"
	"context"
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
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin/localcluster"
)

// writeCerts makes a CA, a server certificate for 127.0.0.1 and a client
// certificate, as PEM files in dir: ca.crt, server.{crt,key}, client.{crt,key}.
func writeCerts(t *testing.T, dir string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "redline test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, typ string, der []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("ca.crt", "CERTIFICATE", caDER)
	for i, name := range []string{"server", "client"} {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(int64(i + 2)), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, _ := x509.MarshalECPrivateKey(key)
		write(name+".crt", "CERTIFICATE", der)
		write(name+".key", "EC PRIVATE KEY", kder)
	}
}

// TestRunOverTLS runs against a cluster that speaks only TLS (clients,
// bus and replication) and wants client certificates.
func TestRunOverTLS(t *testing.T) {
	dir := t.TempDir()
	writeCerts(t, dir)
	f := func(name string) string { return filepath.Join(dir, name) }
	creds := cluster.Credentials{}
	cfgTLS, err := tlsConfig(f("ca.crt"), f("client.crt"), f("client.key"))
	if err != nil {
		t.Fatal(err)
	}
	creds.TLS = cfgTLS
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lc, err := localcluster.StartWith(ctx, t.TempDir(), 3, 0, time.Second, "", creds, func(port int) []string {
		return []string{"--port", "0", "--tls-port", strconv.Itoa(port), "--tls-cluster", "yes", "--tls-replication", "yes",
			"--tls-cert-file", f("server.crt"), "--tls-key-file", f("server.key"), "--tls-ca-cert-file", f("ca.crt")}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Stop()

	res := t.TempDir()
	var out, errb bytes.Buffer
	args := []string{"run", "--addrs", lc.Addrs[0], "--workload", "register", "--time-limit", "4s", "--concurrency", "3",
		"--nemesis", "migrate", "--nemesis-interval", "1s", "--yes", "--results", res}
	// Plain TCP gets nowhere, and says so before anything is stored.
	if code := run(args, &out, &errb); code != exitEnvironment || !strings.Contains(errb.String(), "cannot reach the cluster") {
		t.Fatalf("without --tls: exit %d: %s", code, errb.String())
	}
	requireEmpty(t, res)
	out.Reset()
	errb.Reset()
	code := run(append(args, "--tls", "--tls-ca", f("ca.crt"), "--tls-cert", f("client.crt"), "--tls-key", f("client.key")), &out, &errb)
	if code != exitValid || !strings.Contains(out.String(), "audit: no foreign data touched") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
}
