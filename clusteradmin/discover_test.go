package clusteradmin_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
	"github.com/redline-dev/redline/clusteradmin/localcluster"
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
	e, err := clusteradmin.OpenExternal(ctx, cluster.Credentials{}, lc.Addrs[4:5])
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
	before, err := clusteradmin.TakeSnapshot(ctx, cluster.Credentials{}, lc.Addrs[:1], prefix)
	if err != nil {
		t.Fatal(err)
	}
	if before.ForeignKeys != 300 || before.OwnKeys != 120 || before.Served != cluster.SlotCount || len(before.Open) != 0 {
		t.Fatalf("snapshot: %d foreign, %d own, %d served, open %v", before.ForeignKeys, before.OwnKeys, before.Served, before.Open)
	}
	// The run's own keys come and go freely; a foreign one may not.
	cc.Del(ctx, fmt.Sprint(prefix, 1), fmt.Sprint(prefix, 2))
	cc.Set(ctx, fmt.Sprint(prefix, "new"), 1, 0)
	after, _ := clusteradmin.TakeSnapshot(ctx, cluster.Credentials{}, lc.Addrs[:1], prefix)
	if r := clusteradmin.Compare(before, after, nil); !r.Clean {
		t.Fatalf("own keys changed the audit: %s", r.Summary)
	}
	cc.Del(ctx, "theirs:7")
	after, _ = clusteradmin.TakeSnapshot(ctx, cluster.Credentials{}, lc.Addrs[:1], prefix)
	r := clusteradmin.Compare(before, after, nil)
	slot := int(cc.ClusterKeySlot(ctx, "theirs:7").Val())
	if r.Clean || len(r.ChangedSlots) != 1 || r.ChangedSlots[0].Slot != slot || r.ForeignKeysAfter != 299 {
		t.Fatalf("a deleted foreign key: %+v", r)
	}
	cc.Set(ctx, "theirs:7", 7, 0)

	// A second copy of a foreign key on a primary that does not own its
	// slot (issue 22: an interrupted migration left one behind, and the
	// audit, counting each slot on its owner only, said "no foreign data
	// touched"). It is put there the way a migration does: the slot
	// opened as IMPORTING, the key restored with ASKING, the slot closed.
	key := "theirs:8"
	slot = int(cc.ClusterKeySlot(ctx, key).Val())
	owner, err := cc.MasterForKey(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	ownerID, _ := owner.Do(ctx, "cluster", "myid").Text()
	var other *redis.Client
	for _, p := range v.Primaries() {
		if p.ID != ownerID {
			other = redis.NewClient(&redis.Options{Addr: p.Addr})
			break
		}
	}
	defer other.Close()
	dump, err := owner.Dump(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Do(ctx, "cluster", "setslot", slot, "importing", ownerID).Err(); err != nil {
		t.Fatal(err)
	}
	if err := other.Do(ctx, "restore-asking", key, 0, dump).Err(); err != nil {
		t.Fatal(err)
	}
	if err := other.Do(ctx, "cluster", "setslot", slot, "stable").Err(); err != nil {
		t.Fatal(err)
	}
	after, err = clusteradmin.TakeSnapshot(ctx, cluster.Credentials{}, lc.Addrs[:1], prefix)
	if err != nil {
		t.Fatal(err)
	}
	r = clusteradmin.Compare(before, after, nil)
	if r.Clean || r.ForeignKeysAfter != 300 || r.StrayKeysAfter != 1 || len(r.StrayChanges) != 1 || r.StrayChanges[0].Slot != slot ||
		!strings.Contains(r.Summary, "do not own their slot") {
		t.Fatalf("a stranded copy of a foreign key: %+v", r)
	}
}
