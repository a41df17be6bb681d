package history

import "testing"

// The expected slots are CRC16/XMODEM mod 16384 computed outside this code
// (Redis Cluster spec examples for the first two), so a wrong table or a
// wrong hash-tag rule fails here rather than agreeing with itself.
func TestKeyslot(t *testing.T) {
	for key, want := range map[string]int{
		"foo": 12182, "123456789": 12739,
		"{user1000}.following": 3443, "{user1000}.followers": 3443, // the tag alone is hashed
		"foo{}{bar}": 8363, // an empty first tag: the whole key
		"foo{{bar}}": 4015, // the tag is "{bar"
		"a{b}c":      3300, // the tag is "b"
	} {
		if got := Keyslot(key); got != want {
			t.Errorf("Keyslot(%q) = %d, want %d", key, got, want)
		}
	}
}
