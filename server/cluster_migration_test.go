package server

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/server/config"
	"github.com/redline-dev/redline/server/keyslot"
)

// startClusterNode starts a cluster-enabled node on port with no slots.
func startClusterNode(t *testing.T, port int, extra ...string) (*Server, *redis.Client) {
	t.Helper()
	dir := t.TempDir()
	cfg, err := config.ParseArgs(append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--cluster-enabled", "yes", "--cluster-node-timeout", "2000", "--cluster-config-file", dir + "/nodes.conf"}, extra...))
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg, Options{Log: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, newClient(t, s, 2)
}

// keyIn returns a key of slot range [lo, hi] made from prefix.
func keyIn(prefix string, lo, hi int) string {
	for i := 0; ; i++ {
		k := prefix + strconv.Itoa(i)
		if sl := keyslot.Of(k); sl >= lo && sl <= hi {
			return k
		}
	}
}

func migrationStatus(t *testing.T, c *redis.Client, id string) map[string]string {
	t.Helper()
	v, err := c.Do(ctx, "cluster", "migration", "status", "id", id).Slice()
	if err != nil || len(v) != 1 {
		t.Fatalf("STATUS ID %s: %v %v", id, v, err)
	}
	flat := v[0].([]any)
	m := map[string]string{}
	for i := 0; i < len(flat); i += 2 {
		m[flat[i].(string)] = flat[i+1].(string)
	}
	return m
}

// TestAtomicMigrationTwoNodes moves slots 0-999 from A to B with
// CLUSTER MIGRATION IMPORT on B while a writer keeps writing to them: every
// acknowledged write is on B afterwards, A answers MOVED, and both sides
// report the task done with the fields of Redis 8.4's STATUS.
func TestAtomicMigrationTwoNodes(t *testing.T) {
	base := freeBase(t, 2)
	_, a := startClusterNode(t, base)
	_, b := startClusterNode(t, base+1)
	if err := a.Do(ctx, "cluster", "addslotsrange", 0, 16383).Err(); err != nil {
		t.Fatal(err)
	}
	if err := b.Do(ctx, "cluster", "meet", "127.0.0.1", base).Err(); err != nil {
		t.Fatal(err)
	}
	// Both sides: each master waits out its own rejoin delay (node
	// timeout, 2 s) from when it last saw no master with slots, A from
	// ADDSLOTSRANGE and B from learning A's slots, and their 100 ms ticks
	// can put B's state change before A's (a local run saw A answer
	// CLUSTERDOWN right after B said ok; Redis behaves the same).
	waitFor(t, "A and B say the cluster is ok", 10*time.Second, func() bool {
		ia, _ := a.Do(ctx, "cluster", "info").Text()
		ib, _ := b.Do(ctx, "cluster", "info").Text()
		return strings.Contains(ia, "cluster_state:ok") && strings.Contains(ib, "cluster_state:ok")
	})
	// Keys in the migrating slots and one outside.
	var keys []string
	for i := 0; i < 50; i++ {
		k := keyIn(fmt.Sprintf("k%d-", i), 0, 999)
		keys = append(keys, k)
		if err := a.Set(ctx, k, "v0", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	out := keyIn("out", 1000, 16383)
	a.Set(ctx, out, "x", 0)

	id, err := b.Do(ctx, "cluster", "migration", "import", 0, 999).Text()
	if err != nil || len(id) != 40 {
		t.Fatalf("IMPORT: %q %v", id, err)
	}
	if err := b.Do(ctx, "cluster", "migration", "import", 0, 999).Err(); err == nil || err.Error() != "ERR another ASM task is already in progress" {
		t.Fatalf("second IMPORT: %v", err)
	}
	// Write while the task runs; remember the last acknowledged value.
	last := map[string]string{}
	for i := 0; i < 5000; i++ {
		k := keys[i%len(keys)]
		v := "v" + strconv.Itoa(i+1)
		err := a.Set(ctx, k, v, 0).Err()
		if err == nil {
			last[k] = v
		} else if !strings.HasPrefix(err.Error(), "TRYAGAIN") && !strings.HasPrefix(err.Error(), "MOVED") {
			t.Fatalf("write %d: %v", i, err)
		}
		if m := migrationStatus(t, b, id); m["state"] == "done" {
			break
		}
	}
	waitFor(t, "the import is done", 10*time.Second, func() bool { return migrationStatus(t, b, id)["state"] == "done" })
	waitFor(t, "the source's task is done", 10*time.Second, func() bool {
		v, _ := a.Do(ctx, "cluster", "migration", "status", "all").Slice()
		return len(v) == 1 && migrationStatus(t, a, id)["state"] == "done"
	})
	m := migrationStatus(t, a, id)
	if m["operation"] != "migrating" || m["slots_range"] != "0-999" || m["write_pause_ms"] == "" {
		t.Fatalf("source STATUS %v", m)
	}
	t.Logf("write pause on the source: %s ms", m["write_pause_ms"])
	if mb := migrationStatus(t, b, id); mb["operation"] != "importing" || mb["retries"] != "0" || mb["source"] == mb["dest"] {
		t.Fatalf("destination STATUS %v", mb)
	}
	for _, k := range keys {
		want := last[k]
		if want == "" {
			want = "v0"
		}
		got, err := b.Get(ctx, k).Result()
		if err != nil || got != want {
			t.Fatalf("%s on B: %q %v, want %q", k, got, err, want)
		}
		if err := a.Get(ctx, k).Err(); err == nil || !strings.HasPrefix(err.Error(), "MOVED") {
			t.Fatalf("%s on A: %v, want MOVED", k, err)
		}
	}
	if n, _ := a.DBSize(ctx).Result(); n != 1 {
		t.Fatalf("A holds %d keys after the trim, want 1 (%s)", n, out)
	}
}

func TestMigrationCommandErrors(t *testing.T) {
	_, c := startOneNodeCluster(t)
	for _, tc := range []struct {
		args []any
		want string
	}{
		{[]any{"import", 0, 99}, "ERR this node is already the owner of the slot range"},
		{[]any{"import", 0}, "ERR wrong number of arguments for 'cluster|migration' command"},
		{[]any{"import", 9, 0}, "ERR start slot number 9 is greater than end slot number 0"},
		{[]any{"status"}, "ERR wrong number of arguments for 'cluster|migration' command"},
		{[]any{"status", "id"}, "ERR wrong number of arguments for 'cluster|migration' command"},
		{[]any{"status", "bogus"}, "ERR unknown argument"},
		{[]any{"cancel", "all", "x"}, "ERR wrong number of arguments for 'cluster|migration' command"},
		{[]any{"frob", "x"}, "ERR unknown argument"},
	} {
		err := c.Do(ctx, append([]any{"cluster", "migration"}, tc.args...)...).Err()
		if err == nil || err.Error() != tc.want {
			t.Errorf("CLUSTER MIGRATION %v: %v, want %q", tc.args, err, tc.want)
		}
	}
	if v, err := c.Do(ctx, "cluster", "migration", "status", "id", "nope").Slice(); err != nil || len(v) != 0 {
		t.Fatalf("STATUS ID unknown: %v %v, want []", v, err)
	}
	if n, err := c.Do(ctx, "cluster", "migration", "cancel", "all").Int(); err != nil || n != 0 {
		t.Fatalf("CANCEL ALL: %v %v", n, err)
	}
}
