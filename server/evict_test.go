package server

import (
	"strings"
	"testing"
)

// Over maxmemory (noeviction) a denyoom command is refused with -OOM, also
// while queueing in MULTI (EXEC then aborts); reads still run.
func TestMaxmemoryRefusesDenyOOM(t *testing.T) {
	s := startExtServer(t)
	c := newClient(t, s, 2)
	c.Set(ctx, "k", "v", 0)
	// Transactions queued before the limit: one that may use memory is
	// refused whole at EXEC, a read-only one runs (Redis's processCommand).
	w, ro := c.Conn(), c.Conn()
	defer w.Close()
	defer ro.Close()
	w.Do(ctx, "multi")
	w.Do(ctx, "set", "x", "1")
	w.Do(ctx, "get", "x")
	ro.Do(ctx, "multi")
	ro.Do(ctx, "get", "k")
	if err := c.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	if err := w.Do(ctx, "exec").Err(); err == nil || err.Error() != "EXECABORT Transaction discarded because of: OOM command not allowed when used memory > 'maxmemory'." {
		t.Fatalf("EXEC of a SET queued before maxmemory: %v, want EXECABORT ... OOM", err)
	}
	if err := ro.Do(ctx, "exec").Err(); err != nil {
		t.Fatalf("EXEC of a read-only transaction over maxmemory: %v", err)
	}
	if err := c.Set(ctx, "k2", "v", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "OOM command not allowed when used memory") {
		t.Fatalf("SET over maxmemory: %v, want OOM", err)
	}
	if v := c.Get(ctx, "k").Val(); v != "v" {
		t.Fatalf("GET over maxmemory = %q", v)
	}
	if err := c.Del(ctx, "k").Err(); err != nil {
		t.Fatalf("DEL over maxmemory: %v", err)
	}
	conn := c.Conn()
	defer conn.Close()
	conn.Do(ctx, "multi")
	conn.Do(ctx, "lpush", "l", "x")
	if err := conn.Do(ctx, "exec").Err(); err == nil || !strings.HasPrefix(err.Error(), "EXECABORT") {
		t.Fatalf("EXEC after an OOM refusal while queueing: %v", err)
	}
	if err := c.ConfigSet(ctx, "maxmemory", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "k2", "v", 0).Err(); err != nil {
		t.Fatalf("SET with maxmemory 0: %v", err)
	}
}
