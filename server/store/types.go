package store

import (
	"sort"

	"github.com/redline-dev/redline/server/keyslot"
)

// List is a double-ended queue of byte strings (a ring buffer).
type List struct {
	buf  [][]byte
	head int
	n    int
}

// Len is the number of elements.
func (l *List) Len() int { return l.n }

func (l *List) grow() {
	c := len(l.buf) * 2
	if c == 0 {
		c = 8
	}
	nb := make([][]byte, c)
	for i := 0; i < l.n; i++ {
		nb[i] = l.buf[(l.head+i)%len(l.buf)]
	}
	l.buf, l.head = nb, 0
}

// PushFront prepends v.
func (l *List) PushFront(v []byte) {
	if l.n == len(l.buf) {
		l.grow()
	}
	l.head = (l.head - 1 + len(l.buf)) % len(l.buf)
	l.buf[l.head] = v
	l.n++
}

// PushBack appends v.
func (l *List) PushBack(v []byte) {
	if l.n == len(l.buf) {
		l.grow()
	}
	l.buf[(l.head+l.n)%len(l.buf)] = v
	l.n++
}

// PopFront removes and returns the first element.
func (l *List) PopFront() []byte {
	if l.n == 0 {
		return nil
	}
	v := l.buf[l.head]
	l.buf[l.head] = nil
	l.head = (l.head + 1) % len(l.buf)
	l.n--
	return v
}

// PopBack removes and returns the last element.
func (l *List) PopBack() []byte {
	if l.n == 0 {
		return nil
	}
	i := (l.head + l.n - 1) % len(l.buf)
	v := l.buf[i]
	l.buf[i] = nil
	l.n--
	return v
}

// At returns element i (0 <= i < Len).
func (l *List) At(i int) []byte { return l.buf[(l.head+i)%len(l.buf)] }

// ZSet is a sorted set: a member->score map plus a slice sorted by
// (score, member).
type ZSet struct {
	scores map[string]float64
	sorted []ZEntry
}

// ZEntry is one member of a sorted set.
type ZEntry struct {
	Member string
	Score  float64
}

// NewZSet returns an empty sorted set.
func NewZSet() *ZSet { return &ZSet{scores: make(map[string]float64)} }

// Len is the number of members.
func (z *ZSet) Len() int { return len(z.scores) }

// Score returns the score of m.
func (z *ZSet) Score(m string) (float64, bool) {
	s, ok := z.scores[m]
	return s, ok
}

func less(a ZEntry, score float64, member string) bool {
	if a.Score != score {
		return a.Score < score
	}
	return a.Member < member
}

func (z *ZSet) search(score float64, member string) int {
	return sort.Search(len(z.sorted), func(i int) bool { return !less(z.sorted[i], score, member) })
}

// Add sets m's score, reporting whether m is new.
func (z *ZSet) Add(m string, score float64) bool {
	old, ok := z.scores[m]
	if ok {
		if old == score {
			return false
		}
		i := z.search(old, m)
		z.sorted = append(z.sorted[:i], z.sorted[i+1:]...)
	}
	z.scores[m] = score
	i := z.search(score, m)
	z.sorted = append(z.sorted, ZEntry{})
	copy(z.sorted[i+1:], z.sorted[i:])
	z.sorted[i] = ZEntry{Member: m, Score: score}
	return !ok
}

// Remove deletes m, reporting whether it was there.
func (z *ZSet) Remove(m string) bool {
	old, ok := z.scores[m]
	if !ok {
		return false
	}
	i := z.search(old, m)
	z.sorted = append(z.sorted[:i], z.sorted[i+1:]...)
	delete(z.scores, m)
	return true
}

// At returns the entry of rank i (ascending).
func (z *ZSet) At(i int) ZEntry { return z.sorted[i] }

// Rank returns the ascending rank of m.
func (z *ZSet) Rank(m string) (int, bool) {
	s, ok := z.scores[m]
	if !ok {
		return 0, false
	}
	return z.search(s, m), true
}

// FirstAtLeast returns the rank of the first entry with score >= s (or > s
// when exclusive).
func (z *ZSet) FirstAtLeast(s float64, exclusive bool) int {
	return sort.Search(len(z.sorted), func(i int) bool {
		if exclusive {
			return z.sorted[i].Score > s
		}
		return z.sorted[i].Score >= s
	})
}

// slotIndex keeps the keys of each cluster hash slot.
type slotIndex struct {
	keys [keyslot.NumSlots]map[string]struct{}
}

func newSlotIndex() *slotIndex { return &slotIndex{} }

func (s *slotIndex) add(k string) {
	sl := keyslot.Of(k)
	m := s.keys[sl]
	if m == nil {
		m = make(map[string]struct{})
		s.keys[sl] = m
	}
	m[k] = struct{}{}
}

func (s *slotIndex) remove(k string) {
	if m := s.keys[keyslot.Of(k)]; m != nil {
		delete(m, k)
	}
}

// EnableSlotIndex starts keeping keys per hash slot (cluster mode), indexing
// the keys already present.
func (db *DB) EnableSlotIndex() {
	if db.slots != nil {
		return
	}
	db.slots = newSlotIndex()
	for k := range db.keys {
		db.slots.add(k)
	}
}

// CountKeysInSlot is the number of keys in slot (needs EnableSlotIndex; -1 otherwise).
func (db *DB) CountKeysInSlot(slot int) int {
	if db.slots == nil {
		return -1
	}
	if slot < 0 || slot >= keyslot.NumSlots {
		return 0
	}
	return len(db.slots.keys[slot])
}

// KeysInSlot returns up to count keys of slot, sorted (needs EnableSlotIndex).
func (db *DB) KeysInSlot(slot, count int) []string {
	if db.slots == nil || slot < 0 || slot >= keyslot.NumSlots {
		return nil
	}
	out := make([]string, 0, min(count, len(db.slots.keys[slot])))
	for k := range db.slots.keys[slot] {
		out = append(out, k)
	}
	sort.Strings(out)
	if len(out) > count {
		out = out[:count]
	}
	return out
}

// Set replaces element i (0 <= i < Len).
func (l *List) Set(i int, v []byte) { l.buf[(l.head+i)%len(l.buf)] = v }

// Slice returns the elements in order (a copy of the element slice).
func (l *List) Slice() [][]byte {
	out := make([][]byte, l.n)
	for i := range out {
		out[i] = l.At(i)
	}
	return out
}

// Reset replaces the contents with items.
func (l *List) Reset(items [][]byte) {
	l.buf, l.head, l.n = nil, 0, 0
	for _, it := range items {
		l.PushBack(it)
	}
}
