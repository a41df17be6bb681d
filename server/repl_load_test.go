package server

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// A replica loading a full sync with key-load-delay is in Redis's loading
// state: INFO says loading:1, commands without the loading flag get
// -LOADING, INFO and CONFIG still answer; then the data is all there.
func TestReplicaLoadingState(t *testing.T) {
	m := startExtServer(t)
	r := startExtServer(t)
	mc, rc := newClient(t, m, 2), newClient(t, r, 2)
	for i := 0; i < 200; i++ {
		if err := mc.Set(ctx, "k"+strconv.Itoa(i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := rc.ConfigSet(ctx, "key-load-delay", "10000").Err(); err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(m.Addr().String(), ":")
	if err := rc.Do(ctx, "replicaof", host, port).Err(); err != nil {
		t.Fatal(err)
	}
	info := func() string { return rc.Info(ctx, "persistence").Val() }
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(info(), "loading:1") {
		if time.Now().After(deadline) {
			t.Fatal("the replica never reported loading:1")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := rc.Get(ctx, "k1").Err(); err == nil || !strings.HasPrefix(err.Error(), "LOADING") {
		t.Fatalf("GET while loading: %v, want LOADING", err)
	}
	if err := rc.ConfigSet(ctx, "key-load-delay", "0").Err(); err != nil {
		t.Fatalf("CONFIG SET while loading: %v", err)
	}
	for strings.Contains(info(), "loading:1") {
		if time.Now().After(deadline) {
			t.Fatal("the replica never finished loading")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n := rc.DBSize(ctx).Val(); n != 200 {
		t.Fatalf("after loading: %d keys, want 200", n)
	}
	// CLIENT KILL TYPE replica drops the link at once, as Redis frees the
	// client inside the command.
	for !strings.Contains(mc.Info(ctx, "replication").Val(), "connected_slaves:1") {
		if time.Now().After(deadline) {
			t.Fatal("the master never counted its replica")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n, err := mc.Do(ctx, "client", "kill", "type", "replica").Int(); err != nil || n != 1 {
		t.Fatalf("CLIENT KILL TYPE replica = %d %v, want 1", n, err)
	}
	if info := mc.Info(ctx, "replication").Val(); !strings.Contains(info, "connected_slaves:0") {
		t.Fatalf("right after CLIENT KILL TYPE replica:\n%s", info)
	}
}
