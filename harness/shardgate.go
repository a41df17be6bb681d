package harness

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redline-dev/redline/history"
)

// slotRouter is what the shard gate needs of a cluster client: the address
// believed to serve a slot now. *client.Client has it; a client adapter
// without it runs ungated (every worker may end up on one dead shard).
type slotRouter interface {
	Primary(slot int) string
}

// shardGate bounds the ops in flight per primary, so that a dead or cut
// off shard holds at most its share of the workers: closed-loop workers
// on random keys otherwise all end up waiting out their timeouts on the one
// shard that does not answer, and the live shards go quiet (issue 23:
// throughput fell to about zero during a kill of one primary). A worker
// whose next op is for a full shard draws another op instead; the op not
// sent is never recorded, so the history's semantics stay as they are (one
// op in flight per process, info retires it).
//
// Shards are addresses as the client routes them now: after a failover
// the new primary has its own share while the dead one's ops time out.
type shardGate struct {
	route slotRouter
	share int // ops in flight per primary

	mu    sync.Mutex
	slots map[string]chan struct{}
	// resting[addr]: until when a shard whose op just failed for want of
	// availability gets no new op. A dead node refuses connections in
	// microseconds: without a rest its share of workers spun on it at
	// 3,000-10,000 failed ops/s (measured here), taking the CPU the live
	// shards' ops needed.
	resting map[string]time.Time
	now     func() time.Time

	// redrawn counts ops drawn and not sent because their shard was full.
	redrawn atomic.Int64
}

// newShardGate gives each primary ceil(workers/primaries) of the workers;
// nil (no gate) when the client cannot route or serves one primary.
func newShardGate(cl any, workers int) *shardGate {
	r, ok := cl.(slotRouter)
	if !ok || workers < 2 {
		return nil
	}
	primaries := map[string]bool{}
	for s := 0; s < 16384; s++ { // every slot of a Redis Cluster
		if a := r.Primary(s); a != "" {
			primaries[a] = true
		}
	}
	if len(primaries) < 2 {
		return nil
	}
	return &shardGate{route: r, share: (workers + len(primaries) - 1) / len(primaries), slots: map[string]chan struct{}{},
		resting: map[string]time.Time{}, now: time.Now}
}

// restAfterFailure is how long a shard gets no new op after one of its ops
// failed or timed out: at most share ops per rest on a dead shard, and an
// outage's end is seen within about this much (the RTO's resolution).
const restAfterFailure = 20 * time.Millisecond

func (g *shardGate) sem(addr string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	ch := g.slots[addr]
	if ch == nil {
		ch = make(chan struct{}, g.share)
		g.slots[addr] = ch
	}
	return ch
}

// shardOf is the address serving op's key ("" for an op without a key:
// not gated).
func (g *shardGate) shardOf(op history.Op) string {
	if op.Key == "" {
		return ""
	}
	return g.route.Primary(history.Keyslot(op.Key))
}

// tryEnter takes a place on addr's shard if one is free and the shard is
// not resting.
func (g *shardGate) tryEnter(addr string) bool {
	g.mu.Lock()
	until, rest := g.resting[addr]
	g.mu.Unlock()
	if rest && g.now().Before(until) {
		return false
	}
	select {
	case g.sem(addr) <- struct{}{}:
		return true
	default:
		return false
	}
}

// leave gives the place back; unavailable (the op failed or timed out for
// want of its shard) rests the shard.
func (g *shardGate) leave(addr string, unavailable bool) {
	if unavailable {
		g.mu.Lock()
		g.resting[addr] = g.now().Add(restAfterFailure)
		g.mu.Unlock()
	}
	<-g.sem(addr)
}

// maxRedraws is how many ops in a row a worker may draw for full shards
// before it pauses for redrawPause: every shard full (every primary down)
// must not spin. It does not wait for a place on one shard: that could be
// the dead one, and the worker would sit out its outage.
const (
	maxRedraws  = 32
	redrawPause = time.Millisecond
)

// next draws the worker's next op and a place on its shard; leave(addr)
// after the op completes. addr is "" when the op is not gated. ok is false
// when ctx ended while waiting.
func (g *shardGate) next(ctx context.Context, gen interface{ Next() history.Op }) (op history.Op, addr string, ok bool) {
	for tries := 0; ; tries++ {
		op = gen.Next()
		addr = g.shardOf(op)
		if addr == "" {
			return op, "", true
		}
		if g.tryEnter(addr) {
			return op, addr, true
		}
		g.redrawn.Add(1)
		if tries >= maxRedraws {
			tries = 0
			t := time.NewTimer(redrawPause)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return op, "", false
			}
		}
	}
}
