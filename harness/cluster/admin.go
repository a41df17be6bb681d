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

// DefaultConvergeTimeout bounds Form and WaitConverged when ctx has no deadline.
const DefaultConvergeTimeout = 60 * time.Second

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

func withDefaultTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, DefaultConvergeTimeout)
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
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

// Form makes one cluster out of empty nodes, as `redis-cli --cluster create`
// does: the first len(addrs)/(replicas+1) nodes become primaries with the
// 16384 slots split evenly, the others replicate them round-robin. Each node
// gets a distinct config epoch, all MEET the first, and Form returns once
// WaitConverged does. log (may be nil) receives progress lines.
func Form(ctx context.Context, addrs []string, replicas int, log func(string, ...any)) error {
	if log == nil {
		log = func(string, ...any) {}
	}
	if replicas < 0 {
		return fmt.Errorf("form: replicas must be >= 0, got %d", replicas)
	}
	seen := map[string]bool{}
	for _, a := range addrs {
		if seen[a] {
			return fmt.Errorf("form: %s is listed twice", a)
		}
		seen[a] = true
	}
	primaries := len(addrs) / (replicas + 1)
	if primaries < 1 {
		return fmt.Errorf("form: %d nodes cannot hold one primary with %d replicas each", len(addrs), replicas)
	}
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()

	clients := make([]*redis.Client, len(addrs))
	for i, a := range addrs {
		clients[i] = AdminClient(a)
		defer clients[i].Close()
	}
	ids := make([]string, len(addrs))
	for i, c := range clients {
		id, err := waitEmptyNode(ctx, c, addrs[i])
		if err != nil {
			return fmt.Errorf("form: %w", err)
		}
		ids[i] = id
	}
	log("forming cluster: %d primaries, %d replicas each, %d nodes", primaries, replicas, len(addrs))

	for i := 0; i < primaries; i++ {
		start := i * SlotCount / primaries
		end := (i+1)*SlotCount/primaries - 1
		if err := addSlotsRange(ctx, clients[i], start, end); err != nil {
			return fmt.Errorf("form: assigning slots %d-%d to %s: %w", start, end, addrs[i], err)
		}
	}
	for i, c := range clients {
		if err := c.Do(ctx, "CLUSTER", "SET-CONFIG-EPOCH", i+1).Err(); err != nil {
			return fmt.Errorf("form: CLUSTER SET-CONFIG-EPOCH %d on %s: %w", i+1, addrs[i], err)
		}
	}
	host0, port0, err := splitAddr(addrs[0])
	if err != nil {
		return fmt.Errorf("form: %w", err)
	}
	for i := 1; i < len(clients); i++ {
		if err := clients[i].ClusterMeet(ctx, host0, strconv.Itoa(port0)).Err(); err != nil {
			return fmt.Errorf("form: CLUSTER MEET %s from %s: %w", addrs[0], addrs[i], err)
		}
	}
	if err := waitAllKnown(ctx, clients, addrs); err != nil {
		return fmt.Errorf("form: %w", err)
	}
	for i := primaries; i < len(clients); i++ {
		p := (i - primaries) % primaries
		if err := replicate(ctx, clients[i], ids[p]); err != nil {
			return fmt.Errorf("form: CLUSTER REPLICATE %s (%s) on %s: %w", ids[p], addrs[p], addrs[i], err)
		}
	}
	log("waiting for the cluster to converge")
	return WaitConverged(ctx, addrs)
}

// waitEmptyNode waits until the node answers and checks that it knows no
// other node and serves no slot; it returns its id.
func waitEmptyNode(ctx context.Context, c *redis.Client, addr string) (string, error) {
	var lastErr error
	for {
		text, err := c.ClusterNodes(ctx).Result()
		if err == nil {
			nodes, err := ParseNodes(text)
			if err != nil {
				return "", fmt.Errorf("%s: %w", addr, err)
			}
			self, ok := Self(nodes)
			if !ok {
				return "", fmt.Errorf("%s: CLUSTER NODES has no myself line", addr)
			}
			if len(nodes) != 1 || len(self.Ranges) != 0 {
				return "", fmt.Errorf("%s is not an empty node (knows %d nodes, serves %d slots): "+
					"reset it (CLUSTER RESET HARD and FLUSHALL) or start fresh nodes", addr, len(nodes), self.NumSlots())
			}
			return self.ID, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			return "", fmt.Errorf("%s did not answer CLUSTER NODES: %v", addr, lastErr)
		}
		if strings.Contains(err.Error(), "cluster support disabled") {
			return "", fmt.Errorf("%s runs without cluster mode: start it with --cluster-enabled yes", addr)
		}
		var rerr redis.Error
		if errors.As(err, &rerr) && !strings.HasPrefix(err.Error(), "LOADING") {
			// An error reply will not change by asking again.
			return "", fmt.Errorf("%s answered CLUSTER NODES with %q: is it a Redis Cluster node?", addr, err.Error())
		}
		_ = sleepCtx(ctx, 100*time.Millisecond)
	}
}

func addSlotsRange(ctx context.Context, c *redis.Client, start, end int) error {
	err := c.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", start, end).Err()
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), "unknown") {
		return err
	}
	// Before Redis 7: every slot as its own argument.
	args := []any{"CLUSTER", "ADDSLOTS"}
	for s := start; s <= end; s++ {
		args = append(args, s)
	}
	return c.Do(ctx, args...).Err()
}

// waitAllKnown waits until every node lists all len(addrs) nodes and none of
// them is still in handshake.
func waitAllKnown(ctx context.Context, clients []*redis.Client, addrs []string) error {
	for {
		why := ""
		for i, c := range clients {
			text, err := c.ClusterNodes(ctx).Result()
			if err != nil {
				why = fmt.Sprintf("%s: %v", addrs[i], err)
				break
			}
			nodes, err := ParseNodes(text)
			if err != nil {
				return fmt.Errorf("%s: %w", addrs[i], err)
			}
			known := 0
			for _, n := range nodes {
				if !n.HasFlag("handshake") && !n.HasFlag("noaddr") {
					known++
				}
			}
			if known != len(addrs) {
				why = fmt.Sprintf("%s knows %d of %d nodes", addrs[i], known, len(addrs))
				break
			}
		}
		if why == "" {
			return nil
		}
		if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
			return fmt.Errorf("nodes did not meet: %s", why)
		}
	}
}

func replicate(ctx context.Context, c *redis.Client, primaryID string) error {
	for {
		err := c.ClusterReplicate(ctx, primaryID).Err()
		if err == nil {
			return nil
		}
		// The replica may not have learnt the primary's role yet.
		if !strings.Contains(err.Error(), "Unknown node") && !strings.Contains(err.Error(), "not a master") {
			return err
		}
		if sleepCtx(ctx, 100*time.Millisecond) != nil {
			return err
		}
	}
}

// WaitConverged waits until every reachable node in addrs reports
// cluster_state:ok, all nodes print the same slot map covering all 16384
// slots, no node is flagged fail, fail? or handshake, and every replica's
// link to its primary is up. Unreachable nodes are skipped, but at least one
// must answer. Without a deadline on ctx it gives up after
// DefaultConvergeTimeout, naming the node that disagreed last.
func WaitConverged(ctx context.Context, addrs []string) error {
	if len(addrs) == 0 {
		return errors.New("wait converged: no node addresses given")
	}
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	start := time.Now()
	clients := make([]*redis.Client, len(addrs))
	for i, a := range addrs {
		clients[i] = AdminClient(a)
		defer clients[i].Close()
	}
	for {
		why := convergedOnce(ctx, clients, addrs)
		if why == "" {
			return nil
		}
		if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
			return fmt.Errorf("cluster did not converge within %s: %s", time.Since(start).Round(time.Second), why)
		}
	}
}

// convergedOnce returns "" when the cluster looks converged, else why not.
func convergedOnce(ctx context.Context, clients []*redis.Client, addrs []string) string {
	ref, refAddr := "", ""
	reachable := 0
	var unreachable []string
	for i, c := range clients {
		info, err := c.ClusterInfo(ctx).Result()
		if err != nil {
			if ctx.Err() != nil {
				return "interrupted"
			}
			unreachable = append(unreachable, fmt.Sprintf("%s (%v)", addrs[i], err))
			continue
		}
		reachable++
		if st, _ := InfoField(info, "cluster_state"); st != "ok" {
			return fmt.Sprintf("%s reports cluster_state:%s", addrs[i], st)
		}
		text, err := c.ClusterNodes(ctx).Result()
		if err != nil {
			return fmt.Sprintf("%s: CLUSTER NODES: %v", addrs[i], err)
		}
		nodes, err := ParseNodes(text)
		if err != nil {
			return fmt.Sprintf("%s: %v", addrs[i], err)
		}
		for _, n := range nodes {
			if n.Failed() || n.HasFlag("handshake") {
				return fmt.Sprintf("%s flags %s (%s) as %s", addrs[i], n.Addr, n.ID, strings.Join(n.Flags, ","))
			}
			if len(n.Open) > 0 {
				return fmt.Sprintf("%s has open slots %v", addrs[i], n.Open)
			}
		}
		if cov := Covered(nodes); cov != SlotCount {
			return fmt.Sprintf("%s sees %d of %d slots covered", addrs[i], cov, SlotCount)
		}
		m := SlotMap(nodes)
		if ref == "" {
			ref, refAddr = m, addrs[i]
		} else if m != ref {
			return fmt.Sprintf("%s and %s disagree on the slot map", refAddr, addrs[i])
		}
		if self, ok := Self(nodes); ok && self.IsReplica() {
			repl, err := c.Info(ctx, "replication").Result()
			if err != nil {
				return fmt.Sprintf("%s: INFO replication: %v", addrs[i], err)
			}
			if st, ok := InfoField(repl, "master_link_status"); ok && st != "up" {
				return fmt.Sprintf("%s (replica) has master_link_status:%s", addrs[i], st)
			}
		}
	}
	if reachable == 0 {
		return "no node answered: " + strings.Join(unreachable, "; ")
	}
	return ""
}

// splitAddr checks "host:port" syntax.
func splitAddr(addr string) (string, int, error) {
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

// External describes an existing cluster at addrs (host:port each). Its
// Close only forgets it: redline never tears down a cluster it did not create.
func External(addrs []string) (Cluster, error) {
	if len(addrs) == 0 {
		return nil, errors.New("external cluster: no addresses given (want --addrs host:port,...)")
	}
	seen := map[string]bool{}
	nodes := make([]Node, 0, len(addrs))
	for i, a := range addrs {
		a = strings.TrimSpace(a)
		host, _, err := splitAddr(a)
		if err != nil {
			return nil, fmt.Errorf("external cluster: %w", err)
		}
		if seen[a] {
			return nil, fmt.Errorf("external cluster: address %s given twice", a)
		}
		seen[a] = true
		nodes = append(nodes, Node{Name: fmt.Sprintf("n%d", i+1), Addr: a, Host: host})
	}
	return &external{nodes: nodes}, nil
}

type external struct{ nodes []Node }

func (e *external) Nodes() []Node                   { return append([]Node(nil), e.nodes...) }
func (e *external) Close(ctx context.Context) error { return nil }
func (e *external) Describe() map[string]string {
	addrs := make([]string, len(e.nodes))
	for i, n := range e.nodes {
		addrs[i] = n.Addr
	}
	return map[string]string{"runtime": "external", "addrs": strings.Join(addrs, ",")}
}
