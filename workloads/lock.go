package workloads

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/workloads/client"
)

// acquireScript takes the lock KEYS[1] for token ARGV[1] with a ttl of
// ARGV[2] ms and, only then, draws a fencing token from KEYS[2] (same hash
// tag, so same slot and shard): the lock and its fence are one atomic step
// on one primary. It answers the fence, or 0 when the lock is taken.
const acquireScript = `if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return redis.call('incr', KEYS[2]) end return 0`

// releaseScript deletes the lock only if it still holds the caller's
// token (compare-and-delete): 1 deleted, 0 not the owner.
const releaseScript = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`

// lock: the Redlock debate measured on one cluster. Each worker takes a
// lock (SET key token NX PX ttl, with a fencing token INCR'd in the same
// script), holds it a random time and releases it by compare-and-delete,
// then takes another. Every acquire has a fresh token; the release op
// carries the hold (hold_ms): it is invoked when the hold begins and sent
// once it has passed, so the history says when the holder stopped
// holding. An acquire the workload saw refused is released at once (the
// release still goes out: compare-and-delete must answer 0). checker.Lock
// judges mutual exclusion, fences and releases; Redis Cluster replicates
// asynchronously, so a lock acknowledged by a primary that fails over
// before its replica has it is lost, and a second client takes it.
type lock struct {
	base
	keys    int
	place   placement
	acquire *redis.Script
	release *redis.Script
	// refused: tokens whose acquire certainly failed, so their release
	// does not hold (each deleted by its release).
	refused sync.Map
}

const lockKeys = 3

// The locks' ttls and holds: most holds are short, some long (seconds,
// to outlast a failover) and a few outlive their ttl, so that a release
// after expiry is exercised too.
const (
	lockTTL      = 5 * time.Second
	lockShortTTL = time.Second
)

func newLock(cfg Config) Workload {
	return &lock{base: newBase("lock", cfg), keys: keyCount(cfg.Keys, lockKeys, 0), place: placement{name: "l"},
		acquire: redis.NewScript(acquireScript), release: redis.NewScript(releaseScript)}
}

// key i carries its tag: on primary i mod P; its fence key shares the tag.
func (w *lock) key(i int) string      { return w.prefix + strconv.Itoa(i) + w.place.tag(0, i) }
func fenceKey(lockKey string) string  { return lockKey + ":fence" }
func (w *lock) InitOps() []history.Op { return nil }
func (w *lock) Setup(ctx context.Context, c *client.Client) error {
	w.keys = keyCount(w.cfg.Keys, lockKeys, len(c.Addrs()))
	return w.place.place(c, w.keys)
}

// FinalOps clear every lock once traffic has ended (DEL: no worker holds
// one any more), so that no lock expires while the end phase compares
// replicas with their primaries (an expiry between the two reads would
// look like a divergence). The fence keys stay.
func (w *lock) FinalOps() []history.Op {
	ops := make([]history.Op, 0, w.keys)
	for i := 0; i < w.keys; i++ {
		ops = append(ops, history.Op{F: checker.LockClear, Key: w.key(i)})
	}
	return ops
}

// OwnClientOnly: a release is sent only after the hold, by the workload's code.
func (w *lock) OwnClientOnly() string {
	return "its release waits out its hold in redline's code before it is sent"
}

// Checkers: mutual exclusion, fences and releases.
func (w *lock) Checkers(opts CheckOptions) []checker.Checker {
	return w.checkers(opts, checker.Lock(w.aspect(opts, "lock")))
}

type lockGen struct {
	w      *lock
	rng    *rand.Rand
	worker int
	n      int
	// next is the release of the last acquire, when due.
	next *history.Op
}

func (w *lock) Generator(worker int, seed int64) Generator {
	return &lockGen{w: w, rng: seeded(seed, worker), worker: worker}
}

func (g *lockGen) Next() history.Op {
	if g.next != nil {
		op := *g.next
		g.next = nil
		return op
	}
	g.n++
	ttl, hold := lockTTL, time.Duration(5+g.rng.IntN(46))*time.Millisecond
	switch r := g.rng.IntN(100); {
	case r < 2:
		ttl, hold = lockShortTTL, time.Duration(1200+g.rng.IntN(801))*time.Millisecond
	case r < 10:
		hold = time.Duration(500+g.rng.IntN(3501)) * time.Millisecond
	}
	key := g.w.key(g.rng.IntN(g.w.keys))
	token := fmt.Sprintf("w%d-%d", g.worker, g.n)
	acq := history.Op{F: checker.LockAcquire, Key: key}
	acq.SetValue(checker.LockValue{Token: token, TTLms: ttl.Milliseconds()})
	rel := history.Op{F: checker.LockRelease, Key: key}
	rel.SetValue(checker.LockValue{Token: token, HoldMs: hold.Milliseconds()})
	g.next = &rel
	return acq
}

func (w *lock) Invoke(ctx context.Context, c Conn, inv history.Op) history.Op {
	if inv.F == checker.LockClear {
		out, _ := write(ctx, c, w.cfg, inv, func(ctx context.Context) []redis.Cmder {
			return []redis.Cmder{redis.NewIntCmd(ctx, "del", inv.Key)}
		})
		return out
	}
	var v checker.LockValue
	if err := inv.DecodeValue(&v); err != nil || v.Token == "" {
		return unknownOp(inv, "malformed lock op")
	}
	keys := []string{inv.Key, fenceKey(inv.Key)}
	switch inv.F {
	case checker.LockAcquire:
		out, cmd := evalScript(ctx, c, w.cfg, inv, w.acquire, acquireScript, keys, v.Token, v.TTLms)
		if out.Type == history.Fail {
			w.refused.Store(v.Token, true) // certainly not acquired
		}
		if out.Type != history.OK {
			return out
		}
		switch n, err := cmd.Int64(); {
		case err == nil && n == 0:
			out.Type = history.Fail
			out.SetError(checker.LockHeld)
			w.refused.Store(v.Token, true)
		case err == nil:
			v.Fence = []byte(strconv.FormatInt(n, 10))
			out.SetValue(v)
		default:
			// Garbage: the raw reply as the fence, for the checker to flag.
			v.Fence = []byte(strconv.Quote(fmt.Sprint(cmd.Val())))
			out.SetValue(v)
		}
		return out
	case checker.LockRelease:
		if _, refused := w.refused.LoadAndDelete(v.Token); !refused {
			t := time.NewTimer(time.Duration(v.HoldMs) * time.Millisecond)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return history.Op{Type: history.Fail, Value: inv.Value, Ext: history.NewExt(history.Ext{Error: checker.LockNotSent})}
			}
		}
		out, cmd := evalScript(ctx, c, w.cfg, inv, w.release, releaseScript, keys, v.Token)
		scriptOutcome(&out, cmd, checker.LockNotOwner)
		return out
	}
	return unknownOp(inv, "unknown op "+inv.F)
}
