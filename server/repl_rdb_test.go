package server

import (
	"net"
	"testing"

	"github.com/redis/go-redis/v9"
)

// A full sync's payload is an RDB, as Redis's, so replication works
// between the reference server and redis-server 7.0.15 both ways: the
// replica gets every key, type, encoding, expiry, stream group and
// function of the master, then the master's later writes in both
// databases (the stream's database comes from the file's repl-stream-db
// and the SELECT that starts the stream).

// TestFullSyncFromRedis: the reference server replicates redis-server,
// whose 7.0 default is a diskless transfer ("$EOF:<mark>", after keepalive
// newlines while it waits repl-diskless-sync-delay), and with
// repl-diskless-sync no the "$<len>" form of a file on disk.
func TestFullSyncFromRedis(t *testing.T) {
	for _, diskless := range []string{"yes", "no"} {
		t.Run("diskless-"+diskless, func(t *testing.T) {
			addr, _ := redisServer(t, t.TempDir(), "--repl-diskless-sync", diskless, "--repl-diskless-sync-delay", "1")
			populate(t, addr)
			_, port, _ := net.SplitHostPort(addr)
			r := startServer(t, "--replicaof", "127.0.0.1", port)
			checkFullSync(t, addr, r.Addr().String())
		})
	}
}

// TestFullSyncToRedis: redis-server replicates the reference server, with
// its default disk load and with repl-diskless-load swapdb.
func TestFullSyncToRedis(t *testing.T) {
	for _, load := range []string{"disabled", "swapdb"} {
		t.Run("load-"+load, func(t *testing.T) {
			m := startServer(t)
			populate(t, m.Addr().String())
			_, port, _ := net.SplitHostPort(m.Addr().String())
			addr, _ := redisServer(t, t.TempDir(), "--replicaof", "127.0.0.1", port, "--repl-diskless-load", load)
			checkFullSync(t, m.Addr().String(), addr)
		})
	}
}

// checkFullSync waits for the replica's link, compares its dataset with
// the master's, then sees writes of the master in databases 1 and 0
// arrive.
func checkFullSync(t *testing.T, master, replica string) {
	t.Helper()
	rc := redis.NewClient(&redis.Options{Addr: replica, Protocol: 2, DisableIdentity: true})
	defer rc.Close()
	waitForServer(t, "the replica's link", func() bool {
		return infoField(rc.Info(ctx, "replication").Val(), "master_link_status") == "up"
	})
	compareDatasets(t, dataset(t, master), dataset(t, replica))
	mc1 := redis.NewClient(&redis.Options{Addr: master, Protocol: 2, DisableIdentity: true, DB: 1})
	defer mc1.Close()
	mc := redis.NewClient(&redis.Options{Addr: master, Protocol: 2, DisableIdentity: true})
	defer mc.Close()
	if err := mc1.Set(ctx, "after:db1", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := mc.RPush(ctx, "l:small", "after").Err(); err != nil {
		t.Fatal(err)
	}
	rc1 := redis.NewClient(&redis.Options{Addr: replica, Protocol: 2, DisableIdentity: true, DB: 1})
	defer rc1.Close()
	waitForServer(t, "the master's writes on the replica", func() bool {
		return rc1.Get(ctx, "after:db1").Val() == "1" && rc.LIndex(ctx, "l:small", -1).Val() == "after"
	})
	if _, err := rc.Get(ctx, "after:db1").Result(); err != redis.Nil {
		t.Errorf("the db 1 write reached db 0 of the replica: %v", err)
	}
}
