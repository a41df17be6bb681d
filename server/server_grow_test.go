package server

import "testing"

// TestGrowForKeepsAReadChunk: a request that lacks a few bytes, held at
// the end of the buffer, must not leave the connection a buffer of just
// those bytes. Such a buffer stays that small (makeRoom compacts instead
// of growing once a request is consumed), and every later read took a
// few dozen bytes: a replica reading its primary's stream so fell behind
// and slot moves under load took 2-3 times as long.
func TestGrowForKeepsAReadChunk(t *testing.T) {
	c := &Client{in: make([]byte, readChunk)}
	// 30 bytes of an incomplete request at the very end of the buffer;
	// the parser says it needs 40 bytes in all.
	c.rstart = readChunk - 30
	c.rend = readChunk
	c.growFor(40)
	if free := len(c.in) - c.rend; free < readChunk {
		t.Fatalf("after growFor(40) with 30 bytes held: %d bytes free to read into, want at least a read chunk (%d)", free, readChunk)
	}
	if c.rstart != 0 || c.rend != 30 {
		t.Fatalf("rstart %d rend %d, want the held bytes moved to the start", c.rstart, c.rend)
	}
	// A declared 512 MB bulk with a few bytes arrived stays small.
	c = &Client{in: make([]byte, 64)}
	c.rend = 38
	c.growFor(536870912 + 38)
	if len(c.in) > 4*readChunk {
		t.Fatalf("a declared 512 MB bulk with 38 bytes arrived grew the buffer to %d bytes", len(c.in))
	}
}
