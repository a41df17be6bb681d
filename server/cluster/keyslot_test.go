package cluster

import "testing"

func TestCRC16Vector(t *testing.T) {
	if got := CRC16([]byte("123456789")); got != 0x31C3 {
		t.Fatalf("crc16(123456789) = %#x, want 0x31c3", got)
	}
}

func TestKeyslot(t *testing.T) {
	if got := KeyslotString("foo"); got != 12182 {
		t.Fatalf("keyslot(foo) = %d, want 12182", got)
	}
	if a, b := KeyslotString("{user1000}.following"), KeyslotString("{user1000}.followers"); a != b {
		t.Fatalf("hash tags differ: %d vs %d", a, b)
	}
	if a, b := KeyslotString("{user1000}.following"), KeyslotString("user1000"); a != b {
		t.Fatalf("tag not hashed alone: %d vs %d", a, b)
	}
	if a, b := KeyslotString("foo{}{bar}"), int(CRC16([]byte("foo{}{bar}"))&16383); a != b {
		t.Fatalf("foo{}{bar} must hash whole: %d vs %d", a, b)
	}
	if a, b := KeyslotString("foo{{bar}}"), KeyslotString("{bar"); a != b {
		t.Fatalf("foo{{bar}} must hash {bar: %d vs %d", a, b)
	}
	if a, b := KeyslotString("foo{bar"), int(CRC16([]byte("foo{bar"))&16383); a != b {
		t.Fatalf("unclosed tag must hash whole: %d vs %d", a, b)
	}
	if got := KeyslotString(""); got != 0 {
		t.Fatalf("empty key slot %d", got)
	}
}
