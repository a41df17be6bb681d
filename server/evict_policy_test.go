package server

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// usedMemory reads INFO memory's used_memory.
func usedMemory(t *testing.T, c *redis.Client) int64 {
	t.Helper()
	v, err := strconv.ParseInt(infoField(c.Info(ctx, "memory").Val(), "used_memory"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Every policy keeps used memory under maxmemory while keys keep coming, as
// unit/maxmemory's "is the memory limit honoured" does; the volatile
// policies evict only keys with a TTL and refuse writes with Redis's OOM
// error once none is left; evicted_keys counts the evictions.
func TestMaxmemoryPoliciesHonourTheLimit(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s, 2)
	for _, policy := range []string{"allkeys-random", "allkeys-lru", "allkeys-lfu", "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"} {
		c.FlushAll(ctx)
		c.ConfigSet(ctx, "maxmemory", "0")
		c.ConfigResetStat(ctx)
		limit := usedMemory(t, c) + 100*1024
		c.ConfigSet(ctx, "maxmemory-policy", policy)
		if err := c.ConfigSet(ctx, "maxmemory", strconv.FormatInt(limit, 10)).Err(); err != nil {
			t.Fatal(err)
		}
		// Half the keys persistent, half volatile.
		stored := map[string]bool{}
		for i := 0; i < 4000; i++ {
			var err error
			if i%2 == 0 {
				err = c.Set(ctx, fmt.Sprintf("p:%d", i), "x", 0).Err()
			} else {
				err = c.Set(ctx, fmt.Sprintf("v:%d", i), "x", time.Hour).Err()
			}
			if err != nil && !strings.HasPrefix(policy, "volatile-") {
				t.Fatalf("%s: write %d: %v", policy, i, err)
			}
			if err != nil && err.Error() != errOOM {
				t.Fatalf("%s: write %d: %v, want %q", policy, i, err, errOOM)
			}
			if err == nil && i%2 == 0 {
				stored[fmt.Sprintf("p:%d", i)] = true
			}
		}
		if used := usedMemory(t, c); used > limit+4096 {
			t.Errorf("%s: used_memory %d over maxmemory %d", policy, used, limit)
		}
		evicted, _ := strconv.Atoi(infoField(c.Info(ctx, "stats").Val(), "evicted_keys"))
		if evicted == 0 {
			t.Errorf("%s: evicted_keys 0", policy)
		}
		if strings.HasPrefix(policy, "volatile-") {
			for k := range stored {
				if c.Exists(ctx, k).Val() != 1 {
					t.Fatalf("%s evicted the persistent key %s", policy, k)
				}
			}
		}
	}
	c.ConfigSet(ctx, "maxmemory", "0")
}

// The LRU and LFU policies keep what is used: after filling the limit,
// keys read again and again survive the evictions that new keys cause far
// more often than keys never read (Redis's approximation, sampled with
// maxmemory-samples 10 as unit/maxmemory's LRU tests do).
func TestMaxmemoryLRUAndLFUKeepHotKeys(t *testing.T) {
	for _, policy := range []string{"allkeys-lru", "allkeys-lfu"} {
		s := startServer(t)
		c := newClient(t, s, 2)
		c.ConfigSet(ctx, "maxmemory-samples", "10")
		c.ConfigSet(ctx, "maxmemory-policy", policy)
		const n = 2000
		for i := 0; i < n; i++ {
			c.Set(ctx, fmt.Sprintf("k:%d", i), strings.Repeat("x", 100), 0)
		}
		c.ConfigSet(ctx, "maxmemory", strconv.FormatInt(usedMemory(t, c), 10))
		// The hot tenth is read many times; LRU needs the cold keys to be
		// idle longer, on its one-second clock.
		s.clock.SetOffset(2000)
		for r := 0; r < 5; r++ {
			for i := 0; i < n/10; i++ {
				c.Get(ctx, fmt.Sprintf("k:%d", i))
			}
		}
		for i := 0; i < n/2; i++ {
			c.Set(ctx, fmt.Sprintf("new:%d", i), strings.Repeat("x", 100), 0)
		}
		hot, cold := 0, 0
		for i := 0; i < n; i++ {
			if c.Exists(ctx, fmt.Sprintf("k:%d", i)).Val() == 1 {
				if i < n/10 {
					hot++
				} else {
					cold++
				}
			}
		}
		hotShare, coldShare := float64(hot)/float64(n/10), float64(cold)/float64(n-n/10)
		t.Logf("%s: %.0f%% of the hot keys and %.0f%% of the cold ones survived", policy, 100*hotShare, 100*coldShare)
		if hotShare < 0.9 || coldShare > 0.8 {
			t.Errorf("%s: %.0f%% of the hot keys and %.0f%% of the cold ones survived", policy, 100*hotShare, 100*coldShare)
		}
	}
}

// Eviction emits the evicted event, and CONFIG SET maxmemory evicts at once
// (Redis's updateMaxmemory); with nothing left a write gets -OOM.
func TestEvictionNotifiesAndRefuses(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s, 2)
	c.ConfigSet(ctx, "notify-keyspace-events", "Ee")
	c.ConfigSet(ctx, "maxmemory-policy", "allkeys-lru")
	sub := c.PSubscribe(ctx, "*")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	c.Set(ctx, "foo", "bar", 0)
	c.ConfigSet(ctx, "maxmemory", "1")
	if m := receiveMessage(t, sub); m.Channel != "__keyevent@0__:evicted" || m.Payload != "foo" {
		t.Fatalf("got %s %s, want __keyevent@0__:evicted foo", m.Channel, m.Payload)
	}
	if err := c.Set(ctx, "x", "y", 0).Err(); err == nil || err.Error() != errOOM {
		t.Fatalf("SET with nothing to evict: %v", err)
	}
	c.ConfigSet(ctx, "maxmemory", "0")
}
