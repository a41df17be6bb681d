package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// AdminClient opens a plain single-node connection for administrative
// commands: send-once options (SendOnceOptions) with the admin credentials.
func AdminClient(addr string) *redis.Client {
	return redis.NewClient(AdminOptions(addr))
}

// AdminOptions are AdminClient's options, with the admin credentials
// (UseAdminCredentials), for callers that tune pool or timeouts.
func AdminOptions(addr string) *redis.Options {
	o := SendOnceOptions(addr, 3*time.Second, 2)
	o.DialTimeout = 2 * time.Second
	o.DialerRetries = 1
	o.ContextTimeoutEnabled = true
	AdminCredentials().Apply(o)
	return o
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

// ClusterNodesText returns the raw CLUSTER NODES reply of one node.
func ClusterNodesText(ctx context.Context, addr string) (string, error) {
	c := AdminClient(addr)
	defer c.Close()
	s, err := c.ClusterNodes(ctx).Result()
	if err != nil {
		return "", fmt.Errorf("CLUSTER NODES on %s: %w", addr, err)
	}
	return s, nil
}

// Topology returns the cluster as seen by the first node in addrs that answers
// CLUSTER NODES.
func Topology(ctx context.Context, addrs []string) ([]NodeInfo, error) {
	var errs []error
	for _, a := range addrs {
		text, err := ClusterNodesText(ctx, a)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		return ParseNodes(text)
	}
	if len(errs) == 0 {
		return nil, errors.New("topology: no node addresses given")
	}
	return nil, fmt.Errorf("topology: no node answered: %w", errors.Join(errs...))
}

// InfoField extracts one "name:value" field from INFO or CLUSTER INFO text.
func InfoField(info, name string) (string, bool) {
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimRight(line, "\r")
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return v, true
		}
	}
	return "", false
}

// SplitAddr splits a node address "host:port", checking that the host is
// not empty and the port is 1-65535.
func SplitAddr(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("address %q is not host:port: %v", addr, err)
	}
	if host == "" {
		return "", 0, fmt.Errorf("address %q has no host (want host:port, e.g. 10.0.0.5:6379)", addr)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 1 || port > 65535 {
		return "", 0, fmt.Errorf("address %q has a bad port %q (want 1-65535)", addr, p)
	}
	return host, port, nil
}

// ExternalNodes describes the nodes of an existing cluster at addrs
// (host:port each), named n1, n2, ... in the order given: the check of
// --addrs. An address that is not host:port or is given twice is an error.
func ExternalNodes(addrs []string) ([]Node, error) {
	if len(addrs) == 0 {
		return nil, errors.New("external cluster: no addresses given (want --addrs host:port,...)")
	}
	seen := map[string]bool{}
	nodes := make([]Node, 0, len(addrs))
	for i, a := range addrs {
		a = strings.TrimSpace(a)
		host, _, err := SplitAddr(a)
		if err != nil {
			return nil, fmt.Errorf("external cluster: %w", err)
		}
		if seen[a] {
			return nil, fmt.Errorf("external cluster: address %s given twice", a)
		}
		seen[a] = true
		nodes = append(nodes, Node{Name: fmt.Sprintf("n%d", i+1), Addr: a, Host: host})
	}
	return nodes, nil
}
