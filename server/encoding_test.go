package server

import (
	"strings"
	"testing"
)

// TestObjectEncoding: OBJECT ENCODING reports the encoding Redis 7.0 picks
// by size and content (Redis's default limits).
func TestObjectEncoding(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s, 2)
	enc := func(key string) string { return c.ObjectEncoding(ctx, key).Val() }
	c.SAdd(ctx, "ints", 1, 2, 3)
	c.SAdd(ctx, "strs", "a", 1)
	c.HSet(ctx, "small", "f", "v")
	c.HSet(ctx, "big", "f", strings.Repeat("x", 65))
	c.Do(ctx, "ZADD", "z", 1, "m")
	for key, want := range map[string]string{"ints": "intset", "strs": "hashtable", "small": "listpack", "big": "hashtable", "z": "listpack"} {
		if got := enc(key); got != want {
			t.Errorf("OBJECT ENCODING %s = %q, want %q", key, got, want)
		}
	}
	// The limits are Redis's defaults, fixed: CONFIG SET of
	// *-max-listpack-* is accepted but does not change them yet.
}
