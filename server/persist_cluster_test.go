package server

import (
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestClusterNodeRestartsWithRDB: in a real three-node cluster, a primary
// that saved its dataset (SAVE) and was then SIGKILLed comes back from
// dump.rdb with every key it held, and the cluster serves all keys again;
// a SIGTERM with a save point saves the writes made since.
func TestClusterNodeRestartsWithRDB(t *testing.T) {
	nodes := startCluster(t, 3, 0, 2000, "--save", "")
	c := clusterClient(t, nodes)
	writeKeys(t, c, "rk", 3000)
	victim := nodes[0]
	held := victim.str("dbsize")
	if n, _ := strconv.Atoi(held); n < 500 {
		t.Fatalf("victim holds %s keys", held)
	}
	if got := victim.str("save"); got != "OK" {
		t.Fatalf("SAVE: %s", got)
	}
	victim.kill()
	victim.start()
	info := victim.str("info", "persistence")
	if got := infoField(info, "rdb_last_load_keys_loaded"); got != held || victim.str("dbsize") != held {
		t.Fatalf("restarted with %s keys loaded, dbsize %s; held %s\n%s", got, victim.str("dbsize"), held, info)
	}
	waitClusterOK(t, nodes)
	checkKeys(t, clusterClient(t, nodes), "rk", 3000)

	// A save point makes SIGTERM save, as Redis's prepareForShutdown.
	if got := victim.str("config", "set", "save", "3600 1"); got != "OK" {
		t.Fatalf("CONFIG SET save: %s", got)
	}
	writeKeys(t, c, "after", 1000)
	held = victim.str("dbsize")
	victim.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { victim.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("no exit 10 s after SIGTERM")
	}
	victim.cmd = nil
	victim.start()
	if got := victim.str("dbsize"); got != held {
		t.Fatalf("after SIGTERM with a save point: %s keys, held %s", got, held)
	}
	waitClusterOK(t, nodes)
	checkKeys(t, clusterClient(t, nodes), "after", 1000)
}
