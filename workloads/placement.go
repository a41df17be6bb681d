package workloads

import (
	"fmt"
	"slices"
	"strconv"
	"sync"
)

// slotMap is what placement needs of a client: the primaries and who
// serves a slot (workloads/client.Client has both).
type slotMap interface {
	Addrs() []string
	Primary(slot int) string
}

// placement gives each key index of a workload a hash tag chosen by slot,
// so that key i lives on primary i mod P (primaries ordered by address):
// every primary holds its share of every workload's keys, and a fault on
// any of them hits some. Which shards a per-run key prefix lands on would
// otherwise be chance (a partitioned primary holding none of the keys
// proves nothing).
//
// Tags are chosen per key generation from the client's slot map at the
// time the generation is first used, keeping a previous tag that still
// lands on its primary: workloads whose keys rotate (register, set, list
// append) follow migrations and failovers; fixed keys (counter, bank) keep
// the placement of the run's start. Without Setup (unit tests) tag i is
// name+i, wherever that falls.
type placement struct {
	name string // tag stem, e.g. "c" or "bank-"

	mu   sync.Mutex
	m    slotMap // nil until Setup
	n    int
	gens map[int64][]string // tags per generation
	last int64              // latest generation placed
}

// maxTagTries bounds the search for a tag on a given primary: a primary
// serving one slot in 16384 is found within ~16384 tries on average.
const maxTagTries = 1 << 20

// place sets the slot map and the number of keys, and places generation 0.
func (p *placement) place(m slotMap, n int) error {
	if len(m.Addrs()) == 0 {
		return fmt.Errorf("no primary in the slot map: cannot place keys")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.m, p.n, p.last = m, n, 0
	p.gens = map[int64][]string{0: p.choose(nil)}
	return nil
}

// choose picks n tags for the current slot map, keeping each tag of prev
// that still lands on the primary it should.
func (p *placement) choose(prev []string) []string {
	prims := p.m.Addrs()
	slices.Sort(prims)
	tags := make([]string, p.n)
	if len(prims) == 0 {
		return prev
	}
	for i := range tags {
		want := prims[i%len(prims)]
		if i < len(prev) && p.m.Primary(Keyslot(prev[i])) == want {
			tags[i] = prev[i]
			continue
		}
		tags[i] = p.name + strconv.Itoa(i)
		for j := 0; j < maxTagTries; j++ {
			tag := p.name + strconv.Itoa(i) + "." + strconv.Itoa(j)
			if p.m.Primary(Keyslot(tag)) == want {
				tags[i] = tag
				break
			}
		}
	}
	return tags
}

// tag is key index i's hash tag, with its braces, in generation gen.
func (p *placement) tag(gen int64, i int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	tags, ok := p.gens[gen]
	if !ok && p.m != nil {
		tags = p.choose(p.gens[p.last])
		p.gens[gen] = tags
		p.last = max(p.last, gen)
	}
	if i < len(tags) {
		return "{" + tags[i] + "}"
	}
	return "{" + p.name + strconv.Itoa(i) + "}"
}

// keyCount is the number of keys to use: the one configured, else the
// workload's default raised to one per primary.
func keyCount(configured, def, primaries int) int {
	if configured > 0 {
		return configured
	}
	return max(def, primaries)
}
