package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redline-dev/redline/workloads/client"
)

const numSlots = 16384

// router maps slots to node numbers without a lock on the load path: a
// slot's owner is one atomic word, addresses are an append-only list. A
// MOVED updates one slot at once; a refresh (CLUSTER SLOTS through
// workloads/client) rewrites all of them in the background.
type router struct {
	topo *client.Client

	slots [numSlots]atomic.Uint32
	mu    sync.Mutex
	addrs atomic.Pointer[[]string] // node number -> address, append-only

	refreshing  atomic.Bool
	lastRefresh atomic.Int64 // unix ns
	refreshes   atomic.Int64
}

func newRouter(ctx context.Context, topo *client.Client) (*router, error) {
	r := &router{topo: topo}
	empty := []string{}
	r.addrs.Store(&empty)
	if err := r.refresh(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// node returns the number of addr, adding it on first sight.
func (r *router) node(addr string) uint32 {
	for i, a := range *r.addrs.Load() {
		if a == addr {
			return uint32(i)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	cur := *r.addrs.Load()
	for i, a := range cur {
		if a == addr {
			return uint32(i)
		}
	}
	next := append(append([]string(nil), cur...), addr)
	r.addrs.Store(&next)
	return uint32(len(next) - 1)
}

func (r *router) addr(n uint32) string { return (*r.addrs.Load())[n] }

func (r *router) primary(slot int) uint32 { return r.slots[slot].Load() }

func (r *router) setSlot(slot int, addr string) { r.slots[slot].Store(r.node(addr)) }

func (r *router) refresh(ctx context.Context) error {
	if err := r.topo.Refresh(ctx); err != nil {
		return err
	}
	for s := 0; s < numSlots; s++ {
		r.slots[s].Store(r.node(r.topo.Primary(s)))
	}
	r.lastRefresh.Store(time.Now().UnixNano())
	r.refreshes.Add(1)
	return nil
}

// refreshSoon reloads the slot map in the background, at most every
// 100 ms: a storm of MOVED or dead connections asks for one refresh.
func (r *router) refreshSoon(timeout time.Duration) {
	if time.Now().UnixNano()-r.lastRefresh.Load() < int64(100*time.Millisecond) || !r.refreshing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer r.refreshing.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), 5*timeout)
		defer cancel()
		if r.refresh(ctx) != nil {
			r.lastRefresh.Store(time.Now().UnixNano())
		}
	}()
}

// shardMap numbers the shards as they were at the start (each initial
// primary's slots are one shard), so availability gaps are reported per
// shard even after failovers moved the primary elsewhere.
func (r *router) shardMap() (slotShard []uint16, names []string) {
	slotShard = make([]uint16, numSlots)
	byNode := map[uint32]uint16{}
	for s := 0; s < numSlots; s++ {
		n := r.primary(s)
		id, ok := byNode[n]
		if !ok {
			id = uint16(len(names))
			byNode[n] = id
			names = append(names, r.addr(n))
		}
		slotShard[s] = id
	}
	return slotShard, names
}
