package server

import (
	"strconv"
	"testing"
	"time"
)

// TestPromotedReplicaKeepsAClassicImportsWrites: a client's write sent
// with ASKING to a primary importing a slot (SETSLOT IMPORTING, the
// classic way) reaches its replica; the replica is promoted (CLUSTER
// FAILOVER) and keeps the key, as Redis 7.0.15 does: it deletes keys only
// of slots it owned and lost (clusterUpdateSlotsConfigWith's dirty slots),
// so the slot's keys are still there for redis-cli --cluster fix (or
// redline's mover) to finish the move. The reference used to delete them
// at the promotion (trimForeign took every write to a slot another node
// owns for an unfinished atomic import).
func TestPromotedReplicaKeepsAClassicImportsWrites(t *testing.T) {
	nodes := startCluster(t, 6, 1, 1000)
	ms := masters(t, nodes)
	src, dst := ms[0], ms[1]
	tag, slot := tagOwnedBy(t, src)
	key := "{" + tag + "}asking-write"
	if got := dst.str("cluster", "setslot", slot, "importing", src.myID()); got != "OK" {
		t.Fatalf("SETSLOT IMPORTING on the destination: %s", got)
	}
	if got := src.str("cluster", "setslot", slot, "migrating", dst.myID()); got != "OK" {
		t.Fatalf("SETSLOT MIGRATING on the source: %s", got)
	}
	c := dst.client()
	p := c.Pipeline()
	p.Do(ctx, "asking")
	set := p.Set(ctx, key, "acknowledged", 0)
	if _, err := p.Exec(ctx); err != nil || set.Val() != "OK" {
		t.Fatalf("ASKING SET on the importing primary: %v %v", set.Val(), err)
	}
	var rep *node
	for _, n := range nodes {
		ri := n.str("info", "replication")
		if infoField(ri, "role") == "slave" && infoField(ri, "master_port") == strconv.Itoa(dst.port) {
			rep = n
		}
	}
	if rep == nil {
		t.Fatal("the destination has no replica")
	}
	count := func(n *node) string { return n.str("cluster", "countkeysinslot", slot) }
	waitFor(t, "the replica to have the ASKING write", 20*time.Second, func() bool { return count(rep) == "1" })
	if got := rep.str("cluster", "failover"); got != "OK" {
		t.Fatalf("CLUSTER FAILOVER on the replica: %s", got)
	}
	waitFor(t, "the replica to be promoted", 30*time.Second, func() bool { return rep.role() == "master" })
	// The old code trimmed at the promotion itself; give the new primary a
	// few cron rounds and the old one time to turn replica.
	waitFor(t, "the old primary to follow the new one", 30*time.Second, func() bool { return dst.role() == "slave" })
	if got := count(rep); got != "1" {
		t.Fatalf("the promoted replica has %s keys in slot %d, want the ASKING write (Redis 7.0.15 keeps it)", got, slot)
	}
	if got := count(dst); got != "1" {
		t.Fatalf("the old primary (now its replica) has %s keys in slot %d, want 1", got, slot)
	}
}
