// Package client executes workload operations against a Redis Cluster so
// that the history records exactly what happened:
//   - every command is sent once: go-redis retries are off
//     (cluster.SendOnceOptions),
//     and the cluster routing is ours, not ClusterClient's, which would resend
//     a write whose reply was lost;
//   - MOVED and ASK are followed here, because a redirect means the command
//     did not run; each followed redirect is counted;
//   - a write and its WAIT go on one connection to the key's primary, so the
//     replica count WAIT returns is about that write;
//   - every error is classified as certain failure (fail) or unknown
//     outcome (info).
package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/history"
)

// Options configure a Client.
type Options struct {
	// Seeds are ip:port addresses of cluster nodes used to learn the topology.
	Seeds []string
	// Timeout bounds one command (dial, write and read).
	Timeout time.Duration
	// PoolSize is the number of connections per node.
	PoolSize int
	// MaxRedirects bounds MOVED/ASK hops for one op before it fails.
	MaxRedirects int
	// Credentials (ACL user, password, TLS) for clusters that need them.
	Username  string
	Password  string
	TLSConfig *tls.Config
}

const numSlots = 16384

// Client routes commands to the node serving a key's slot.
type Client struct {
	opts Options

	mu    sync.RWMutex
	slots [numSlots]string         // slot -> primary address ("" unknown)
	nodes map[string]*redis.Client // address -> connection pool
	// replicas are each primary's replicas as the last CLUSTER SLOTS
	// listed them: the nodes a WAIT probe reads (Request.Probe).
	replicas map[string][]string
	// replicaRefresh is when a WAIT probe last asked for the slot map
	// again (unix ns), to find the replicas it lacked.
	replicaRefresh atomic.Int64

	refreshing sync.Mutex
}

// New builds a client and loads the slot map from the first seed that answers.
func New(ctx context.Context, opts Options) (*Client, error) {
	if len(opts.Seeds) == 0 {
		return nil, errors.New("client: no seed addresses")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = time.Second
	}
	if opts.PoolSize <= 0 {
		opts.PoolSize = 16
	}
	if opts.MaxRedirects <= 0 {
		opts.MaxRedirects = 5
	}
	c := &Client{opts: opts, nodes: make(map[string]*redis.Client)}
	if err := c.Refresh(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Node returns the connection pool for one address, creating it on first use.
func (c *Client) Node(addr string) *redis.Client {
	c.mu.RLock()
	n := c.nodes[addr]
	c.mu.RUnlock()
	if n != nil {
		return n
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if n = c.nodes[addr]; n == nil {
		n = newNodeClient(addr, c.opts)
		c.nodes[addr] = n
	}
	return n
}

// newNodeClient is a plain go-redis client for one node with retries off
// and nothing sent on connect beyond what Redis 7.0 understands.
func newNodeClient(addr string, o Options) *redis.Client {
	ro := cluster.SendOnceOptions(addr, o.Timeout, o.PoolSize)
	ro.PoolTimeout = o.Timeout
	ro.Username, ro.Password, ro.TLSConfig = o.Username, o.Password, o.TLSConfig
	return redis.NewClient(ro)
}

// Close closes every connection.
func (c *Client) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.nodes {
		n.Close()
	}
	c.nodes = map[string]*redis.Client{}
}

// Refresh reloads the slot map with CLUSTER SLOTS from any known node.
func (c *Client) Refresh(ctx context.Context) error {
	c.refreshing.Lock()
	defer c.refreshing.Unlock()
	candidates := append([]string(nil), c.opts.Seeds...)
	c.mu.RLock()
	for addr := range c.nodes {
		candidates = append(candidates, addr)
	}
	c.mu.RUnlock()
	rand.Shuffle(len(candidates), func(i, j int) { candidates[i], candidates[j] = candidates[j], candidates[i] })
	var errs []string
	for _, addr := range candidates {
		rctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
		ranges, err := c.Node(addr).ClusterSlots(rctx).Result()
		cancel()
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", addr, err))
			continue
		}
		if len(ranges) == 0 {
			errs = append(errs, fmt.Sprintf("%s: no slots assigned", addr))
			continue
		}
		var table [numSlots]string
		replicas := map[string][]string{}
		for _, r := range ranges {
			if len(r.Nodes) == 0 || r.Start < 0 || r.End >= numSlots {
				continue
			}
			for s := r.Start; s <= r.End; s++ {
				table[s] = r.Nodes[0].Addr
			}
			p := r.Nodes[0].Addr
			for _, n := range r.Nodes[1:] {
				if !slices.Contains(replicas[p], n.Addr) {
					replicas[p] = append(replicas[p], n.Addr)
				}
			}
		}
		c.mu.Lock()
		c.slots = table
		c.replicas = replicas
		c.mu.Unlock()
		return nil
	}
	return fmt.Errorf("cannot load the cluster's slot map (CLUSTER SLOTS): %s", strings.Join(errs, "; "))
}

// refreshSoon reloads the topology in the background after a MOVED.
func (c *Client) refreshSoon() {
	if !c.refreshing.TryLock() {
		return
	}
	c.refreshing.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*c.opts.Timeout)
		defer cancel()
		_ = c.Refresh(ctx)
	}()
}

// Primary returns the address currently believed to serve slot.
func (c *Client) Primary(slot int) string {
	c.mu.RLock()
	addr := c.slots[slot]
	c.mu.RUnlock()
	if addr == "" && len(c.opts.Seeds) > 0 {
		addr = c.opts.Seeds[slot%len(c.opts.Seeds)]
	}
	return addr
}

// Addrs lists every primary address in the slot map.
func (c *Client) Addrs() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	seen := map[string]bool{}
	var out []string
	for _, a := range c.slots {
		if a != "" && !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}

func (c *Client) setSlot(slot int, addr string) {
	c.mu.Lock()
	c.slots[slot] = addr
	c.mu.Unlock()
}

// Result is what one Do returns.
type Result struct {
	// Outcome: history.OK (the server executed the command and replied,
	// possibly nil), history.Fail (certainly not executed: error reply,
	// dial failure, ...) or history.Info (may or may not have run:
	// timeout, reset).
	Outcome   history.Type
	Err       error  // nil when OK
	Node      string // address that produced the final reply or error
	Redirects int
	// Cmds are the commands of the final attempt (the write first, then
	// WAIT if one was requested).
	Cmds []redis.Cmder
	// Probes are the probe's reads on the replicas of the node that took
	// the write, when its WAIT said a replica had it (Request.Probe).
	Probes []Probe
}

// Probe is one replica's answer to a WAIT probe: Cmd has its reply or
// error.
type Probe struct {
	Node string
	Cmd  redis.Cmder
}

// Request is one logical operation: commands for one slot, sent together
// on one connection, optionally inside MULTI/EXEC.
type Request struct {
	Slot int
	// Build returns fresh commands for each attempt.
	Build func(ctx context.Context) []redis.Cmder
	// Tx wraps the commands in MULTI/EXEC.
	Tx bool
	// Wait, when > 0, appends WAIT Wait WaitTimeout after the commands.
	Wait        int
	WaitTimeout time.Duration
	// Probe, when set and WAIT answers 1 or more, builds a read that is
	// then sent (after READONLY) to every replica of the node that took
	// the write: WAIT's answer says that many replicas have the write,
	// and the replies let a checker see whether they do (a WAIT that
	// counts a replica before it acknowledged, redis/redis#11608's kind).
	Probe func(ctx context.Context) redis.Cmder
}

// Do executes a request, following MOVED and ASK. All commands of an
// attempt, the ASKING before them and the WAIT after them go over one
// connection.
func (c *Client) Do(ctx context.Context, req Request) Result {
	addr := c.Primary(req.Slot)
	asking := false
	res := Result{}
	for {
		res.Node = addr
		cmds := req.Build(ctx)
		res.Cmds = cmds
		first := c.attempt(ctx, addr, asking, req, cmds, &res)
		if first == nil {
			res.Outcome, res.Err = history.OK, nil
			return res
		}
		if a, ok := redis.IsMovedError(first); ok && res.Redirects < c.opts.MaxRedirects {
			res.Redirects++
			c.setSlot(req.Slot, a)
			c.refreshSoon()
			addr, asking = a, false
			continue
		}
		if a, ok := redis.IsAskError(first); ok && res.Redirects < c.opts.MaxRedirects {
			res.Redirects++
			addr, asking = a, true
			continue
		}
		res.Outcome, res.Err = Classify(first), first
		var reply redis.Error
		if !errors.As(first, &reply) {
			// A timeout or a broken connection: the node may be paused,
			// cut off or dead, and the slots may have a new primary by
			// now. Reload the slot map, as go-redis's cluster client does
			// on a bad connection; without it, ops kept going to a frozen
			// primary until it resumed and answered MOVED, seconds after
			// its replica had taken over (pause-primary's RTO was 4.3 s or
			// 7 s by luck), and a write queued to it at the resume was
			// acknowledged by the zombie and lost.
			c.refreshSoon()
		}
		return res
	}
}

// attempt sends one try and returns the error that decides it.
func (c *Client) attempt(ctx context.Context, addr string, asking bool, req Request, cmds []redis.Cmder, res *Result) error {
	conn := c.Node(addr).Conn()
	defer conn.Close()
	if asking {
		if err := conn.Process(ctx, redis.NewStatusCmd(ctx, "asking")); err != nil {
			return err
		}
	}
	var err error
	if req.Tx {
		_, err = conn.TxPipelined(ctx, func(p redis.Pipeliner) error {
			for _, cmd := range cmds {
				_ = p.Process(ctx, cmd)
			}
			return nil
		})
	} else if len(cmds) == 1 {
		err = conn.Process(ctx, cmds[0])
	} else {
		_, err = conn.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, cmd := range cmds {
				_ = p.Process(ctx, cmd)
			}
			return nil
		})
	}
	first := firstError(cmds)
	if first == nil && err != nil && err != redis.Nil {
		first = err
	}
	if first != nil || req.Wait <= 0 {
		return first
	}
	w := redis.NewIntCmd(ctx, "wait", req.Wait, req.WaitTimeout.Milliseconds())
	_ = conn.Process(ctx, w)
	res.Cmds = append(res.Cmds, w)
	if n, err := w.Result(); err == nil && n >= 1 && req.Probe != nil {
		res.Probes = c.probe(ctx, addr, req.Probe)
	}
	return nil
}

// probe sends the read build makes to every replica of primary, each on a
// connection of its own after READONLY, within the client's timeout.
func (c *Client) probe(ctx context.Context, primary string, build func(ctx context.Context) redis.Cmder) []Probe {
	c.mu.RLock()
	replicas := slices.Clone(c.replicas[primary])
	c.mu.RUnlock()
	if len(replicas) == 0 {
		// WAIT counted a replica the slot map does not list (it was
		// loaded before the replicas had attached): reload it, at most
		// once a second, so that the writes after this one are probed.
		// This one is not: no probe is recorded, and nothing is judged.
		now := time.Now().UnixNano()
		if last := c.replicaRefresh.Load(); now-last > int64(time.Second) && c.replicaRefresh.CompareAndSwap(last, now) {
			c.refreshSoon()
		}
		return nil
	}
	out := make([]Probe, 0, len(replicas))
	for _, r := range replicas {
		pctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
		conn := c.Node(r).Conn()
		cmd := build(pctx)
		if err := conn.Process(pctx, redis.NewStatusCmd(pctx, "readonly")); err != nil {
			cmd.SetErr(fmt.Errorf("READONLY: %w", err))
		} else {
			_ = conn.Process(pctx, cmd)
		}
		_ = conn.Close()
		cancel()
		out = append(out, Probe{Node: r, Cmd: cmd})
	}
	return out
}

// firstError returns the error that decides the op: the first command's
// error, ignoring redis.Nil (a nil reply is a successful read).
func firstError(cmds []redis.Cmder) error {
	for _, cmd := range cmds {
		if err := cmd.Err(); err != nil && err != redis.Nil {
			return err
		}
	}
	return nil
}

// Classify says whether an error means the command certainly did not run.
func Classify(err error) history.Type {
	if err == nil || err == redis.Nil {
		return history.OK
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		// A reply from the server: Redis checks redirects, cluster state,
		// arity and types before executing, so an error reply means the
		// command did not take effect.
		return history.Fail
	}
	if errors.Is(err, redis.ErrPoolTimeout) || errors.Is(err, redis.ErrClosed) {
		return history.Fail // never left this process
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return history.Fail
	}
	return history.Info
}

// ErrorString shortens an error for the history: the first word of a Redis
// error reply (MOVED, CLUSTERDOWN, ...) stays, so checkers and people can
// group them.
func ErrorString(err error) string {
	if err == nil {
		return ""
	}
	s := err.Error()
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// ParseInt is a small helper for replies that may be nil.
func ParseInt(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) }

// PrimaryClient returns the pool of the primary believed to serve slot,
// for flows of several round trips (WATCH ... MULTI ... EXEC) that follow
// no redirect. Report their errors with NoteError.
func (c *Client) PrimaryClient(slot int) (string, *redis.Client) {
	addr := c.Primary(slot)
	return addr, c.Node(addr)
}

// NoteError learns from a MOVED seen outside Do.
func (c *Client) NoteError(slot int, err error) {
	if a, ok := redis.IsMovedError(err); ok {
		c.setSlot(slot, a)
		c.refreshSoon()
	}
}
