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

// incrScript adds ARGV[1] to a counter and returns the new value.
const incrScript = `return redis.call('incrby', KEYS[1], ARGV[1])`

// script: counter increments through a Lua script called by its SHA only,
// as an application that loads its scripts once at start does: SCRIPT LOAD
// on every primary first (recorded as ops of f "load" with the node that
// answered), then EVALSHA, never EVAL. A NOSCRIPT reply is recorded as it
// is (fail: the script did not run) and the client loads the script again
// on that node (recorded as a load), as a client library does. The counter
// checker counts lost increments; checker.Script says what each NOSCRIPT
// means (a promoted replica never got SCRIPT LOAD on Redis 7.0; a node
// that had it and lost it without a restart is an anomaly).
type script struct {
	base
	keys   int
	place  placement
	script *redis.Script
}

const scriptKeys = 5

func newScript(cfg Config) Workload {
	return &script{base: newBase("script", cfg), keys: keyCount(cfg.Keys, scriptKeys, 0), place: placement{name: "s"},
		script: redis.NewScript(incrScript)}
}

func (w *script) key(i int) string { return w.prefix + strconv.Itoa(i) + w.place.tag(0, i) }

// OwnClientOnly: the workload tests the script cache itself.
func (w *script) OwnClientOnly() string {
	return "SCRIPT LOAD on every primary and EVALSHA by SHA only"
}

// Checkers: the counter's bounds and lost increments, RPO, and what the
// NOSCRIPT replies mean.
func (w *script) Checkers(opts CheckOptions) []checker.Checker {
	return w.checkers(opts, checker.Counter(w.aspect(opts, "counter")), w.rpo(opts, "counter"), w.defaultFailover(opts, "counter"),
		checker.Script(w.aspect(opts, "script")))
}

// Setup places the keys on every primary (key i on primary i mod P).
func (w *script) Setup(ctx context.Context, c *client.Client) error {
	w.keys = keyCount(w.cfg.Keys, scriptKeys, len(c.Addrs()))
	return w.place.place(c, w.keys)
}

// InitOps load the script on the primary of every key, so every primary
// has it (recorded: the checker knows which nodes acknowledged it).
func (w *script) InitOps() []history.Op {
	ops := make([]history.Op, 0, w.keys)
	for i := 0; i < w.keys; i++ {
		op := history.Op{F: checker.ScriptLoad, Key: w.key(i)}
		op.SetValue(incrScript) // the body sent: checker.Script checks the SHA answered against it
		ops = append(ops, op)
	}
	return ops
}

type scriptGen struct {
	w   *script
	rng *rand.Rand
}

func (w *script) Generator(worker int, seed int64) Generator {
	return &scriptGen{w: w, rng: seeded(seed, worker)}
}

func (g *scriptGen) Next() history.Op {
	op := history.Op{Key: g.w.key(g.rng.IntN(g.w.keys))}
	switch r := g.rng.IntN(20); {
	case r == 0:
		op.F = string(checker.OpRead)
	default:
		op.F = string(checker.OpAdd)
		op.SetValue(1 + g.rng.IntN(5))
	}
	return op
}

func (w *script) Invoke(ctx context.Context, c Conn, inv history.Op) history.Op {
	switch inv.Name() {
	case checker.OpRead:
		return readInt(ctx, c, inv)
	case checker.ScriptLoad:
		return w.load(ctx, c, inv)
	case checker.OpAdd:
		v, _ := inv.Int()
		out, r := write(ctx, c, w.cfg, inv, func(ctx context.Context) []redis.Cmder {
			return []redis.Cmder{redis.NewCmd(ctx, "evalsha", w.script.Hash(), 1, inv.Key, v)}
		})
		if out.Type == history.Fail && redis.HasErrorPrefix(r.Err, "NOSCRIPT") {
			// Load it again where it was missing, as a client does; the
			// load is not an op of the history (the checker sees the
			// NOSCRIPT, which is what matters).
			w.load(ctx, c, history.Op{F: checker.ScriptLoad, Key: inv.Key})
			return out
		}
		return out
	}
	return unknownOp(inv, "unknown op "+inv.F)
}

// load sends SCRIPT LOAD of the script body to the primary of inv's key.
func (w *script) load(ctx context.Context, c Conn, inv history.Op) history.Op {
	var cmd *redis.StringCmd
	r := c.Do(ctx, client.Request{Slot: Keyslot(inv.Key), Build: func(ctx context.Context) []redis.Cmder {
		cmd = redis.NewStringCmd(ctx, "script", "load", incrScript)
		return []redis.Cmder{cmd}
	}})
	out := complete(inv, r)
	if out.Type == history.OK {
		// The SHA answered, whatever it is: checker.Script holds it to
		// the SHA1 of the body sent (the invocation's value).
		out.SetValue(cmd.Val())
	}
	return out
}

// FinalOps read every key once after healing.
func (w *script) FinalOps() []history.Op {
	ops := make([]history.Op, 0, w.keys)
	for i := 0; i < w.keys; i++ {
		ops = append(ops, history.Op{F: string(checker.OpRead), Key: w.key(i)})
	}
	return ops
}
