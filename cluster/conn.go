package cluster

import (
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// AdminClient opens a plain single-node connection for administrative
// commands with these credentials: send-once options (SendOnceOptions).
func (c Credentials) AdminClient(addr string) *redis.Client {
	return redis.NewClient(c.AdminOptions(addr))
}

// AdminOptions are AdminClient's options, for callers that tune pool or
// timeouts.
func (c Credentials) AdminOptions(addr string) *redis.Options {
	o := SendOnceOptions(addr, 3*time.Second, 2)
	o.DialTimeout = 2 * time.Second
	o.DialerRetries = 1
	o.ContextTimeoutEnabled = true
	c.Apply(o)
	return o
}

// AdminClient is an admin connection without credentials (no AUTH, plain
// TCP), for nodes that need none: tests' local clusters. Code that serves
// a run opens its connections with the run's Credentials.AdminClient.
func AdminClient(addr string) *redis.Client {
	return Credentials{}.AdminClient(addr)
}

// SendOnceOptions are the one set of go-redis options every redline
// connection to a node starts from, so that the history and the journals
// record exactly what was sent: RESP2 and no CLIENT SETINFO (nothing on
// connect beyond what Redis 7.0 understands), no maintenance notifications,
// and no retries (go-redis would resend a command whose reply was lost,
// turning one INCR into two). timeout bounds dial, read and write; pool is
// the pool size. Callers add credentials and tune the rest.
func SendOnceOptions(addr string, timeout time.Duration, pool int) *redis.Options {
	return &redis.Options{
		Addr:                     addr,
		Protocol:                 2,
		DisableIdentity:          true,
		MaxRetries:               -1,
		DialTimeout:              timeout,
		ReadTimeout:              timeout,
		WriteTimeout:             timeout,
		PoolSize:                 pool,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	}
}
