package keyslot

import "testing"

func TestCRC16Vector(t *testing.T) {
	if got := CRC16([]byte("123456789")); got != 0x31C3 {
		t.Fatalf("crc16(123456789) = %#x, want 0x31c3", got)
	}
}

func TestKeyslot(t *testing.T) {
	if got := Of("foo"); got != 12182 {
		t.Fatalf("keyslot(foo) = %d, want 12182", got)
	}
	if a, b := Of("{user1000}.following"), Of("{user1000}.followers"); a != b {
		t.Fatalf("hash tags differ: %d vs %d", a, b)
	}
	if a, b := Of("{user1000}.following"), Of("user1000"); a != b {
		t.Fatalf("tag not hashed alone: %d vs %d", a, b)
	}
	if a, b := Of("foo{}{bar}"), int(CRC16([]byte("foo{}{bar}"))&16383); a != b {
		t.Fatalf("foo{}{bar} must hash whole: %d vs %d", a, b)
	}
	if a, b := Of("foo{{bar}}"), Of("{bar"); a != b {
		t.Fatalf("foo{{bar}} must hash {bar: %d vs %d", a, b)
	}
	if a, b := Of("foo{bar"), int(CRC16([]byte("foo{bar"))&16383); a != b {
		t.Fatalf("unclosed tag must hash whole: %d vs %d", a, b)
	}
	if got := Of(""); got != 0 {
		t.Fatalf("empty key slot %d", got)
	}
}

// TestKeySlot checks known slots, for string and byte-slice keys alike.
func TestKeySlot(t *testing.T) {
	for k, want := range map[string]int{"foo": 12182, "bar": 5061, "{user1000}.following": 3443, "{user1000}.followers": 3443, "foo{}{bar}": 8363, "foo{{bar}}zap": 4015, "": 0} {
		if got := Of(k); got != want {
			t.Errorf("KeySlot(%q) = %d, want %d", k, got, want)
		}
		if got := Of([]byte(k)); got != want {
			t.Errorf("KeySlot([]byte(%q)) = %d, want %d", k, got, want)
		}
	}
}

func BenchmarkOf(b *testing.B) {
	k := []byte("{user1000}.following:12345")
	for b.Loop() {
		Of(k)
	}
}
