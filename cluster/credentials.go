package cluster

import (
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"

	"github.com/redis/go-redis/v9"
)

// Credentials say how redline authenticates to the nodes of a cluster: ACL
// user (empty: the default user), password (empty: no AUTH) and TLS (nil:
// plain TCP). They live in memory only: never in a config, a log or a
// history. A run reads them once (cmd: $REDISCLI_AUTH or --password-file)
// and hands the value down to everything that opens a connection for it
// (runtimes through Spec.RunUser, the runner, nemeses, clusteradmin), so
// two runs in one process can use two clusters with different secrets.
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
