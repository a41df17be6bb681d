package rdb

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

func TestCRC64Jones(t *testing.T) {
	// Redis's crc64.c self-test vector.
	if got := CRC64(0, []byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("CRC64(123456789) = %#x", got)
	}
}

func TestLZFRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		n := 1 + r.IntN(3000)
		alpha := 1 + r.IntN(20)
		in := make([]byte, n)
		for j := range in {
			in[j] = byte('a' + r.IntN(alpha))
		}
		c := LZFCompress(in, n-4)
		if c == nil {
			if alpha < 4 && n > 100 {
				t.Fatalf("%d bytes over %d letters did not compress", n, alpha)
			}
			continue
		}
		if len(c) > n-4 {
			t.Fatalf("compressed %d bytes into %d, over the %d allowed", n, len(c), n-4)
		}
		out, err := LZFDecompress(c, n)
		if err != nil || !bytes.Equal(out, in) {
			t.Fatalf("round trip of %q failed: %v", in, err)
		}
	}
	if _, err := LZFDecompress([]byte{0x20, 0x00}, 3); err == nil {
		t.Fatal("a back reference before the start decoded")
	}
}

func TestListpackRoundTrip(t *testing.T) {
	vals := []string{"", "a", "0", "-1", "127", "128", "-4096", "4095", "4096", "-32768", "32767", "-8388608",
		"8388607", "2147483647", "-2147483648", "9223372036854775807", "-9223372036854775808", "007", "-0",
		string(bytes.Repeat([]byte("x"), 63)), string(bytes.Repeat([]byte("x"), 64)), string(bytes.Repeat([]byte("y"), 5000))}
	lp := NewListpack()
	for _, v := range vals {
		lp.Append([]byte(v))
	}
	got, err := ParseListpack(lp.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range got {
		if string(g) != vals[i] {
			t.Errorf("entry %d = %q, want %q", i, g, vals[i])
		}
	}
	b := lp.Bytes()
	for i := 6; i < len(b); i++ { // any single corrupted byte is caught or harmless
		c := slices.Clone(b)
		c[i] ^= 0x5A
		ParseListpack(c)
	}
}

func TestIntsetRoundTrip(t *testing.T) {
	vals := []int64{-5, 1, 70000}
	b := Intset(vals, 2)
	if w := int(b[0]); w != 4 {
		t.Fatalf("width %d, want 4", w)
	}
	got, w, err := ParseIntset(b)
	if err != nil || w != 4 || !slices.Equal(got, vals) {
		t.Fatalf("got %v %d %v", got, w, err)
	}
	if _, _, err := ParseIntset(Intset([]int64{2, 1}, 2)); err == nil {
		t.Fatal("unsorted intset accepted")
	}
}

func TestStringEncodings(t *testing.T) {
	for _, s := range []string{"", "1", "-129", "40000", "-2147483648", "12345678901", "abc", string(bytes.Repeat([]byte("ab"), 40))} {
		r := &Reader{B: AppendString(nil, []byte(s), true)}
		if got := r.String(); string(got) != s || r.Err != nil || len(r.B) != 0 {
			t.Errorf("%q decoded as %q (%v)", s, got, r.Err)
		}
	}
	for _, n := range []uint64{0, 63, 64, 16383, 16384, 1 << 32, 1<<32 + 1} {
		r := &Reader{B: AppendLen(nil, n)}
		if got := r.Len(); got != n || r.Err != nil {
			t.Errorf("length %d decoded as %d", n, got)
		}
	}
	if v, ok := ParseInt([]byte(strconv.Itoa(-5))); !ok || v != -5 {
		t.Error("ParseInt(-5)")
	}
}
