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
	// A big hash stays a listpack up to Redis 7.0's 512 fields.
	for i := 0; i < 512; i++ {
		c.HSet(ctx, "h512", i, i)
	}
	if got := enc("h512"); got != "listpack" {
		t.Errorf("512 fields: %q", got)
	}
	c.HSet(ctx, "h512", "one-more", 1)
	if got := enc("h512"); got != "hashtable" {
		t.Errorf("513 fields: %q", got)
	}
}

// TestObjectEncodingFollowsConfig: the limits CONFIG SET changes decide
// the encodings; as in Redis, a key converts on its next write, not at
// CONFIG SET, and never back.
func TestObjectEncodingFollowsConfig(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s, 2)
	enc := func(key string) string { return c.ObjectEncoding(ctx, key).Val() }
	c.Do(ctx, "ZADD", "z", 1, "m")
	c.SAdd(ctx, "s", 1, 2)
	c.HSet(ctx, "h", "f", "v")
	c.ConfigSet(ctx, "zset-max-ziplist-entries", "0")
	c.ConfigSet(ctx, "set-max-intset-entries", "2")
	c.ConfigSet(ctx, "hash-max-listpack-value", "3")
	for key, want := range map[string]string{"z": "listpack", "s": "intset", "h": "listpack"} {
		if got := enc(key); got != want {
			t.Errorf("%s right after CONFIG SET: %q, want %q", key, got, want)
		}
	}
	c.Do(ctx, "ZADD", "z", 2, "n")
	c.SAdd(ctx, "s", 3)
	c.HSet(ctx, "h", "g", "long")
	for key, want := range map[string]string{"z": "skiplist", "s": "hashtable", "h": "hashtable"} {
		if got := enc(key); got != want {
			t.Errorf("%s after a write: %q, want %q", key, got, want)
		}
	}
	c.ConfigSet(ctx, "zset-max-listpack-entries", "128")
	c.Do(ctx, "ZADD", "z", 3, "o")
	if got := enc("z"); got != "skiplist" {
		t.Errorf("converted back: %q", got)
	}
	c.Do(ctx, "ZADD", "z2", 3, "o")
	if got := enc("z2"); got != "listpack" {
		t.Errorf("a new zset under restored limits: %q", got)
	}
	if got := c.ConfigGet(ctx, "zset-max-ziplist-entries").Val()["zset-max-ziplist-entries"]; got != "128" {
		t.Errorf("CONFIG GET zset-max-ziplist-entries = %q", got)
	}
}
