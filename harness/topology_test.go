package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin/localcluster"
)

// The sampler sees a failover when it happens: on a real 6-node cluster
// (redis-server processes), a CLUSTER FAILOVER on a replica shows up as a
// sample, later than the first one, in which that node says it is a
// primary, while the first sample had it a replica.
func TestTopologySamplerSeesAFailover(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lc, err := localcluster.Start(ctx, t.TempDir(), 6, 1, time.Second, "")
	if err != nil {
		t.Skipf("no local cluster: %v", err)
	}
	defer lc.Stop()
	path := filepath.Join(t.TempDir(), TopologyFile)
	sctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		sampleTopology(sctx, cluster.Credentials{}, lc.Addrs, start, path, NewLog(nil, nil))
	}()

	// A replica of the cluster, by its own CLUSTER NODES line.
	var replica, replicaID string
	for _, a := range lc.Addrs {
		c := cluster.AdminClient(a)
		s, err := c.ClusterNodes(ctx).Result()
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(s, "\n") {
			if f := strings.Fields(l); len(f) > 2 && strings.Contains(f[2], "myself") && strings.Contains(f[2], "slave") {
				replica, replicaID = a, f[0]
			}
		}
		if replica != "" {
			break
		}
	}
	if replica == "" {
		t.Fatal("no replica in the cluster")
	}
	samples := func() []topologySample {
		b, _ := os.ReadFile(path)
		var out []topologySample
		for _, l := range bytes.Split(b, []byte("\n")) {
			var s topologySample
			if json.Unmarshal(l, &s) == nil {
				out = append(out, s)
			}
		}
		return out
	}
	roleOf := func(s topologySample) string {
		for _, l := range strings.Split(s.ClusterNodes, "\n") {
			if f := strings.Fields(l); len(f) > 2 && f[0] == replicaID {
				return f[2]
			}
		}
		return ""
	}
	localcluster.Eventually(t, 30*time.Second, func() string {
		if len(samples()) == 0 {
			return "no sample yet"
		}
		return ""
	})
	failoverAt := time.Since(start)
	c := cluster.AdminClient(replica)
	defer c.Close()
	if err := c.Do(ctx, "cluster", "failover").Err(); err != nil {
		t.Fatal(err)
	}
	localcluster.Eventually(t, 60*time.Second, func() string {
		ss := samples()
		if r := roleOf(ss[len(ss)-1]); !strings.Contains(r, "master") {
			return "the replica's latest sampled role is " + r
		}
		return ""
	})
	stop()
	<-done
	ss := samples()
	if r := roleOf(ss[0]); !strings.Contains(r, "slave") || strings.Contains(r, "myself") {
		t.Errorf("first sample: the replica's role %q (want slave, without myself)", r)
	}
	last := ss[len(ss)-1]
	if time.Duration(last.Time) < failoverAt {
		t.Errorf("the promotion is sampled at %s, before the failover was asked at %s", time.Duration(last.Time), failoverAt)
	}
	// Unchanged topologies are not written again: a handful of samples,
	// not one per 500 ms.
	if len(ss) > 6 {
		t.Errorf("%d samples for one failover", len(ss))
	}
}
