package server

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// replicaOf returns the node replicating m.
func replicaOf(t *testing.T, nodes []*node, m *node) *node {
	t.Helper()
	for _, n := range nodes {
		if infoField(n.str("info", "replication"), "master_port") == strconv.Itoa(m.port) {
			return n
		}
	}
	t.Fatalf("no replica of %d", m.port)
	return nil
}

// TestClusterReplication: WAIT, ROLE, READONLY reads on a replica, the
// read-only replica error, a default manual failover that loses nothing and
// lets the old primary continue with a partial resync (replid2).
func TestClusterReplication(t *testing.T) {
	nodes := startCluster(t, 6, 1, 1000)
	m := masters(t, nodes)[0]
	r := replicaOf(t, nodes, m)
	tag, _ := tagOwnedBy(t, m)
	key := "{" + tag + "}k"
	mc := m.client()
	if err := mc.Set(ctx, key, "v1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	// WAIT on the connection that wrote.
	conn := mc.Conn()
	defer conn.Close()
	if err := conn.Set(ctx, key, "v2", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := conn.Do(ctx, "wait", 1, 5000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 5000 = %d, %v", n, err)
	}
	// Inside MULTI, WAIT returns at once.
	cmds, err := conn.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, key, "v3", 0)
		p.Do(ctx, "wait", 5, 0)
		return nil
	})
	if err != nil || len(cmds) != 2 {
		t.Fatalf("MULTI SET WAIT EXEC: %v", err)
	}
	if got := r.str("wait", 1, 100); !strings.HasPrefix(got, "ERR: ERR WAIT cannot be used with replica instances") {
		t.Fatalf("WAIT on a replica: %s", got)
	}
	if got := m.str("role"); !strings.HasPrefix(got, "[master ") || !strings.Contains(got, strconv.Itoa(r.port)) {
		t.Fatalf("ROLE on the primary: %s", got)
	}
	if got := r.str("role"); !strings.HasPrefix(got, fmt.Sprintf("[slave 127.0.0.1 %d connected ", m.port)) {
		t.Fatalf("ROLE on the replica: %s", got)
	}
	// min-replicas-to-write counts replicas that acked within the lag.
	if got := m.str("config", "set", "min-replicas-to-write", "2"); got != "OK" {
		t.Fatal(got)
	}
	if got := m.str("set", key, "x"); got != "ERR: NOREPLICAS Not enough good replicas to write." {
		t.Fatalf("SET with min-replicas-to-write 2 and one replica: %s", got)
	}
	if got := m.str("config", "set", "min-replicas-to-write", "1"); got != "OK" {
		t.Fatal(got)
	}
	if got := m.str("set", key, "v3"); got != "OK" {
		t.Fatalf("SET with min-replicas-to-write 1 and one replica: %s", got)
	}
	// READONLY reads on the replica; writes still go to the primary.
	rc := r.client()
	rconn := rc.Conn()
	defer rconn.Close()
	if err := rconn.Get(ctx, key).Err(); err == nil || !strings.HasPrefix(err.Error(), "MOVED") {
		t.Fatalf("GET on a replica without READONLY: %v", err)
	}
	if err := rconn.ReadOnly(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the replica to see v3", 5*time.Second, func() bool { return rconn.Get(ctx, key).Val() == "v3" })
	if err := rconn.Set(ctx, key, "x", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "MOVED") {
		t.Fatalf("SET on a READONLY replica connection: %v", err)
	}

	// Default manual failover while a writer keeps writing.
	c := clusterClient(t, nodes)
	writeKeys(t, c, "mf", 2000)
	stop := make(chan struct{})
	done := make(chan []string)
	go func() {
		var acked []string
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- acked
				return
			default:
			}
			k := fmt.Sprintf("{%s}w:%d", tag, i)
			if c.Set(ctx, k, "x", 0).Err() == nil {
				acked = append(acked, k)
			}
		}
	}()
	if got := r.str("cluster", "failover"); got != "OK" {
		t.Fatalf("CLUSTER FAILOVER: %s", got)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !(r.role() == "master" && m.role() == "slave") {
		if time.Now().After(deadline) {
			t.Fatalf("no manual failover after 20s\nreplica log:\n%s\nprimary log:\n%s", lastLines(r.log.String(), 20), lastLines(m.log.String(), 20))
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	close(stop)
	acked := <-done
	checkKeys(t, c, "mf", 2000)
	// Every write acknowledged before or after the switch is on the new primary.
	lost := 0
	for _, k := range acked {
		if n, err := c.Exists(ctx, k).Result(); err != nil || n != 1 {
			lost++
		}
	}
	if lost > 0 {
		t.Fatalf("%d writes lost in a default manual failover", lost)
	}
	waitFor(t, "the old primary to follow the new one", 20*time.Second, func() bool {
		ri := m.str("info", "replication")
		return infoField(ri, "master_link_status") == "up" && infoField(ri, "master_port") == strconv.Itoa(r.port)
	})
	if !strings.Contains(m.log.String(), "Successful partial resynchronization") {
		t.Errorf("the old primary did a full resync after a manual failover:\n%s", lastLines(m.log.String(), 15))
	}
	waitFor(t, "same data on both", 10*time.Second, func() bool { return m.str("dbsize") == r.str("dbsize") })
	t.Logf("manual failover with %d concurrent writes acknowledged, none lost", len(acked))
}
