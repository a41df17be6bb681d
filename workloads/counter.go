package workloads

import (
	"context"
	"math/rand/v2"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/workloads/client"
)

// counter: INCRBY of small deltas on a few keys with occasional reads; the
// checker bounds every read and counts the acknowledged increments missing
// from the final value.
type counter struct {
	base
	keys  int
	place placement
}

const counterKeys = 5

func newCounter(cfg Config) Workload {
	return &counter{base: newBase("counter", cfg), keys: keyCount(cfg.Keys, counterKeys, 0), place: placement{name: "c"}}
}

func (w *counter) key(i int) string      { return w.prefix + strconv.Itoa(i) + w.place.tag(0, i) }
func (w *counter) InitOps() []history.Op { return nil }

// Checkers: bounds, lost increments and their WAIT split; an RPO bound.
func (w *counter) Checkers(opts CheckOptions) []checker.Checker {
	return w.checkers(opts, checker.Counter(w.aspect(opts, "counter")), w.rpo(opts, "counter"), w.defaultFailover(opts, "counter"),
		checker.WaitProbeOf(checker.ProbeAtLeast, opts.Replicas, w.aspect(opts, "wait-probe")))
}

// Setup places the keys on every primary.
func (w *counter) Setup(ctx context.Context, c *client.Client) error {
	w.keys = keyCount(w.cfg.Keys, counterKeys, len(c.Addrs()))
	return w.place.place(c, w.keys)
}

type counterGen struct {
	w   *counter
	rng *rand.Rand
}

func (w *counter) Generator(worker int, seed int64) Generator {
	return &counterGen{w: w, rng: seeded(seed, worker)}
}

func (g *counterGen) Next() history.Op {
	op := history.Op{Key: g.w.key(g.rng.IntN(g.w.keys))}
	if g.rng.IntN(10) == 0 {
		op.F = string(checker.OpRead)
	} else {
		op.F = string(checker.OpAdd)
		op.SetValue(1 + g.rng.IntN(5))
	}
	return op
}

func (w *counter) Invoke(ctx context.Context, c Conn, inv history.Op) history.Op {
	switch inv.Name() {
	case checker.OpRead:
		return readInt(ctx, c, inv)
	case checker.OpAdd:
		d, _ := inv.Int()
		var incr *redis.IntCmd
		out, _ := writeProbed(ctx, c, w.cfg, inv, func(ctx context.Context) []redis.Cmder {
			incr = redis.NewIntCmd(ctx, "incrby", inv.Key, d)
			return []redis.Cmder{incr}
		}, func(ctx context.Context) redis.Cmder {
			// A replica that has this increment holds at least its
			// result (every delta is positive).
			return redis.NewStringCmd(ctx, "get", inv.Key)
		}, func() string { return strconv.FormatInt(incr.Val(), 10) })
		return out
	}
	return unknownOp(inv, "unknown op "+inv.F)
}

func (w *counter) FinalOps() []history.Op {
	ops := make([]history.Op, w.keys)
	for i := range ops {
		ops[i] = history.Op{F: string(checker.OpRead), Key: w.key(i)}
	}
	return ops
}

// readInt GETs an integer key; a missing key reads as null. A reply that is
// no integer within int64 is garbage: it is recorded raw, as a JSON string,
// on an ok completion, for the checkers to flag (never as fail, which would
// say the read did not happen, and never parsed as a float, which would
// collapse distinct values).
func readInt(ctx context.Context, c Conn, inv history.Op) history.Op {
	var get *redis.StringCmd
	r := c.Do(ctx, client.Request{Slot: Keyslot(inv.Key), Build: func(ctx context.Context) []redis.Cmder {
		get = redis.NewStringCmd(ctx, "get", inv.Key)
		return []redis.Cmder{get}
	}})
	out := complete(inv, r)
	if out.Type != history.OK {
		return out
	}
	v, err := get.Result()
	if err == redis.Nil {
		out.Value = []byte("null")
		return out
	}
	out.SetValue(intOrRaw(v))
	return out
}

// intOrRaw is an integer reply as an int64, or the raw reply as a string
// when it is no integer within int64 (garbage the checkers flag).
func intOrRaw(s string) any {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n
	}
	return s
}

// LibCommand: a counter op as one command for a client library.
func (w *counter) LibCommand(inv history.Op) (LibOp, error) {
	k := inv.Key
	switch inv.Name() {
	case checker.OpRead:
		return LibOp{Args: []string{"GET", k}, Key: k, ReadOnly: true}, nil
	case checker.OpAdd:
		d, _ := inv.Int()
		return LibOp{Args: []string{"INCRBY", k, strconv.FormatInt(d, 10)}, Key: k}, nil
	}
	return LibOp{}, libUnknownOp(w, inv)
}

// LibReply decodes a read as readInt does.
func (w *counter) LibReply(inv history.Op, r LibReply, out *history.Op) {
	if inv.Name() != checker.OpRead {
		out.Value = inv.Value
		return
	}
	out.SetReplica(r.Replica)
	libIntRead(out, r.Reply)
}
