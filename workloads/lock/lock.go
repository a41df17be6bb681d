// Package lock is the lock workload: the Redlock debate measured on one
// cluster. It brings everything of its own: the workload (the generator
// and the client code), its ops' names and values (ops.go), and the
// checker that judges them with its figures and their explanations
// (checker.go, figures.go).
package lock

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
	"github.com/redline-dev/redline/workloads"
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
// release still goes out: compare-and-delete must answer 0). Checker
// judges mutual exclusion, fences and releases; Redis Cluster replicates
// asynchronously, so a lock acknowledged by a primary that fails over
// before its replica has it is lost, and a second client takes it.
type lock struct {
	workloads.Base
	keys    int
	place   *workloads.Placement
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

func init() { workloads.Register("lock", New) }

// New builds the lock workload.
func New(cfg workloads.Config) workloads.Workload {
	return &lock{Base: workloads.NewBase("lock", cfg), keys: workloads.KeyCount(cfg.Keys, lockKeys, 0), place: workloads.NewPlacement("l"),
		acquire: redis.NewScript(acquireScript), release: redis.NewScript(releaseScript)}
}

// key i carries its tag: on primary i mod P; its fence key shares the tag.
func (w *lock) key(i int) string      { return w.KeyPrefix() + strconv.Itoa(i) + w.place.Tag(i) }
func fenceKey(lockKey string) string  { return lockKey + ":fence" }
func (w *lock) InitOps() []history.Op { return nil }
func (w *lock) Setup(ctx context.Context, c *client.Client) error {
	w.keys = workloads.KeyCount(w.Config().Keys, lockKeys, len(c.Addrs()))
	return w.place.Place(c, w.keys)
}

// FinalOps clear every lock once traffic has ended (DEL: no worker holds
// one any more), so that no lock expires while the end phase compares
// replicas with their primaries (an expiry between the two reads would
// look like a divergence). The fence keys stay.
func (w *lock) FinalOps() []history.Op {
	ops := make([]history.Op, 0, w.keys)
	for i := 0; i < w.keys; i++ {
		ops = append(ops, history.Op{F: string(Clear), Key: w.key(i)})
	}
	return ops
}

// OwnClientOnly: a release is sent only after the hold, by the workload's code.
func (w *lock) OwnClientOnly() string {
	return "its release waits out its hold in redline's code before it is sent"
}

// Checkers: mutual exclusion, fences and releases.
func (w *lock) Checkers(opts workloads.CheckOptions) []checker.Checker {
	return w.WithMeasures(opts, Checker(w.Scope(opts, "lock")))
}

type lockGen struct {
	w      *lock
	rng    *rand.Rand
	worker int
	n      int
	// next is the release of the last acquire, when due.
	next *history.Op
}

func (w *lock) Generator(worker int, seed int64) workloads.Generator {
	return &lockGen{w: w, rng: workloads.Seeded(seed, worker), worker: worker}
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
	acq := history.Op{F: string(Acquire), Key: key}
	acq.SetValue(Value{Token: token, TTLms: ttl.Milliseconds()})
	rel := history.Op{F: string(Release), Key: key}
	rel.SetValue(Value{Token: token, HoldMs: hold.Milliseconds()})
	g.next = &rel
	return acq
}

func (w *lock) Invoke(ctx context.Context, c workloads.Conn, inv history.Op) history.Op {
	if inv.Name() == Clear {
		out, _ := workloads.Write(ctx, c, w.Config(), inv, func(ctx context.Context) []redis.Cmder {
			return []redis.Cmder{redis.NewIntCmd(ctx, "del", inv.Key)}
		})
		return out
	}
	var v Value
	if err := inv.DecodeValue(&v); err != nil || v.Token == "" {
		return workloads.UnknownOp(inv, "malformed lock op")
	}
	keys := []string{inv.Key, fenceKey(inv.Key)}
	switch inv.Name() {
	case Acquire:
		out, cmd := workloads.EvalScript(ctx, c, w.Config(), inv, w.acquire, acquireScript, keys, v.Token, v.TTLms)
		if out.Type == history.Fail {
			w.refused.Store(v.Token, true) // certainly not acquired
		}
		if out.Type != history.OK {
			return out
		}
		switch n, err := cmd.Int64(); {
		case err == nil && n == 0:
			out.Type = history.Fail
			out.SetError(Held)
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
	case Release:
		if _, refused := w.refused.LoadAndDelete(v.Token); !refused {
			t := time.NewTimer(time.Duration(v.HoldMs) * time.Millisecond)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return history.Op{Type: history.Fail, Value: inv.Value, Ext: history.NewExt(history.Ext{Error: NotSent})}
			}
		}
		out, cmd := workloads.EvalScript(ctx, c, w.Config(), inv, w.release, releaseScript, keys, v.Token)
		workloads.ScriptOutcome(&out, cmd, NotOwner)
		return out
	}
	return workloads.UnknownOp(inv, "unknown op "+inv.F)
}
