package server

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/server/keyslot"
)

// TestAtomicMigrationHidesImportingKeys holds an import in its
// streaming-buffer state (the source's server lock is held, so the source
// never answers; the snapshot is delivered by hand as the source would) and
// checks that the destination hides the imported keys from SCAN, KEYS,
// DBSIZE, RANDOMKEY, COUNTKEYSINSLOT and GETKEYSINSLOT while showing its
// own, reports the task in CLUSTER INFO, flags the streaming connection
// "o" in CLIENT LIST, and after CANCEL has trimmed them.
func TestAtomicMigrationHidesImportingKeys(t *testing.T) {
	base := freeBase(t, 2)
	sa, a := startClusterNode(t, base)
	_, b := startClusterNode(t, base+1)
	if err := a.Do(ctx, "cluster", "addslotsrange", 0, 8191).Err(); err != nil {
		t.Fatal(err)
	}
	if err := b.Do(ctx, "cluster", "addslotsrange", 8192, 16383).Err(); err != nil {
		t.Fatal(err)
	}
	if err := b.Do(ctx, "cluster", "meet", "127.0.0.1", base).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "both nodes see all slots", 10*time.Second, func() bool {
		ia, _ := a.Do(ctx, "cluster", "info").Text()
		ib, _ := b.Do(ctx, "cluster", "info").Text()
		return strings.Contains(ia, "cluster_state:ok") && strings.Contains(ib, "cluster_state:ok")
	})
	own := keyIn("own", 8192, 16383)
	if err := b.Set(ctx, own, "mine", 0).Err(); err != nil {
		t.Fatal(err)
	}
	aid, err := a.Do(ctx, "cluster", "myid").Text()
	if err != nil {
		t.Fatal(err)
	}
	info, _ := b.Do(ctx, "cluster", "info").Text()
	if !strings.Contains(info, "cluster_slot_migration_active_tasks:0\r\n") {
		t.Fatalf("CLUSTER INFO before: %q", info)
	}

	sa.mu.Lock()
	locked := true
	unlock := func() {
		if locked {
			locked = false
			sa.mu.Unlock()
		}
	}
	defer unlock()

	id, err := b.Do(ctx, "cluster", "migration", "import", 0, 999).Text()
	if err != nil {
		t.Fatal(err)
	}
	var imported []string
	var payload []byte
	for i := 0; i < 3; i++ {
		k := keyIn("imp"+strconv.Itoa(i)+"-", 0, 999)
		imported = append(imported, k)
		payload = appendCommand(payload, [][]byte{[]byte("SET"), []byte(k), []byte("v")})
	}
	// The source's SNAPSHOT message (type 1), as asmSend frames it.
	if err := b.Do(ctx, "cluster", "syncslots", aid, 1, id, 0, 0, "0-999", "", payload, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if st := migrationStatus(t, b, id)["state"]; st != "streaming-buffer" {
		t.Fatalf("task state %q, want streaming-buffer", st)
	}
	ks, _ := b.Info(ctx, "keyspace").Result()
	if !strings.Contains(ks, "db0:keys=4,") {
		t.Fatalf("the imported keys are not stored: %q", ks)
	}
	if n, err := b.DBSize(ctx).Result(); err != nil || n != 1 {
		t.Fatalf("DBSIZE %d %v, want 1 (imported keys hidden)", n, err)
	}
	if keys, _ := b.Keys(ctx, "*").Result(); !slices.Equal(keys, []string{own}) {
		t.Fatalf("KEYS * = %v, want [%s]", keys, own)
	}
	if keys, _, _ := b.Scan(ctx, 0, "", 1000).Result(); !slices.Equal(keys, []string{own}) {
		t.Fatalf("SCAN = %v, want [%s]", keys, own)
	}
	for i := 0; i < 20; i++ {
		if k, _ := b.RandomKey(ctx).Result(); k != own {
			t.Fatalf("RANDOMKEY = %q, want %q", k, own)
		}
	}
	for _, k := range imported {
		sl := keyslot.Of(k)
		if n, _ := b.ClusterCountKeysInSlot(ctx, sl).Result(); n != 0 {
			t.Fatalf("COUNTKEYSINSLOT %d = %d, want 0", sl, n)
		}
		if ks, _ := b.ClusterGetKeysInSlot(ctx, sl, 10).Result(); len(ks) != 0 {
			t.Fatalf("GETKEYSINSLOT %d = %v, want none", sl, ks)
		}
	}
	if n, _ := b.ClusterCountKeysInSlot(ctx, keyslot.Of(own)).Result(); n != 1 {
		t.Fatalf("COUNTKEYSINSLOT of own slot = %d, want 1", n)
	}
	info, _ = b.Do(ctx, "cluster", "info").Text()
	if !strings.Contains(info, "cluster_slot_migration_active_tasks:1\r\n") ||
		!strings.Contains(info, "cluster_slot_migration_active_trim_running:0\r\n") {
		t.Fatalf("CLUSTER INFO during the import: %q", info)
	}
	list, _ := b.ClientList(ctx).Result()
	if !regexp.MustCompile(`flags=o `).MatchString(list) {
		t.Fatalf("no importing (o) connection in CLIENT LIST:\n%s", list)
	}
	mem, _ := b.Info(ctx, "memory").Result()
	if !regexp.MustCompile(`mem_cluster_slot_migration_input_buffer_peak:[1-9]`).MatchString(mem) ||
		!strings.Contains(mem, "mem_cluster_slot_migration_output_buffer:") {
		t.Fatalf("INFO memory: %q", mem)
	}

	if n, err := b.Do(ctx, "cluster", "migration", "cancel", "id", id).Int(); err != nil || n != 1 {
		t.Fatalf("CANCEL: %d %v", n, err)
	}
	ks, _ = b.Info(ctx, "keyspace").Result()
	if !strings.Contains(ks, "db0:keys=1,") {
		t.Fatalf("after CANCEL the partial import is not trimmed: %q", ks)
	}
	if n, _ := b.DBSize(ctx).Result(); n != 1 {
		t.Fatalf("DBSIZE after CANCEL %d, want 1", n)
	}
	info, _ = b.Do(ctx, "cluster", "info").Text()
	if !strings.Contains(info, "cluster_slot_migration_active_tasks:0\r\n") ||
		!strings.Contains(info, "cluster_slot_migration_stats_active_trim_completed:1\r\n") {
		t.Fatalf("CLUSTER INFO after CANCEL: %q", info)
	}
	unlock()
}

// TestSlotStatsMemoryBytes: memory-bytes is the documented estimate (key,
// DUMP payload and per-key overhead summed over the slot's keys).
func TestSlotStatsMemoryBytes(t *testing.T) {
	_, c := startOneNodeCluster(t, "--cluster-slot-stats-enabled", "yes")
	var want int64
	for i := 0; i < 4; i++ {
		k := "{m}" + strconv.Itoa(i)
		c.Set(ctx, k, strings.Repeat("x", 100*(i+1)), 0)
		d, err := c.Dump(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		want += int64(len(k)) + keyOverhead + int64(len(d))
	}
	c.RPush(ctx, "{m}list", "a", "b", "c")
	d, _ := c.Dump(ctx, "{m}list").Result()
	want += int64(len("{m}list")) + keyOverhead + int64(len(d))
	sl := keyslot.Of("{m}")
	v, err := c.Do(ctx, "cluster", "slot-stats", "slotsrange", sl, sl).Slice()
	if err != nil || len(v) != 1 {
		t.Fatalf("%v %v", v, err)
	}
	if _, m := slotStat(t, v[0]); m["memory-bytes"] != want {
		t.Fatalf("memory-bytes %d, want %d (%v)", m["memory-bytes"], want, m)
	}
	// ORDERBY memory-bytes puts the slot first.
	v, _ = c.Do(ctx, "cluster", "slot-stats", "orderby", "memory-bytes", "limit", 1).Slice()
	if s, _ := slotStat(t, v[0]); s != int64(sl) {
		t.Fatalf("ORDERBY memory-bytes: slot %d first, want %d", s, sl)
	}
}
