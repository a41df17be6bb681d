package server

import (
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/server/config"
	"github.com/redline-dev/redline/server/keyslot"
)

// startOneNodeCluster starts a cluster-enabled node that owns every slot.
func startOneNodeCluster(t *testing.T, extra ...string) (*Server, *redis.Client) {
	t.Helper()
	s, c := startClusterNode(t, freeBase(t, 1), extra...)
	if err := c.Do(ctx, "cluster", "addslotsrange", 0, 16383).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "cluster_state:ok", 10*time.Second, func() bool {
		info, _ := c.Do(ctx, "cluster", "info").Text()
		return strings.Contains(info, "cluster_state:ok")
	})
	return s, c
}

// slotStat decodes one RESP2 [slot, [name, value, ...]] entry.
func slotStat(t *testing.T, v any) (int64, map[string]int64) {
	t.Helper()
	pair, ok := v.([]any)
	if !ok || len(pair) != 2 {
		t.Fatalf("entry %#v is not [slot, metrics]", v)
	}
	flat, ok := pair[1].([]any)
	if !ok || len(flat)%2 != 0 {
		t.Fatalf("metrics %#v are not a flat map", pair[1])
	}
	m := map[string]int64{}
	for i := 0; i < len(flat); i += 2 {
		m[flat[i].(string)] = flat[i+1].(int64)
	}
	return pair[0].(int64), m
}

// TestSlotStatsKnownWorkload writes a known workload (5 keys in one slot, 2
// in another) and checks every figure SLOT-STATS reports about it.
func TestSlotStatsKnownWorkload(t *testing.T) {
	_, c := startOneNodeCluster(t, "--cluster-slot-stats-enabled", "yes")
	hot, cold := keyslot.Of("{hot}"), keyslot.Of("{cold}")
	for i := 0; i < 5; i++ {
		if err := c.Set(ctx, "{hot}"+strconv.Itoa(i), "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 100; i++ {
		c.Get(ctx, "{hot}0")
	}
	c.Set(ctx, "{cold}a", "v", 0)
	c.Set(ctx, "{cold}b", "v", 0)

	// SET {hot}N v: *3 $3 SET $6 {hot}N $1 v = 4+9+12+7 = 32 bytes, +OK = 5.
	// GET {hot}0: *2 $3 GET $6 {hot}0 = 4+9+12 = 25 bytes, $1 v = 7.
	wantIn := int64(5*32 + 100*25)
	wantOut := int64(5*5 + 100*7)

	v, err := c.Do(ctx, "cluster", "slot-stats", "slotsrange", hot, hot).Slice()
	if err != nil || len(v) != 1 {
		t.Fatalf("SLOTSRANGE: %v %v", v, err)
	}
	slot, m := slotStat(t, v[0])
	if slot != int64(hot) || m["key-count"] != 5 || m["network-bytes-in"] != wantIn || m["network-bytes-out"] != wantOut || m["cpu-usec"] < 0 {
		t.Fatalf("slot %d: %v, want key-count 5, in %d, out %d", slot, m, wantIn, wantOut)
	}
	if len(m) != 5 || m["memory-bytes"] <= 0 {
		t.Fatalf("metrics %v: want key-count, cpu-usec, memory-bytes, network-bytes-in/out", m)
	}

	// ORDERBY network-bytes-in DESC LIMIT 2: the hot slot, then the cold one.
	v, err = c.Do(ctx, "cluster", "slot-stats", "orderby", "network-bytes-in", "limit", 2).Slice()
	if err != nil || len(v) != 2 {
		t.Fatalf("ORDERBY: %v %v", v, err)
	}
	if s0, _ := slotStat(t, v[0]); s0 != int64(hot) {
		t.Fatalf("hottest slot %d, want %d", s0, hot)
	}
	if s1, m1 := slotStat(t, v[1]); s1 != int64(cold) || m1["key-count"] != 2 {
		t.Fatalf("second slot %d %v, want %d with 2 keys", s1, m1, cold)
	}
	// ASC: ties at zero broken by the lower slot number.
	v, _ = c.Do(ctx, "cluster", "slot-stats", "orderby", "key-count", "limit", 3, "asc").Slice()
	for i, want := range []int64{0, 1, 2} {
		if s, _ := slotStat(t, v[i]); s != want {
			t.Fatalf("ASC entry %d is slot %d, want %d", i, s, want)
		}
	}
	// The whole keyspace: every slot is reported once.
	v, _ = c.Do(ctx, "cluster", "slot-stats", "slotsrange", 0, 16383).Slice()
	if len(v) != 16384 {
		t.Fatalf("full range: %d entries", len(v))
	}
}

// TestSlotStatsDisabled: by default only key-count is kept and reported,
// and the other metrics are unknown to ORDERBY (Redis 8.2).
func TestSlotStatsDisabled(t *testing.T) {
	s, c := startOneNodeCluster(t)
	c.Set(ctx, "k", "v", 0)
	v, err := c.Do(ctx, "cluster", "slot-stats", "slotsrange", keyslot.Of("k"), keyslot.Of("k")).Slice()
	if err != nil {
		t.Fatal(err)
	}
	if _, m := slotStat(t, v[0]); len(m) != 1 || m["key-count"] != 1 {
		t.Fatalf("metrics %v, want key-count 1 only", m)
	}
	if s.slotStats != nil {
		t.Fatal("counters allocated while cluster-slot-stats-enabled is no")
	}
	// CONFIG SET turns the counters on at runtime.
	if err := c.ConfigSet(ctx, "cluster-slot-stats-enabled", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	c.Get(ctx, "k")
	v, _ = c.Do(ctx, "cluster", "slot-stats", "slotsrange", keyslot.Of("k"), keyslot.Of("k")).Slice()
	if _, m := slotStat(t, v[0]); m["network-bytes-in"] != 20 {
		t.Fatalf("after CONFIG SET: %v, want network-bytes-in 20 (GET k)", m)
	}
}

func TestSlotStatsErrors(t *testing.T) {
	_, c := startOneNodeCluster(t)
	for _, tc := range []struct {
		args []any
		want string
	}{
		{[]any{"slotsrange", 5, 4}, "ERR Start slot number 5 is greater than end slot number 4"},
		{[]any{"slotsrange", 0, 16384}, "ERR Invalid or out of range slot"},
		{[]any{"slotsrange", "x", 1}, "ERR Invalid or out of range slot"},
		{[]any{"orderby", "cpu-usec"}, "ERR Unrecognized sort metric for ORDERBY."},
		{[]any{"orderby", "memory-bytes"}, "ERR Unrecognized sort metric for ORDERBY."},
		{[]any{"orderby", "key-count", "limit", 0}, "ERR Limit has to lie in between 1 and 16384 (maximum number of slots)."},
		{[]any{"orderby", "key-count", "limit", 1, "limit", 2}, "ERR Multiple filters of the same type are disallowed."},
		{[]any{"orderby", "key-count", "asc", "desc"}, "ERR Multiple filters of the same type are disallowed."},
		{[]any{"orderby", "key-count", "limit"}, "ERR syntax error"},
		{[]any{"slotsrange", 1}, "ERR unknown subcommand or wrong number of arguments for 'slot-stats'. Try CLUSTER HELP."},
		{[]any{}, "ERR wrong number of arguments for 'cluster|slot-stats' command"},
	} {
		err := c.Do(ctx, append([]any{"cluster", "slot-stats"}, tc.args...)...).Err()
		if err == nil || err.Error() != tc.want {
			t.Errorf("CLUSTER SLOT-STATS %v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// BenchmarkSlotStatsHotPath measures pipelined SETs on a cluster node
// owning every slot, with the counters off (the default: one boolean test
// per command) and on.
func BenchmarkSlotStatsHotPath(b *testing.B) {
	for _, on := range []string{"no", "yes"} {
		b.Run("cluster-slot-stats-enabled="+on, func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			port := ln.Addr().(*net.TCPAddr).Port
			ln.Close()
			dir := b.TempDir()
			cfg, err := config.ParseArgs([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
				"--cluster-enabled", "yes", "--cluster-config-file", dir + "/nodes.conf", "--cluster-slot-stats-enabled", on})
			if err != nil {
				b.Fatal(err)
			}
			s, err := New(cfg, Options{Log: io.Discard})
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Start(); err != nil {
				b.Skipf("port %d taken: %v", port, err)
			}
			defer s.Close()
			c := newClient(b, s, 2)
			c.Do(ctx, "cluster", "addslotsrange", 0, 16383)
			for !strings.Contains(c.Do(ctx, "cluster", "info").String(), "cluster_state:ok") {
				time.Sleep(10 * time.Millisecond)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i += 100 {
				p := c.Pipeline()
				for j := 0; j < 100; j++ {
					p.Set(ctx, "k"+strconv.Itoa(j), "v", 0)
				}
				if _, err := p.Exec(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
