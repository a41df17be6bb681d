package workloads

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/workloads/client"
)

// set: SADD of unique elements and SMEMBERS reads, checked like Jepsen's
// set-full. Keys rotate: each worker moves to a fresh generation of keys
// every setGeneration ops, so sets (and the reads of them recorded in the
// history) stay small however long the run is.
type set struct {
	base
	keys   int
	place  placement
	maxGen atomic.Int64
}

const (
	setGeneration = 200
	setKeys       = 5
)

func newSet(cfg Config) Workload {
	return &set{base: newBase("set", cfg), keys: keyCount(cfg.Keys, setKeys, 0), place: placement{name: "s"}}
}

// Checkers: Jepsen's set-full and the exact RPO of lost elements.
func (w *set) Checkers(opts CheckOptions) []checker.Checker {
	return w.checkers(opts, checker.Set(w.aspect(opts, "set")), w.rpo(opts, "set"), w.defaultFailover(opts, "set"),
		checker.WaitProbeOf(checker.ProbeMember, opts.Replicas, w.aspect(opts, "wait-probe")))
}

// key i of a generation carries its tag of that generation: on primary i mod P.
func (w *set) key(gen int64, i int) string {
	return fmt.Sprintf("%s%d:%d%s", w.prefix, gen, i, w.place.tag(gen, i))
}
func (w *set) InitOps() []history.Op { return nil }

// Setup places the keys on every primary.
func (w *set) Setup(ctx context.Context, c *client.Client) error {
	w.keys = keyCount(w.cfg.Keys, setKeys, len(c.Addrs()))
	return w.place.place(c, w.keys)
}

type setGen struct {
	w      *set
	rng    *rand.Rand
	worker int64
	n      int64
}

func (w *set) Generator(worker int, seed int64) Generator {
	return &setGen{w: w, rng: seeded(seed, worker), worker: int64(worker)}
}

func (g *setGen) Next() history.Op {
	gen := g.n / setGeneration
	raiseTo(&g.w.maxGen, gen)
	g.n++
	op := history.Op{Key: g.w.key(gen, g.rng.IntN(g.w.keys))}
	if g.rng.IntN(10) == 0 {
		op.F = string(checker.OpRead)
		return op
	}
	op.F = string(checker.OpAdd)
	// Unique across workers: the worker number in the high bits.
	op.SetValue(g.worker<<32 | g.n)
	return op
}

func (w *set) Invoke(ctx context.Context, c Conn, inv history.Op) history.Op {
	slot := Keyslot(inv.Key)
	switch inv.Name() {
	case checker.OpRead:
		var cmd *redis.StringSliceCmd
		r := c.Do(ctx, client.Request{Slot: slot, Build: func(ctx context.Context) []redis.Cmder {
			cmd = redis.NewStringSliceCmd(ctx, "smembers", inv.Key)
			return []redis.Cmder{cmd}
		}})
		out := complete(inv, r)
		if out.Type != history.OK {
			return out
		}
		out.SetValue(sortedMembers(cmd.Val()))
		return out
	case checker.OpAdd:
		e, _ := inv.Int()
		out, _ := writeProbed(ctx, c, w.cfg, inv, func(ctx context.Context) []redis.Cmder {
			return []redis.Cmder{redis.NewIntCmd(ctx, "sadd", inv.Key, e)}
		}, func(ctx context.Context) redis.Cmder {
			// A replica that has this add answers 1.
			return redis.NewIntCmd(ctx, "sismember", inv.Key, e)
		}, nil)
		return out
	}
	return unknownOp(inv, "unknown op "+inv.F)
}

// sortedMembers orders SMEMBERS' reply: integers ascending, then any member
// that is no integer within int64, raw (garbage the checker flags).
// Duplicates are kept: a set that lists a member twice is garbage too.
func sortedMembers(members []string) []any {
	var ints []int64
	var raw []string
	for _, m := range members {
		if n, err := strconv.ParseInt(m, 10, 64); err == nil {
			ints = append(ints, n)
		} else {
			raw = append(raw, m)
		}
	}
	sort.Slice(ints, func(i, j int) bool { return ints[i] < ints[j] })
	out := make([]any, 0, len(members))
	for _, n := range ints {
		out = append(out, n)
	}
	for _, m := range raw {
		out = append(out, m)
	}
	return out
}

// FinalOps reads every key of every generation used.
func (w *set) FinalOps() []history.Op {
	var ops []history.Op
	for gen := int64(0); gen <= w.maxGen.Load(); gen++ {
		for i := 0; i < w.keys; i++ {
			ops = append(ops, history.Op{F: string(checker.OpRead), Key: w.key(gen, i)})
		}
	}
	return ops
}

// LibCommand: a set op as one command for a client library.
func (w *set) LibCommand(inv history.Op) (LibOp, error) {
	k := inv.Key
	switch inv.Name() {
	case checker.OpRead:
		return LibOp{Args: []string{"SMEMBERS", k}, Key: k, ReadOnly: true}, nil
	case checker.OpAdd:
		e, _ := inv.Int()
		return LibOp{Args: []string{"SADD", k, strconv.FormatInt(e, 10)}, Key: k}, nil
	}
	return LibOp{}, libUnknownOp(w, inv)
}

// LibReply orders a read's members as Invoke does.
func (w *set) LibReply(inv history.Op, r LibReply, out *history.Op) {
	if inv.Name() != checker.OpRead {
		out.Value = inv.Value
		return
	}
	out.SetReplica(r.Replica)
	out.SetValue(setReply(r.Reply))
}

// setReply orders a SMEMBERS reply as the set workload does; a reply that
// is no list is garbage, kept as one raw member.
func setReply(reply any) []any {
	list, ok := reply.([]any)
	if !ok {
		if reply == nil {
			return []any{}
		}
		return []any{fmt.Sprint(reply)}
	}
	members := make([]string, len(list))
	for i, m := range list {
		members[i] = fmt.Sprint(m)
	}
	return sortedMembers(members)
}
