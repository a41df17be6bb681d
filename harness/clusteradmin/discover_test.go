package clusteradmin_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/harness/cluster"
	"github.com/redline-dev/redline/harness/cluster/localcluster"
	"github.com/redline-dev/redline/harness/clusteradmin"
)

// TestDiscoverAndAuditARealCluster discovers six redis-server processes
// from one replica's address and counts foreign and own keys.
func TestDiscoverAndAuditARealCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lc, err := localcluster.Start(ctx, t.TempDir(), 6, 1, time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Stop()
	e, err := clusteradmin.OpenExternal(ctx, lc.Addrs[4:5])
	if err != nil {
		t.Fatal(err)
	}
	v := e.View()
	if len(v.Members) != 6 || len(v.Primaries()) != 3 || !strings.HasPrefix(v.From, "CLUSTER SHARDS") {
		t.Fatalf("view %+v", v)
	}
	slots := 0
	for _, p := range v.Primaries() {
		slots += p.Slots
	}
	if slots != cluster.SlotCount {
		t.Fatalf("primaries serve %d slots", slots)
	}
	names := map[string]string{}
	for _, n := range e.Nodes() {
		names[n.Addr] = n.Name
	}
	if err := e.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	for _, n := range e.Nodes() {
		if names[n.Addr] != n.Name {
			t.Fatalf("%s was %s, is %s after a refresh", n.Addr, names[n.Addr], n.Name)
		}
	}

	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: lc.Addrs})
	defer cc.Close()
	prefix := "redline:test*[x]:"
	for i := range 300 {
		cc.Set(ctx, fmt.Sprint("theirs:", i), i, 0)
	}
	for i := range 120 {
		cc.Set(ctx, fmt.Sprint(prefix, i), i, 0)
	}
	before, err := clusteradmin.TakeSnapshot(ctx, lc.Addrs[:1], prefix)
	if err != nil {
		t.Fatal(err)
	}
	if before.ForeignKeys != 300 || before.OwnKeys != 120 || before.Served != cluster.SlotCount || len(before.Open) != 0 {
		t.Fatalf("snapshot: %d foreign, %d own, %d served, open %v", before.ForeignKeys, before.OwnKeys, before.Served, before.Open)
	}
	// The run's own keys come and go freely; a foreign one may not.
	cc.Del(ctx, fmt.Sprint(prefix, 1), fmt.Sprint(prefix, 2))
	cc.Set(ctx, fmt.Sprint(prefix, "new"), 1, 0)
	after, _ := clusteradmin.TakeSnapshot(ctx, lc.Addrs[:1], prefix)
	if r := clusteradmin.Compare(before, after, nil); !r.Clean {
		t.Fatalf("own keys changed the audit: %s", r.Summary)
	}
	cc.Del(ctx, "theirs:7")
	after, _ = clusteradmin.TakeSnapshot(ctx, lc.Addrs[:1], prefix)
	r := clusteradmin.Compare(before, after, nil)
	slot := int(cc.ClusterKeySlot(ctx, "theirs:7").Val())
	if r.Clean || len(r.ChangedSlots) != 1 || r.ChangedSlots[0].Slot != slot || r.ForeignKeysAfter != 299 {
		t.Fatalf("a deleted foreign key: %+v", r)
	}
}
