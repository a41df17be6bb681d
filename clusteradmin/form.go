package clusteradmin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/cluster"
)

// DefaultConvergeTimeout bounds Form and WaitConverged when ctx has no deadline.
const DefaultConvergeTimeout = 60 * time.Second

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

// Form makes one cluster out of empty nodes, as `redis-cli --cluster create`
// does: the first len(addrs)/(replicas+1) nodes become primaries with the
// 16384 slots split evenly, the others replicate them round-robin. Each node
// gets a distinct config epoch, all MEET the first, and Form returns once
// WaitConverged does. creds authenticate its connections; log (may be nil)
// receives progress lines.
func Form(ctx context.Context, creds cluster.Credentials, addrs []string, replicas int, log func(string, ...any)) error {
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
		clients[i] = creds.AdminClient(a)
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
		start := i * cluster.SlotCount / primaries
		end := (i+1)*cluster.SlotCount/primaries - 1
		if err := addSlotsRange(ctx, clients[i], start, end); err != nil {
			return fmt.Errorf("form: assigning slots %d-%d to %s: %w", start, end, addrs[i], err)
		}
	}
	for i, c := range clients {
		if err := c.Do(ctx, "CLUSTER", "SET-CONFIG-EPOCH", i+1).Err(); err != nil {
			return fmt.Errorf("form: CLUSTER SET-CONFIG-EPOCH %d on %s: %w", i+1, addrs[i], err)
		}
	}
	host0, port0, err := net.SplitHostPort(addrs[0])
	if err != nil {
		return fmt.Errorf("form: address %q is not host:port: %w", addrs[0], err)
	}
	for i := 1; i < len(clients); i++ {
		if err := clients[i].ClusterMeet(ctx, host0, port0).Err(); err != nil {
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
	return WaitConverged(ctx, creds, addrs)
}

// rolesOf is each node's role in one view: "master" or the id of the
// primary it replicates.
func rolesOf(nodes []cluster.NodeInfo) map[string]string {
	roles := map[string]string{}
	for _, n := range nodes {
		switch {
		case n.IsReplica():
			roles[n.ID] = n.Master
		case n.IsPrimary():
			roles[n.ID] = "master"
		}
	}
	return roles
}

// rolesDisagree names a node that two views both know in different roles
// ("" when none). A primary that does not yet know a node became its
// replica ignores that replica's manual failover request (MFSTART), so a
// cluster is converged only once the roles have spread: on the reference
// server, whose replicas sync faster than Redis's fork, formation ended
// that early and 2 in 10 manual failovers right after it timed out.
func rolesDisagree(a, b map[string]string) string {
	for id, ra := range a {
		if rb, ok := b[id]; ok && ra != rb {
			return fmt.Sprintf("the role of %s (%s, %s)", id, roleWord(ra), roleWord(rb))
		}
	}
	return ""
}

func roleWord(r string) string {
	if r == "master" {
		return "primary"
	}
	return "replica of " + r
}

// waitEmptyNode waits until the node answers and checks that it knows no
// other node and serves no slot; it returns its id.
func waitEmptyNode(ctx context.Context, c *redis.Client, addr string) (string, error) {
	var lastErr error
	for {
		text, err := c.ClusterNodes(ctx).Result()
		if err == nil {
			nodes, err := cluster.ParseNodes(text)
			if err != nil {
				return "", fmt.Errorf("%s: %w", addr, err)
			}
			self, ok := cluster.Self(nodes)
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
			nodes, err := cluster.ParseNodes(text)
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
//
// The agreement must hold on two reads settleGap apart: one read can fall
// between a slot's new owner being told (CLUSTER SETSLOT NODE) and a ping
// its old owner sent before it was told, which carries a configEpoch
// above what the reader knows of the new owner's and takes the slot back
// in its view until the new owner's next ping (CI, 2026-12-06: right
// after a heal finished a half-open move n2 -> n1 on real Redis, n3 said
// the slot was n2's; the heal had seen every node agree once).
func WaitConverged(ctx context.Context, creds cluster.Credentials, addrs []string) error {
	if len(addrs) == 0 {
		return errors.New("wait converged: no node addresses given")
	}
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	start := time.Now()
	clients := make([]*redis.Client, len(addrs))
	for i, a := range addrs {
		clients[i] = creds.AdminClient(a)
		defer clients[i].Close()
	}
	agreedAt := time.Time{} // the first read of the run of agreeing ones
	for {
		why := convergedOnce(ctx, clients, addrs)
		switch {
		case why != "":
			agreedAt = time.Time{}
		case agreedAt.IsZero():
			agreedAt = time.Now()
		case time.Since(agreedAt) >= settleGap:
			return nil
		}
		if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
			if why == "" {
				why = "the nodes agreed for less than " + settleGap.String()
			}
			return fmt.Errorf("cluster did not converge within %s: %s", time.Since(start).Round(time.Second), why)
		}
	}
}

// settleGap is how long WaitConverged's agreement must last.
const settleGap = 300 * time.Millisecond

// convergedOnce returns "" when the cluster looks converged, else why not.
func convergedOnce(ctx context.Context, clients []*redis.Client, addrs []string) string {
	ref, refAddr := "", ""
	var refRoles map[string]string
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
		nodes, err := cluster.ParseNodes(text)
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
		if cov := cluster.Covered(nodes); cov != cluster.SlotCount {
			return fmt.Sprintf("%s sees %d of %d slots covered", addrs[i], cov, cluster.SlotCount)
		}
		m := cluster.SlotMap(nodes)
		if ref == "" {
			ref, refAddr, refRoles = m, addrs[i], rolesOf(nodes)
		} else if m != ref {
			return fmt.Sprintf("%s and %s disagree on the slot map", refAddr, addrs[i])
		} else if why := rolesDisagree(refRoles, rolesOf(nodes)); why != "" {
			return fmt.Sprintf("%s and %s disagree on %s", refAddr, addrs[i], why)
		}
		if self, ok := cluster.Self(nodes); ok && self.IsReplica() {
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
