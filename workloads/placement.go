package workloads

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/redline-dev/redline/workloads/client"
)

// placement gives each key index of a workload a hash tag chosen by slot,
// so that key i lives on primary i mod P (primaries ordered by address):
// every primary holds its share of every workload's keys, and a fault on
// any of them hits some. Which shards a per-run key prefix lands on would
// otherwise be chance (a partitioned primary holding none of the keys
// proves nothing). The tags are picked once, at Setup, from the slot map
// then; a migration moves slots and so may move a share, which the
// checkers see (they place keys by the node that served them last).
// Without Setup (unit tests) tag i is name+i, wherever that falls.
type placement struct {
	name string   // tag stem, e.g. "k" or "bank-"
	tags []string // tags[i] for key index i
}

// maxTagTries bounds the search for a tag on a given primary: a primary
// serving one slot in 16384 is found within ~16384 tries on average.
const maxTagTries = 1 << 20

// place picks n tags from the client's slot map.
func (p *placement) place(ctx context.Context, c *client.Client, n int) error {
	prims := c.Addrs()
	slices.Sort(prims)
	if len(prims) == 0 {
		return fmt.Errorf("no primary in the slot map: cannot place keys")
	}
	p.tags = make([]string, n)
	for i := range p.tags {
		want := prims[i%len(prims)]
		found := false
		for j := 0; j < maxTagTries && !found; j++ {
			if j%4096 == 4095 && ctx.Err() != nil {
				return ctx.Err()
			}
			tag := p.name + strconv.Itoa(i) + "." + strconv.Itoa(j)
			if c.Primary(Keyslot(tag)) == want {
				p.tags[i], found = tag, true
			}
		}
		if !found {
			p.tags[i] = p.name + strconv.Itoa(i)
		}
	}
	return nil
}

// tag is key index i's hash tag, with its braces.
func (p *placement) tag(i int) string {
	if i < len(p.tags) && p.tags[i] != "" {
		return "{" + p.tags[i] + "}"
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
