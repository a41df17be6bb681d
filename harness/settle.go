package harness

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
	"github.com/redline-dev/redline/results"
)

// Settling between the steps of a capacity search. A step that overloads
// the cluster leaves work behind it: a replica starved of CPU on a shared
// host falls behind its primary, which must then stream the backlog while
// the next step runs, and that next step pays for the one before it (in a
// study on 2 cores, a rate that had met the objectives at p99 14 ms
// missed at 1.8 s right after two overloaded steps). So each step after
// the first starts only when every replica has caught up with its
// primary, and the step says how long that took.

// replicasBehind is, per replica, the bytes it lacks of its primary's
// stream: the primary's master_repl_offset minus the replica's own
// slave_repl_offset (the replica's own word, not the offset it last
// acknowledged, which trails by up to a second). Replicas whose primary
// is not among nodes, or whose link is down, are left out; a node that
// does not answer is named in the error.
func replicasBehind(ctx context.Context, a *clusteradmin.Admin, nodes []cluster.Node) (map[string]int64, error) {
	primaryOffset := map[string]int64{} // by every address a replica may know its primary by
	type replica struct {
		name, primary string
		offset        int64
	}
	var replicas []replica
	var failed []string
	field := func(text, k string) string { v, _ := clusteradmin.InfoField(text, k); return v }
	for _, n := range nodes {
		v, err := a.Do(ctx, n.Addr, 2*time.Second, "info", "replication")
		if err != nil {
			failed = append(failed, n.Name)
			continue
		}
		text, _ := v.(string)
		switch field(text, "role") {
		case "master":
			off, err := strconv.ParseInt(field(text, "master_repl_offset"), 10, 64)
			if err != nil {
				continue
			}
			primaryOffset[n.Addr] = off
			if _, port, err := net.SplitHostPort(n.Addr); err == nil && n.Host != "" {
				primaryOffset[net.JoinHostPort(n.Host, port)] = off
			}
		case "slave":
			if field(text, "master_link_status") != "up" {
				continue // a replica without a link (or in its full sync) is not a backlog to wait for here
			}
			off, err := strconv.ParseInt(field(text, "slave_repl_offset"), 10, 64)
			if err != nil {
				continue
			}
			replicas = append(replicas, replica{n.Name, net.JoinHostPort(field(text, "master_host"), field(text, "master_port")), off})
		}
	}
	behind := map[string]int64{}
	for _, r := range replicas {
		if off, ok := primaryOffset[r.primary]; ok {
			behind[r.name] = max(0, off-r.offset)
		}
	}
	if len(failed) > 0 {
		return behind, fmt.Errorf("INFO replication not answered by %s", strings.Join(failed, ", "))
	}
	return behind, nil
}

// settleReplicas waits (at most limit) until no replica lags its primary,
// polling INFO replication, and says in words what it waited for: "" when
// nothing lagged, else how long the replicas took to catch up or how far
// behind they still were.
func settleReplicas(ctx context.Context, a *clusteradmin.Admin, nodes []cluster.Node, limit time.Duration) (time.Duration, string) {
	began := time.Now()
	deadline := began.Add(limit)
	first := true
	var worst string
	for {
		behind, err := replicasBehind(ctx, a, nodes)
		lagging := int64(0)
		worst = ""
		for name, b := range behind {
			if b > lagging {
				lagging, worst = b, fmt.Sprintf("%s %s behind its primary", name, results.HumanBytes(b))
			}
		}
		switch {
		case err != nil && first && len(behind) == 0:
			return 0, "" // no node answers INFO (a target that hides it): nothing to wait for
		case lagging == 0 && first:
			return 0, ""
		case lagging == 0:
			took := time.Since(began)
			return took, fmt.Sprintf("waited %.1f s for the replicas to catch up", took.Seconds())
		case time.Now().After(deadline) || ctx.Err() != nil:
			return time.Since(began), fmt.Sprintf("replicas had not caught up after %.0f s (%s); the step ran anyway", limit.Seconds(), worst)
		}
		first = false
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}
