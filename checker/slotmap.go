package checker

import "github.com/redline-dev/redline/history"

// slotMap is a map from key slot to node, as a shard view holds it (each
// slot's primary at a fault's start). A few slots are a Go map; past
// denseAbove it becomes a number per slot into a table of the nodes'
// names, about 64 KB whatever it holds, a tenth of a Go map of every slot
// (issue 42: the views of a run of an hour, a map of up to 16384 slots
// for each of its thousand fault windows, were 0.9 GB in each of three
// checkers at 150M entries). Its iteration order is unspecified, as a Go
// map's. A nil *slotMap is empty.
type slotMap struct {
	sparse map[int]string
	// dense[slot] is 0 for a slot not in the map, else 1 + its node's
	// number in names.
	dense  []uint32
	names  []string
	number map[string]uint32
	n      int
	// outOfRange: the sparse map holds a slot no key has, so it stays
	// sparse.
	outOfRange bool
}

const denseAbove = 512

func newSlotMap() *slotMap { return &slotMap{sparse: map[int]string{}} }

// get is the node of slot, and whether the map holds the slot.
func (m *slotMap) get(slot int) (string, bool) {
	if m == nil {
		return "", false
	}
	if m.dense == nil {
		n, ok := m.sparse[slot]
		return n, ok
	}
	if slot < 0 || slot >= len(m.dense) || m.dense[slot] == 0 {
		return "", false
	}
	return m.names[m.dense[slot]-1], true
}

// node is the node of slot, "" when the map does not hold it.
func (m *slotMap) node(slot int) string {
	n, _ := m.get(slot)
	return n
}

func (m *slotMap) set(slot int, node string) {
	if m.dense == nil {
		if _, ok := m.sparse[slot]; !ok && len(m.sparse) >= denseAbove && !m.outOfRange && slot >= 0 && slot < history.Slots {
			m.toDense()
		}
		if m.dense == nil {
			m.sparse[slot] = node
			m.n = len(m.sparse)
			return
		}
	}
	if slot < 0 || slot >= len(m.dense) {
		// No key has this slot (a caller's own number): back to sparse.
		sparse := map[int]string{}
		m.each(func(s int, n string) { sparse[s] = n })
		*m = slotMap{sparse: sparse, outOfRange: true}
		m.sparse[slot] = node
		m.n = len(m.sparse)
		return
	}
	id, ok := m.number[node]
	if !ok {
		m.names = append(m.names, node)
		id = uint32(len(m.names))
		m.number[node] = id
	}
	if m.dense[slot] == 0 {
		m.n++
	}
	m.dense[slot] = id
}

// toDense moves a sparse map to its dense form, unless it holds a slot
// no key has (no history's slot is one: Keyslot is below Slots).
func (m *slotMap) toDense() {
	for slot := range m.sparse {
		if slot < 0 || slot >= history.Slots {
			m.outOfRange = true
			return
		}
	}
	m.dense = make([]uint32, history.Slots)
	m.number = map[string]uint32{}
	sparse := m.sparse
	m.sparse, m.n = nil, 0
	for slot, node := range sparse {
		m.set(slot, node)
	}
}

// len is how many slots the map holds.
func (m *slotMap) len() int {
	if m == nil {
		return 0
	}
	return m.n
}

// each calls f with each slot the map holds and its node.
func (m *slotMap) each(f func(slot int, node string)) {
	if m == nil {
		return
	}
	if m.dense == nil {
		for slot, node := range m.sparse {
			f(slot, node)
		}
		return
	}
	for slot, id := range m.dense {
		if id != 0 {
			f(slot, m.names[id-1])
		}
	}
}
