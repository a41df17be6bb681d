package server

import (
	"testing"
)

// TestPropagationOfHLLBitfieldSort: what reaches replicas and the AOF is
// what Redis 7.0 propagates. PFCOUNT, a read-only command, propagates when
// it rewrites the cached cardinality and not when it reads it; PFADD and
// SETBIT/BITFIELD propagate only when something changed; SORT ... STORE
// propagates, a plain SORT does not; a WATCHed HLL is invalidated by the
// PFCOUNT that rewrites its cache.
func TestPropagationOfHLLBitfieldSort(t *testing.T) {
	s := startServer(t)
	recorded := recordPropagation(s)
	c := newClient(t, s, 2)
	w := newClient(t, s, 2)
	conn := w.Conn()
	defer conn.Close()
	steps := [][]any{
		{"pfadd", "h", "a", "b"}, {"pfadd", "h", "a"}, {"pfcount", "h"}, {"pfcount", "h"},
		{"setbit", "b", "3", "1"}, {"setbit", "b", "3", "1"}, {"bitfield", "b", "set", "u4", "0", "2"},
		{"bitfield", "b", "set", "u4", "0", "2"}, {"bitfield", "b", "get", "u4", "0"},
		{"rpush", "l", "2", "1"}, {"sort", "l"}, {"sort", "l", "store", "d"},
	}
	for _, st := range steps {
		if err := c.Do(ctx, st...).Err(); err != nil {
			t.Fatalf("%v: %v", st, err)
		}
	}
	got := recorded()
	want := "SELECT 0\npfadd h a b\npfcount h\nsetbit b 3 1\nbitfield b set u4 0 2\nrpush l 2 1\nsort l store d"
	if got != want {
		t.Fatalf("propagated:\n%s\nwant:\n%s", got, want)
	}
	// WATCH h, then a PFCOUNT on another connection rewrites its cache.
	c.Do(ctx, "pfadd", "h", "c")
	conn.Do(ctx, "watch", "h")
	c.Do(ctx, "pfcount", "h")
	conn.Do(ctx, "multi")
	conn.Do(ctx, "get", "h")
	if v, err := conn.Do(ctx, "exec").Result(); err == nil && v != nil {
		t.Fatalf("EXEC after a PFCOUNT that rewrote the watched HLL's cache ran: %v", v)
	}
}
