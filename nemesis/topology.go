package nemesis

import (
	"context"
	"slices"
	"time"

	"github.com/redline-dev/redline/clusteradmin"
	"github.com/redline-dev/redline/history"
)

// topology reads a snapshot of the cluster (clusteradmin.Admin.Topology).
func (e *env) topology(ctx context.Context) (*clusteradmin.Topology, error) {
	return e.admin.Topology(ctx, e.c)
}

// waitConverged waits (clusteradmin.WaitConverged) until every node that
// answers reports cluster_state:ok, no open slots, no failure flags and the
// same slot map.
func (e *env) waitConverged(ctx context.Context, timeout time.Duration) error {
	return clusteradmin.WaitClusterConverged(ctx, e.admin.Creds, e.c, timeout)
}

// slotsWithKeys returns, sorted, the slots of src that hold some of the keys
// one SCAN of up to 1000 keys finds there, so that migrations move data
// even when the workload uses few keys. Empty when the scan fails.
func (e *env) slotsWithKeys(ctx context.Context, src clusteradmin.NodeState) []int {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	keys, _, err := e.admin.Client(src.Node.Addr).Scan(ctx, 0, "", 1000).Result()
	if err != nil {
		return nil
	}
	own := map[int]bool{}
	for _, s := range src.Slots {
		own[s] = true
	}
	var out []int
	for _, k := range keys {
		if s := history.Keyslot(k); own[s] {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
