package server

import (
	"fmt"
	"strings"
	"testing"
)

// TestNeverSyncedReplicaLinkIsDownSinceEver: a replica that has not
// completed a sync since it started (or since it last was a master)
// reports its link down "since ever", as redis-server 7.0.15 does
// (repl_down_since 0: INFO says master_link_down_since_seconds:-1). The
// cluster's failover rule reads the same value as the data's age: such a
// replica never starts an election while cluster-replica-validity-factor
// is above 0 (Redis's clusterHandleSlaveFailover). The reference server
// counted the link down since its start, so a restarted replica whose
// primary died before it synced took over with stale data and lost what
// the primary had acknowledged.
func TestNeverSyncedReplicaLinkIsDownSinceEver(t *testing.T) {
	dead := freePort(t) // nothing listens there
	raddr := startRedisServer(t)
	red := dialRaw(t, raddr)
	red.do(t, rawCmd("REPLICAOF", "127.0.0.1", fmt.Sprint(dead)))
	s := startServer(t, "--replicaof", "127.0.0.1", fmt.Sprint(dead))
	ref := dialRaw(t, s.Addr().String())
	for _, c := range []struct {
		name string
		cl   *rawClient
	}{{"redis-server", red}, {"reference", ref}} {
		info := string(c.cl.do(t, rawCmd("INFO", "replication")))
		if !strings.Contains(info, "master_link_status:down") || !strings.Contains(info, "master_link_down_since_seconds:-1\r\n") {
			t.Errorf("%s, a replica that never synced: INFO replication should say the link is down since ever (-1):\n%s", c.name, info)
		}
	}
	// What the cluster's failover rule is fed: "since ever" is the zero
	// time (cluster.Node.SetMasterLinkStatus), never the start.
	if at := linkDownSince(s.repl.downSinceA.Load()); !at.IsZero() {
		t.Errorf("a never-synced link is fed to the cluster node as down since %v, want the zero time (since ever)", at)
	}
}
