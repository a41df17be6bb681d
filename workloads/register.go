package workloads

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/workloads/client"
)

// casScript swaps a register's value only if it holds the expected one.
// Lua makes the compare and the set one atomic step on the server.
const casScript = `if redis.call('get', KEYS[1]) == ARGV[1] then redis.call('set', KEYS[1], ARGV[2]) return 1 end return 0`

// CASMismatch is the error of a cas whose compare failed: it certainly did
// not write.
const CASMismatch = "cas-mismatch"

// register: reads, writes and compare-and-sets on a few keys holding small
// integers, checked for linearizability per key. As in Jepsen's independent
// keys, each worker moves on to a fresh generation of keys every
// registerGeneration ops: a key's history stays short, which keeps the
// linearizability search cheap however long the run.
type register struct {
	base
	keys   int
	place  placement
	script *redis.Script
	maxGen atomic.Int64
}

const (
	registerGeneration = 1000
	registerKeys       = 20
)

func newRegister(cfg Config) Workload {
	return &register{base: newBase("register", cfg), keys: keyCount(cfg.Keys, registerKeys, 0),
		place: placement{name: "r"}, script: redis.NewScript(casScript)}
}

// Checkers: linearizability per key.
func (w *register) Checkers(opts CheckOptions) []checker.Checker {
	return w.checkers(opts, checker.Linearizable(checker.LinearizableOptions{Scope: w.aspect(opts, "linearizable"), Timeout: opts.Timeout}))
}

// key i of a generation carries its tag of that generation: on primary i mod P.
func (w *register) key(gen int64, i int) string {
	return w.prefix + strconv.FormatInt(gen, 10) + ":" + strconv.Itoa(i) + w.place.tag(gen, i)
}

func (w *register) Setup(ctx context.Context, c *client.Client) error {
	w.keys = keyCount(w.cfg.Keys, registerKeys, len(c.Addrs()))
	if err := w.place.place(c, w.keys); err != nil {
		return err
	}
	// Load the script on every primary so EVALSHA rarely misses; EVAL is
	// used on NOSCRIPT anyway, so this is only an optimisation.
	for _, addr := range c.Addrs() {
		if err := w.script.Load(ctx, c.Node(addr)).Err(); err != nil {
			return fmt.Errorf("register: SCRIPT LOAD on %s: %w", addr, err)
		}
	}
	return nil
}

type registerGen struct {
	w   *register
	rng *rand.Rand
	n   int64
}

func (w *register) Generator(worker int, seed int64) Generator {
	return &registerGen{w: w, rng: seeded(seed, worker)}
}

// Values are drawn from a small range, as in Jepsen, so that compare-and-set
// often succeeds and reads can tell writes apart only through order.
func (g *registerGen) Next() history.Op {
	gen := g.n / registerGeneration
	g.n++
	raiseTo(&g.w.maxGen, gen)
	op := history.Op{Key: g.w.key(gen, g.rng.IntN(g.w.keys))}
	switch r := g.rng.IntN(10); {
	case r < 5:
		op.F = string(checker.OpRead)
	case r < 8:
		op.F = string(checker.OpWrite)
		op.SetValue(g.rng.IntN(5))
	default:
		op.F = string(checker.OpCAS)
		op.SetValue([]int{g.rng.IntN(5), g.rng.IntN(5)})
	}
	return op
}

func (w *register) Invoke(ctx context.Context, c Conn, inv history.Op) history.Op {
	switch inv.Name() {
	case checker.OpRead:
		return readInt(ctx, c, inv)
	case checker.OpWrite:
		v, _ := inv.Int()
		out, _ := write(ctx, c, w.cfg, inv, func(ctx context.Context) []redis.Cmder {
			return []redis.Cmder{redis.NewStatusCmd(ctx, "set", inv.Key, v)}
		})
		return out
	case checker.OpCAS:
		vs, _ := inv.Ints()
		if len(vs) != 2 {
			return unknownOp(inv, "malformed cas value")
		}
		out, cmd := evalScript(ctx, c, w.cfg, inv, w.script, casScript, []string{inv.Key}, vs[0], vs[1])
		scriptOutcome(&out, cmd, CASMismatch)
		return out
	}
	return unknownOp(inv, "unknown op "+inv.F)
}

func (w *register) InitOps() []history.Op { return nil }

// FinalOps reads every key of every generation once after healing.
func (w *register) FinalOps() []history.Op {
	var ops []history.Op
	for gen := int64(0); gen <= w.maxGen.Load(); gen++ {
		for i := 0; i < w.keys; i++ {
			ops = append(ops, history.Op{F: string(checker.OpRead), Key: w.key(gen, i)})
		}
	}
	return ops
}

// LibCommand: a register op as one command for a client library; the cas
// is one EVAL, so that no node needs the script cached.
func (w *register) LibCommand(inv history.Op) (LibOp, error) {
	k := inv.Key
	switch inv.Name() {
	case checker.OpRead:
		return LibOp{Args: []string{"GET", k}, Key: k, ReadOnly: true}, nil
	case checker.OpWrite:
		v, _ := inv.Int()
		return LibOp{Args: []string{"SET", k, strconv.FormatInt(v, 10)}, Key: k}, nil
	case checker.OpCAS:
		vs, ok := inv.Ints()
		if !ok || len(vs) != 2 {
			return LibOp{}, fmt.Errorf("malformed cas value %s", inv.Value)
		}
		return LibOp{Args: []string{"EVAL", casScript, "1", k, strconv.FormatInt(vs[0], 10), strconv.FormatInt(vs[1], 10)}, Key: k}, nil
	}
	return LibOp{}, libUnknownOp(w, inv)
}

// LibReply decodes a read as readInt does and a cas's 1 or 0 as
// scriptOutcome does.
func (w *register) LibReply(inv history.Op, r LibReply, out *history.Op) {
	switch inv.Name() {
	case checker.OpRead:
		out.SetReplica(r.Replica)
		libIntRead(out, r.Reply)
	case checker.OpCAS:
		out.Value = inv.Value
		switch n, ok := replyInt(r.Reply); {
		case ok && n == 1:
		case ok && n == 0:
			out.Type = history.Fail
			out.SetError(CASMismatch)
		default:
			out.SetValue(fmt.Sprint(r.Reply))
		}
	default:
		out.Value = inv.Value
	}
}
