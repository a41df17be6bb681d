package main

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/harness"
)

// passwordEnv is where the password comes from without --password-file,
// the variable redis-cli reads too. A password is never a flag value:
// flags show in ps and in config.json's command line.
const passwordEnv = "REDISCLI_AUTH"

func addCredentialFlags(c *cobra.Command, cfg *harness.Config) {
	f := c.Flags()
	f.StringVar(&cfg.User, "user", "", "ACL user to run as (password from $"+passwordEnv+" or --password-file); on a cluster redline creates, every node gets this user (a random password when none is given)")
	f.StringVar(&cfg.PasswordFrom, "password-file", "", "file holding the password of --user or of an external cluster (instead of $"+passwordEnv+")")
	f.BoolVar(&cfg.TLS, "tls", false, "connect to an external cluster with TLS")
	f.StringVar(&cfg.TLSCA, "tls-ca", "", "CA certificate file (PEM) to verify the nodes with (default: the system's)")
	f.StringVar(&cfg.TLSCert, "tls-cert", "", "client certificate file (PEM), with --tls-key")
	f.StringVar(&cfg.TLSKey, "tls-key", "", "client private key file (PEM), with --tls-cert")
}

// loadCredentials reads the password and TLS files named in cfg. It
// rewrites cfg.PasswordFrom to say where the password came from (never
// what it is).
func loadCredentials(cfg *harness.Config) (cluster.Credentials, error) {
	var c cluster.Credentials
	external := cfg.Target == "external"
	c.User = cfg.User
	switch {
	case cfg.PasswordFrom != "":
		path := strings.TrimPrefix(cfg.PasswordFrom, "file ")
		b, err := os.ReadFile(path)
		if err != nil {
			return c, fmt.Errorf("--password-file: %v", err)
		}
		c.Password = strings.TrimRight(string(b), "\r\n")
		cfg.PasswordFrom = "file " + path
	case os.Getenv(passwordEnv) != "" && (external || cfg.User != ""):
		c.Password = os.Getenv(passwordEnv)
		cfg.PasswordFrom = "env " + passwordEnv
	case !external && cfg.User != "":
		// The run's user on a cluster redline creates needs some password:
		// a fresh one nobody else knows.
		b := make([]byte, 16)
		rand.Read(b)
		c.Password = hex.EncodeToString(b)
		cfg.PasswordFrom = "generated"
	}
	tlsFiles := cfg.TLSCA != "" || cfg.TLSCert != "" || cfg.TLSKey != ""
	if tlsFiles && !cfg.TLS {
		return c, fmt.Errorf("--tls-ca, --tls-cert and --tls-key need --tls")
	}
	if !external && cfg.User == "" && c.Password != "" {
		return c, fmt.Errorf("--password-file on a cluster redline creates is the password of --user: name the ACL user to create with --user")
	}
	if !external && cfg.TLS {
		return c, fmt.Errorf("--tls is for clusters redline did not create (--addrs)")
	}
	if cfg.TLS {
		t, err := tlsConfig(cfg.TLSCA, cfg.TLSCert, cfg.TLSKey)
		if err != nil {
			return c, err
		}
		c.TLS = t
	}
	return c, nil
}

func tlsConfig(ca, cert, key string) (*tls.Config, error) {
	t := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("--tls-ca: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-ca %s: no PEM certificate in it", ca)
		}
		t.RootCAs = pool
	}
	if (cert == "") != (key == "") {
		return nil, fmt.Errorf("--tls-cert and --tls-key go together")
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert/--tls-key: %v", err)
		}
		t.Certificates = []tls.Certificate{pair}
	}
	return t, nil
}
