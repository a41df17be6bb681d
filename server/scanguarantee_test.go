package server

import (
	"strconv"
	"testing"
)

// SSCAN of a hashtable-encoded set returns every element present for the
// whole scan even when most others are removed half-way (Redis's
// "SCAN regression test for issue #4906").
func TestSScanKeepsElementsAcrossRemovals(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s, 2)
	for round := 0; round < 10; round++ {
		c.Del(ctx, "set")
		c.SAdd(ctx, "set", "x")
		var toRemove []any
		for j := 0; j < 600; j++ {
			c.SAdd(ctx, "set", j)
			if j >= 100 {
				toRemove = append(toRemove, j)
			}
		}
		found := map[string]bool{}
		cursor, iter := uint64(0), 0
		for {
			items, next, err := c.SScan(ctx, "set", cursor, "", 10).Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range items {
				found[it] = true
			}
			iter++
			if iter == round+1 {
				c.SRem(ctx, "set", toRemove...)
			}
			cursor = next
			if cursor == 0 {
				break
			}
		}
		for j := 0; j < 100; j++ {
			if !found[strconv.Itoa(j)] {
				t.Fatalf("round %d: SSCAN missed %d", round, j)
			}
		}
	}
}

// SMOVE of a member the destination already holds leaves the destination
// unmodified for WATCH (Redis's "SMOVE only notify dstset when the
// addition is successful").
func TestSMoveTouchesOnlyChangedKeys(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s, 2)
	c2 := newClient(t, s, 2)
	c.SAdd(ctx, "src", "a", "b")
	c.SAdd(ctx, "dst", "a")
	conn := c.Conn()
	defer conn.Close()
	conn.Do(ctx, "watch", "dst")
	conn.Do(ctx, "multi")
	conn.Do(ctx, "sadd", "dst", "c")
	if err := c2.SMove(ctx, "src", "dst", "a").Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := conn.Do(ctx, "exec").Result(); err != nil || v == nil {
		t.Fatalf("EXEC after an SMOVE that left dst unchanged: %v %v", v, err)
	}
	if n := c.SCard(ctx, "dst").Val(); n != 2 {
		t.Fatalf("SCARD dst = %d, want 2", n)
	}
}

// SCAN deletes the expired keys it meets, as Redis does (lazy expiry: with
// active expiry off, DBSIZE counts them until then).
func TestScanExpiresLazily(t *testing.T) {
	s := startServer(t, "--enable-debug-command", "yes")
	c := newClient(t, s, 2)
	if err := c.Do(ctx, "debug", "set-active-expire", "0").Err(); err != nil {
		t.Fatal(err)
	}
	c.Do(ctx, "set", "foo1", "bar", "px", "1")
	c.Do(ctx, "set", "foo2", "bar", "px", "1")
	c.Set(ctx, "live", "x", 0)
	if err := c.Do(ctx, "debug", "sleep", "0.01").Err(); err != nil {
		t.Fatal(err)
	}
	if n := c.DBSize(ctx).Val(); n != 3 {
		t.Fatalf("DBSIZE before SCAN = %d, want 3 (expired keys not yet deleted)", n)
	}
	keys, _, err := c.Scan(ctx, 0, "", 100).Result()
	if err != nil || len(keys) != 1 || keys[0] != "live" {
		t.Fatalf("SCAN = %v %v", keys, err)
	}
	if n := c.DBSize(ctx).Val(); n != 1 {
		t.Fatalf("DBSIZE after SCAN = %d, want 1", n)
	}
}
