package clusteradmin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/cluster"
)

// Admin holds plain go-redis clients to single nodes, for admin commands,
// one per address, opened on first use (Creds.AdminOptions: send-once,
// with the run's credentials). Retries are off: an admin command is sent
// once. The zero value is ready (no AUTH, plain TCP); Close drops the
// clients (a later command opens them again).
type Admin struct {
	// Log receives what an operation could not do and went on without
	// (nil: dropped).
	Log func(format string, args ...any)
	// Creds authenticate every client (and MIGRATE to the target node).
	Creds cluster.Credentials

	mu      sync.Mutex
	clients map[string]*redis.Client
}

func (a *Admin) logf(format string, args ...any) {
	if a.Log != nil {
		a.Log(format, args...)
	}
}

// Client returns the client of the node at addr.
func (a *Admin) Client(addr string) *redis.Client {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c, ok := a.clients[addr]; ok {
		return c
	}
	if a.clients == nil {
		a.clients = map[string]*redis.Client{}
	}
	o := a.Creds.AdminOptions(addr)
	o.DialTimeout, o.PoolSize = time.Second, 4
	c := redis.NewClient(o)
	a.clients[addr] = c
	return c
}

// Close closes every client.
func (a *Admin) Close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range a.clients {
		c.Close()
	}
	a.clients = nil
}

// Do sends one command to a node with a timeout. An error names the
// command (CommandString) and the node.
func (a *Admin) Do(ctx context.Context, addr string, timeout time.Duration, args ...any) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, err := a.Client(addr).Do(ctx, args...).Result()
	if err != nil {
		return v, fmt.Errorf("%s on %s: %w", CommandString(args), addr, err)
	}
	return v, nil
}

// Pipe sends cmds to one node in one pipeline (timeout 10 s). When out is
// not nil it receives each reply. It returns the first command's error,
// after every command has run.
func (a *Admin) Pipe(ctx context.Context, addr string, cmds [][]any, out []any) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	p := a.Client(addr).Pipeline()
	res := make([]*redis.Cmd, len(cmds))
	for i, c := range cmds {
		res[i] = p.Do(ctx, c...)
	}
	_, err := p.Exec(ctx)
	for i, r := range res {
		if r.Err() != nil {
			return fmt.Errorf("%s on %s: %w", CommandString(cmds[i]), addr, r.Err())
		}
		if out != nil {
			out[i] = r.Val()
		}
	}
	if err != nil {
		return fmt.Errorf("pipeline of %d commands on %s: %w", len(cmds), addr, err)
	}
	return nil
}

// ClusterNodes returns CLUSTER NODES of the node at addr (timeout 2 s).
func (a *Admin) ClusterNodes(ctx context.Context, addr string) (string, error) {
	v, err := a.Do(ctx, addr, 2*time.Second, "cluster", "nodes")
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("cluster nodes on %s: unexpected reply %T", addr, v)
	}
	return s, nil
}

// CommandString renders a command for error messages and journal notes:
// "CLUSTER SETSLOT 5 NODE id". A password (MIGRATE ... AUTH pw, AUTH2 user
// pw) shows as <password>; more than 12 words end in "...".
func CommandString(args []any) string {
	parts := make([]string, 0, len(args))
	secret := -1 // index of a password (MIGRATE ... AUTH pw / AUTH2 user pw)
	for i, a := range args {
		p := fmt.Sprint(a)
		switch {
		case i == secret:
			p = "<password>"
		case i > 0 && strings.EqualFold(p, "auth"):
			secret = i + 1
		case i > 0 && strings.EqualFold(p, "auth2"):
			secret = i + 2
		}
		if p == "" {
			p = `""`
		}
		if i < 2 {
			p = strings.ToUpper(p)
		}
		parts = append(parts, p)
	}
	if len(parts) > 12 {
		parts = append(parts[:12], "...")
	}
	return strings.Join(parts, " ")
}

// ClusterNodesText returns the raw CLUSTER NODES reply of one node, over a
// connection of its own (creds.AdminClient).
func ClusterNodesText(ctx context.Context, creds cluster.Credentials, addr string) (string, error) {
	c := creds.AdminClient(addr)
	defer c.Close()
	s, err := c.ClusterNodes(ctx).Result()
	if err != nil {
		return "", fmt.Errorf("CLUSTER NODES on %s: %w", addr, err)
	}
	return s, nil
}

// ReadNodes returns the cluster as seen by the first node in addrs that
// answers CLUSTER NODES, parsed.
func ReadNodes(ctx context.Context, creds cluster.Credentials, addrs []string) ([]cluster.NodeInfo, error) {
	var errs []error
	for _, a := range addrs {
		text, err := ClusterNodesText(ctx, creds, a)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		return cluster.ParseNodes(text)
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
