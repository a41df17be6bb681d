// Package ttl is the ttl workload: keys and hash fields with expiries,
// checked against the deadlines the server acknowledged. It brings
// everything of its own: the workload and its client-library form, its
// ops' names and values (ops.go), and its checker with its figures and
// their explanations (checker.go, figures.go).
package ttl

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/workloads"
	"github.com/redline-dev/redline/workloads/client"
)

// ttl: keys with expiries, and hash fields with expiries where the server
// has Redis 7.4's hash-field expiration, checked against the deadlines the
// server acknowledged. Each worker owns a few keys (its number in the
// key: one writer per key, so its observations follow one another and
// the checker can compare them) and sets them with a unique value and
// often a ttl (SET k v PX ttl), moves their expiry (PEXPIRE), removes it
// (PERSIST) and reads value and PTTL together (one script). A short ttl
// (50 ms - 1.5 s) makes keys expire while the run goes on. On a server
// with HPEXPIRE, HPERSIST and HPTTL (found by COMMAND INFO in an init op,
// the probe, recorded in the history) half of the ops go to a hash field
// the same way (HSET then HPEXPIRE in one script); without them the
// hash-field part is not applicable, said by the checker, never faked.
// Once traffic has ended each key is read and deleted in one script (the
// final), so that no key expires while the end phase compares replicas
// with their primaries.
type ttl struct {
	workloads.Base
	keys       int
	place      *workloads.Placement
	hashFields atomic.Bool
	mu         sync.Mutex
	workers    map[int]bool // workers that made a generator: their keys get a final
}

const (
	ttlKeys  = 2
	ttlField = "f"
)

// The scripts: one command per op, the same for redline's client and a
// library's. A read returns {value or nil, PTTL}; the final reads, then
// deletes. A hash set writes the field and sets (ARGV[3] > 0) or removes
// its expiry, answering HPEXPIRE's or HPERSIST's code for the field.
const (
	ttlReadScript      = `return {redis.call('get', KEYS[1]), redis.call('pttl', KEYS[1])}`
	ttlFinalScript     = `local r = {redis.call('get', KEYS[1]), redis.call('pttl', KEYS[1])} redis.call('del', KEYS[1]) return r`
	ttlHashReadScript  = `return {redis.call('hget', KEYS[1], ARGV[1]), redis.call('hpttl', KEYS[1], 'FIELDS', 1, ARGV[1])[1]}`
	ttlHashFinalScript = `local r = {redis.call('hget', KEYS[1], ARGV[1]), redis.call('hpttl', KEYS[1], 'FIELDS', 1, ARGV[1])[1]} redis.call('del', KEYS[1]) return r`
	ttlHashSetScript   = `redis.call('hset', KEYS[1], ARGV[1], ARGV[2]) if tonumber(ARGV[3]) > 0 then return redis.call('hpexpire', KEYS[1], ARGV[3], 'FIELDS', 1, ARGV[1])[1] end return redis.call('hpersist', KEYS[1], 'FIELDS', 1, ARGV[1])[1]`
)

// ttlHashCommands are what hash-field expiration needs of a server.
var ttlHashCommands = []string{"HPEXPIRE", "HPERSIST", "HPTTL"}

func init() { workloads.Register("ttl", New) }

// New builds the ttl workload.
func New(cfg workloads.Config) workloads.Workload {
	return &ttl{Base: workloads.NewBase("ttl", cfg), keys: workloads.KeyCount(cfg.Keys, ttlKeys, 0), place: workloads.NewPlacement("t"), workers: map[int]bool{}}
}

// key is worker's key i (k: a string, h: a hash), with the tag of slot i.
func (w *ttl) key(worker int, kind string, i int) string {
	return fmt.Sprintf("%sw%d:%s%d%s", w.KeyPrefix(), worker, kind, i, w.place.Tag(i))
}

func (w *ttl) Setup(ctx context.Context, c *client.Client) error {
	w.keys = workloads.KeyCount(w.Config().Keys, ttlKeys, len(c.Addrs()))
	return w.place.Place(c, w.keys)
}

// InitOps: the probe, which finds whether the server has hash-field
// expiration (COMMAND INFO) and says so in the history.
func (w *ttl) InitOps() []history.Op {
	return []history.Op{{F: string(Probe), Key: w.KeyPrefix() + "probe" + w.place.Tag(0)}}
}

// FinalOps read and delete every key a worker used.
func (w *ttl) FinalOps() []history.Op {
	w.mu.Lock()
	workers := make([]int, 0, len(w.workers))
	for p := range w.workers {
		workers = append(workers, p)
	}
	w.mu.Unlock()
	var ops []history.Op
	for _, p := range workers {
		for i := 0; i < w.keys; i++ {
			ops = append(ops, history.Op{F: string(Final), Key: w.key(p, "k", i)})
			if w.hashFields.Load() {
				op := history.Op{F: string(Final), Key: w.key(p, "h", i)}
				op.SetValue(Value{Field: ttlField})
				ops = append(ops, op)
			}
		}
	}
	return ops
}

// Checkers: the deadlines.
func (w *ttl) Checkers(opts workloads.CheckOptions) []checker.Checker {
	return w.WithMeasures(opts, Checker(w.Scope(opts, "ttl")))
}

type ttlGen struct {
	w      *ttl
	rng    *rand.Rand
	worker int
	n      int
}

func (w *ttl) Generator(worker int, seed int64) workloads.Generator {
	w.mu.Lock()
	w.workers[worker] = true
	w.mu.Unlock()
	return &ttlGen{w: w, rng: workloads.Seeded(seed, worker), worker: worker}
}

// ttlMs draws a ttl: most short enough to expire during the run.
func (g *ttlGen) ttlMs() int64 { return int64(50 + g.rng.IntN(1451)) }

func (g *ttlGen) Next() history.Op {
	i := g.rng.IntN(g.w.keys)
	var v Value
	op := history.Op{Key: g.w.key(g.worker, "k", i)}
	if g.w.hashFields.Load() && g.rng.IntN(2) == 0 {
		op.Key, v.Field = g.w.key(g.worker, "h", i), ttlField
	}
	switch r := g.rng.IntN(100); {
	case r < 25:
		g.n++
		op.F, v.Value = string(Set), fmt.Sprintf("w%d-%d", g.worker, g.n)
		if g.rng.IntN(10) > 0 {
			v.TTLms = g.ttlMs()
		}
	case r < 40:
		op.F, v.TTLms = string(PExpire), g.ttlMs()
	case r < 48:
		op.F = string(Persist)
	default:
		op.F = string(checker.OpRead)
	}
	op.SetValue(v)
	return op
}

func (w *ttl) Invoke(ctx context.Context, c workloads.Conn, inv history.Op) history.Op {
	if inv.Name() == Probe {
		return w.probe(ctx, c, inv)
	}
	if inv.Name() == Final {
		var v Value
		_ = inv.DecodeValue(&v)
		args := []any{"eval", ttlFinalScript, 1, inv.Key}
		if v.Field != "" {
			args = []any{"eval", ttlHashFinalScript, 1, inv.Key, v.Field}
		}
		return w.send(ctx, c, inv, v, args, true)
	}
	lop, err := w.LibCommand(inv)
	if err != nil {
		return workloads.UnknownOp(inv, err.Error())
	}
	var v Value
	_ = inv.DecodeValue(&v)
	args := make([]any, len(lop.Args))
	for i, a := range lop.Args {
		args[i] = a
	}
	return w.send(ctx, c, inv, v, args, inv.Name() != checker.OpRead)
}

// send runs one command (a write with the run's WAIT) and decodes its
// reply as a library's would be.
func (w *ttl) send(ctx context.Context, c workloads.Conn, inv history.Op, v Value, args []any, isWrite bool) history.Op {
	var cmd *redis.Cmd
	build := func(ctx context.Context) []redis.Cmder {
		cmd = redis.NewCmd(ctx, args...)
		return []redis.Cmder{cmd}
	}
	var out history.Op
	if isWrite {
		out, _ = workloads.Write(ctx, c, w.Config(), inv, build)
	} else {
		out = workloads.Complete(inv, c.Do(ctx, client.Request{Slot: workloads.Keyslot(inv.Key), Build: build}))
	}
	if out.Type != history.OK {
		return out
	}
	val := cmd.Val()
	if cmd.Err() == redis.Nil {
		val = nil
	}
	setTTLReply(&out, inv.Name(), v, val)
	return out
}

// setTTLReply decodes a ttl op's reply into its completion's value; a
// reply that cannot be what the command answers is kept raw (a JSON
// string) for the checker to flag.
func setTTLReply(out *history.Op, f history.OpName, v Value, reply any) {
	switch f {
	case Set:
		out.SetValue(v)
		return
	case PExpire, Persist:
		// PEXPIRE / PERSIST answer an integer; HPEXPIRE / HPERSIST a
		// list of one per field.
		if l, ok := reply.([]any); ok && len(l) == 1 {
			reply = l[0]
		}
		if n, ok := workloads.ReplyInt(reply); ok {
			v.Reply = &n
			out.SetValue(v)
			return
		}
	case checker.OpRead, Final:
		if l, ok := reply.([]any); ok && len(l) == 2 {
			n, okN := workloads.ReplyInt(l[1])
			switch got := l[0].(type) {
			case nil:
				if okN {
					v.PTTL = &n
					out.SetValue(v)
					return
				}
			case string:
				if okN {
					v.Got, v.PTTL = &got, &n
					out.SetValue(v)
					return
				}
			}
		}
	}
	out.SetValue(fmt.Sprint(reply))
}

// LibReply decodes a library's reply as send does.
func (w *ttl) LibReply(inv history.Op, r workloads.LibReply, out *history.Op) {
	var v Value
	_ = inv.DecodeValue(&v)
	setTTLReply(out, inv.Name(), v, r.Reply)
}

// probe asks the key's primary whether it has hash-field expiration.
func (w *ttl) probe(ctx context.Context, c workloads.Conn, inv history.Op) history.Op {
	var cmd *redis.SliceCmd
	r := c.Do(ctx, client.Request{Slot: workloads.Keyslot(inv.Key), Build: func(ctx context.Context) []redis.Cmder {
		args := []any{"command", "info"}
		for _, name := range ttlHashCommands {
			args = append(args, strings.ToLower(name))
		}
		cmd = redis.NewSliceCmd(ctx, args...)
		return []redis.Cmder{cmd}
	}})
	out := workloads.Complete(inv, r)
	if out.Type != history.OK {
		return out
	}
	infos := cmd.Val()
	if len(infos) != len(ttlHashCommands) {
		out.SetValue(fmt.Sprint(infos)) // garbage: the checker flags it
		return out
	}
	var missing []string
	for i, info := range infos {
		if info == nil {
			missing = append(missing, ttlHashCommands[i])
		}
	}
	has := len(missing) == 0
	w.hashFields.Store(has)
	out.SetValue(Value{HashFieldExpiry: &has, Missing: missing})
	return out
}

// LibCommand is the one command of a ttl op, for a client library and for
// Invoke alike (its reads and hash sets one script each); the probe and
// the finals run on redline's own client, as every settled op does.
func (w *ttl) LibCommand(inv history.Op) (workloads.LibOp, error) {
	var v Value
	if err := inv.DecodeValue(&v); err != nil && inv.Name() != checker.OpRead && inv.Name() != Persist {
		return workloads.LibOp{}, fmt.Errorf("malformed ttl op %s", inv.Value)
	}
	k := inv.Key
	ms := strconv.FormatInt(v.TTLms, 10)
	hash := v.Field != ""
	switch {
	case inv.Name() == Set && hash:
		return workloads.LibOp{Args: []string{"EVAL", ttlHashSetScript, "1", k, v.Field, v.Value, ms}, Key: k}, nil
	case inv.Name() == Set && v.TTLms > 0:
		return workloads.LibOp{Args: []string{"SET", k, v.Value, "PX", ms}, Key: k}, nil
	case inv.Name() == Set:
		return workloads.LibOp{Args: []string{"SET", k, v.Value}, Key: k}, nil
	case inv.Name() == PExpire && hash:
		return workloads.LibOp{Args: []string{"HPEXPIRE", k, ms, "FIELDS", "1", v.Field}, Key: k}, nil
	case inv.Name() == PExpire:
		return workloads.LibOp{Args: []string{"PEXPIRE", k, ms}, Key: k}, nil
	case inv.Name() == Persist && hash:
		return workloads.LibOp{Args: []string{"HPERSIST", k, "FIELDS", "1", v.Field}, Key: k}, nil
	case inv.Name() == Persist:
		return workloads.LibOp{Args: []string{"PERSIST", k}, Key: k}, nil
	case inv.Name() == checker.OpRead && hash:
		return workloads.LibOp{Args: []string{"EVAL", ttlHashReadScript, "1", k, v.Field}, Key: k}, nil
	case inv.Name() == checker.OpRead:
		return workloads.LibOp{Args: []string{"EVAL", ttlReadScript, "1", k}, Key: k}, nil
	}
	return workloads.LibOp{}, fmt.Errorf("op %s of workload ttl has no single-command form (it runs on redline's own client)", inv.F)
}
