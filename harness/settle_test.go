package harness

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
	"github.com/redline-dev/redline/clusteradmin/localcluster"
)

// The settle before a capacity step finds every replica of a real
// cluster (each mapped to its primary by the master_host and
// master_port it reports), sees none behind once writes have stopped,
// and then waits for nothing. On six redis-server processes.
func TestSettleReplicasFindsEveryReplica(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lc, err := localcluster.Start(ctx, t.TempDir(), 6, 1, time.Second, "")
	if err != nil {
		t.Fatalf("no local cluster of redis-server processes (apt-get install redis-server): %v", err)
	}
	defer lc.Stop()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: lc.Addrs, DisableIdentity: true})
	defer cc.Close()
	for i := 0; i < 2000; i++ {
		if err := cc.Set(ctx, fmt.Sprintf("redline:settle:%d", i), "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	var nodes []cluster.Node
	for i, a := range lc.Addrs {
		nodes = append(nodes, cluster.Node{Name: fmt.Sprintf("n%d", i+1), Addr: a, Host: "127.0.0.1"})
	}
	admin := &clusteradmin.Admin{}
	defer admin.Close()
	// The replicas' links may still be coming up: the three replicas are
	// all found within a while.
	var behind map[string]int64
	for deadline := time.Now().Add(30 * time.Second); ; {
		behind, err = replicasBehind(ctx, admin, nodes)
		if err != nil {
			t.Fatal(err)
		}
		if len(behind) == 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(behind) != 3 {
		t.Fatalf("replicas found behind their primaries: %v; want the 3 replicas", behind)
	}
	took, said := settleReplicas(ctx, admin, nodes, 10*time.Second)
	if said != "" && took > 5*time.Second {
		t.Fatalf("a quiet cluster's replicas did not settle: %s after %s", said, took)
	}
	if took, said := settleReplicas(ctx, admin, nodes, 10*time.Second); took != 0 || said != "" {
		t.Fatalf("settled replicas: waited %s (%q); want no wait", took, said)
	}
}
