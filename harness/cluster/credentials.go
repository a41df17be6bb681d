package cluster

import (
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Credentials say how redline authenticates to the nodes of a cluster it
// did not create: ACL user (empty: the default user), password (empty: no
// AUTH) and TLS (nil: plain TCP). They live in memory only: never in a
// config, a log or a history.
type Credentials struct {
	User     string
	Password string
	TLS      *tls.Config
}

// Apply sets the credentials on go-redis options.
func (c Credentials) Apply(o *redis.Options) {
	o.Username, o.Password, o.TLSConfig = c.User, c.Password, c.TLS
}

// RunUserArgs are the redis-server arguments that create the run's ACL
// user (Spec.RunUser) on a node from its start, for every runtime that
// starts nodes: its password as a SHA-256 (ACL's #hash), never in clear on
// a command line (docker inspect, ps, a pod's spec).
func RunUserArgs(u Credentials) []string {
	if u.User == "" {
		return nil
	}
	sum := sha256.Sum256([]byte(u.Password))
	return []string{"--user", u.User, "on", "#" + hex.EncodeToString(sum[:]), "~*", "&*", "+@all"}
}

var (
	adminMu    sync.Mutex
	adminCreds Credentials
)

// UseAdminCredentials makes every admin connection opened from now on
// (AdminClient, AdminOptions) authenticate with c. One process tests one
// cluster at a time; the zero value goes back to no AUTH and plain TCP.
func UseAdminCredentials(c Credentials) {
	adminMu.Lock()
	adminCreds = c
	adminMu.Unlock()
}

// AdminCredentials returns the credentials admin connections use.
func AdminCredentials() Credentials {
	adminMu.Lock()
	defer adminMu.Unlock()
	return adminCreds
}
