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
