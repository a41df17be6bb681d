package store

import (
	"fmt"
	"testing"
)

// TestStreamNodesSeekDeleteTrim checks the chunked entry index against a
// plain slice: seeks, deletes emptying nodes, exact and approximate trims.
func TestStreamNodesSeekDeleteTrim(t *testing.T) {
	s := NewStream()
	var want []StreamID
	for i := 1; i <= 95; i++ {
		id := StreamID{Ms: uint64(i), Seq: uint64(i % 3)}
		s.Append(id, [][]byte{[]byte("f"), []byte(fmt.Sprint(i))}, 10, 4096)
		want = append(want, id)
	}
	if s.Nodes() != 10 || s.Len() != 95 {
		t.Fatalf("nodes %d len %d, want 10 nodes of up to 10 entries, 95", s.Nodes(), s.Len())
	}
	check := func(where string) {
		t.Helper()
		var got []StreamID
		s.Range(StreamID{}, MaxStreamID, false, func(e *StreamEntry) bool { got = append(got, e.ID); return true })
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: entries %v, want %v", where, got, want)
		}
		for i, id := range want {
			if c := s.Seek(id); !s.Valid(c) || s.At(c).ID != id {
				t.Fatalf("%s: Seek(%v) misses entry %d", where, id, i)
			}
			prev, _ := id.Decr()
			if c := s.SeekLE(prev); i > 0 && (!s.Valid(c) || s.At(c).ID != want[i-1]) {
				t.Fatalf("%s: SeekLE(%v) is not %v", where, prev, want[i-1])
			}
		}
	}
	check("appended")
	// Empty the second node: it goes, the others stay.
	for _, id := range want[10:20] {
		if !s.Delete(id) {
			t.Fatalf("Delete(%v) = false", id)
		}
	}
	want = append(want[:10:10], want[20:]...)
	if s.Nodes() != 9 || s.MaxDeletedEntryID != (StreamID{20, 2}) {
		t.Fatalf("after deletes: nodes %d max deleted %v", s.Nodes(), s.MaxDeletedEntryID)
	}
	check("deleted")
	// MAXLEN ~ 70 removes whole nodes only: the first (10) leaves 75.
	if n := s.Trim(true, 70, StreamID{}, true, 0); n != 10 || s.Len() != 75 {
		t.Fatalf("MAXLEN ~ 70 removed %d, len %d; want 10, 75", n, s.Len())
	}
	want = want[10:]
	check("approx trim")
	// MINID = 33-0 removes entries inside a node.
	if n := s.Trim(false, 0, StreamID{33, 0}, false, 0); n != 12 || s.FirstID != (StreamID{33, 0}) {
		t.Fatalf("MINID 33 removed %d, first %v; want 12, 33-0", n, s.FirstID)
	}
	want = want[12:]
	check("exact trim")
	if c := s.Clone(); c.Len() != s.Len() || c.LastID != s.LastID || c.EntriesAdded != 95 {
		t.Fatalf("clone: len %d last %v added %d", c.Len(), c.LastID, c.EntriesAdded)
	}
}
