package cluster

import (
	"crypto/tls"
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
