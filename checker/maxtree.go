package checker

// maxTree holds one number per index and finds the indexes below a bound
// whose number is at least a given one, visiting only the subtrees whose
// largest number is: the attribution's recovery pass offers each of the
// run's served calls to the fault spans still waiting for a call that
// early (their reach), and looping over every span began before the call
// was 38 s of one core at 150M entries (1,134 spans, most long done).
type maxTree struct {
	size int     // leaves: a power of two, at least the indexes
	t    []int64 // t[1] the root; t[size+i] index i
}

func newMaxTree(vals []int64) *maxTree {
	size := 1
	for size < len(vals) {
		size *= 2
	}
	m := &maxTree{size: size, t: make([]int64, 2*size)}
	for i := range m.t {
		m.t[i] = minInt64
	}
	for i, v := range vals {
		m.t[size+i] = v
	}
	for i := size - 1; i >= 1; i-- {
		m.t[i] = max(m.t[2*i], m.t[2*i+1])
	}
	return m
}

const minInt64 = -1 << 63

// set makes index i's number v.
func (m *maxTree) set(i int, v int64) {
	i += m.size
	m.t[i] = v
	for i /= 2; i >= 1; i /= 2 {
		m.t[i] = max(m.t[2*i], m.t[2*i+1])
	}
}

// atLeast appends to out, in increasing order, the indexes below hi whose
// number is at least v. (Iterative: a recursive closure allocated on each
// of the tens of millions of calls.)
func (m *maxTree) atLeast(hi int, v int64, out []int) []int {
	type frame struct{ node, lo, width int }
	var stack [128]frame // depth at most log2(size), two frames a level
	n := 0
	stack[n] = frame{1, 0, m.size}
	n++
	for n > 0 {
		n--
		f := stack[n]
		if f.lo >= hi || m.t[f.node] < v {
			continue
		}
		if f.width == 1 {
			out = append(out, f.lo)
			continue
		}
		half := f.width / 2
		stack[n] = frame{2*f.node + 1, f.lo + half, half} // right, taken after the left
		stack[n+1] = frame{2 * f.node, f.lo, half}
		n += 2
	}
	return out
}
