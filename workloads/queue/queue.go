// Package queue is the queue workload: two reliable queues per key index
// (a list with a processing list, a stream with a consumer group),
// checked as Jepsen's total queue. It brings everything of its own: the
// workload, its ops' names and values (ops.go), and its checker with its
// figures and their explanations (checker.go, figures.go).
package queue

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

// queue: two reliable queues per key index, checked as Jepsen's
// total-queue. A list queue: LPUSH to enqueue, LMOVE (or BLMOVE, a short
// block) from its tail to a processing list to deliver, LREM from the
// processing list to acknowledge, the pattern Redis documents as the
// reliable queue. A stream queue: XADD to enqueue, XREADGROUP with one
// consumer group to deliver, XACK to acknowledge, and XAUTOCLAIM to take
// over entries another consumer left pending. Each worker is a consumer
// (w<worker>) that acknowledges what it was given before it takes more.
// Messages are unique per run (w<worker>-<n>). Once traffic has ended and
// the cluster has healed, a drain reads each queue whole, without taking
// anything: the list and its processing list; the stream, its group's
// last-delivered id and its pending entries (XPENDING), so the pending
// entries list after a failover is in the history. A queue's keys share
// its hash tag: one slot, one shard.
type queue struct {
	workloads.Base
	keys  int
	place *workloads.Placement
	// toAck: what each consumer was given and has not acknowledged yet,
	// written by Invoke and read by that worker's generator (a worker runs
	// one op at a time).
	mu    sync.Mutex
	toAck map[string][]queueAck
}

type queueAck struct {
	key, kind string
	msg       Msg
}

const (
	queueKeys  = 2
	queueGroup = "redline"
	// queueClaimIdle: XAUTOCLAIM takes entries pending this long, longer
	// than any healthy consumer's gap between a delivery and its ack.
	queueClaimIdle = 2 * time.Second
	// queueBlock is BLMOVE's timeout: short, so an empty queue costs a
	// worker little.
	queueBlock = 100 * time.Millisecond
)

func init() { workloads.Register("queue", New) }

// New builds the queue workload.
func New(cfg workloads.Config) workloads.Workload {
	return &queue{Base: workloads.NewBase("queue", cfg), keys: workloads.KeyCount(cfg.Keys, queueKeys, 0), place: workloads.NewPlacement("q"), toAck: map[string][]queueAck{}}
}

// key is queue i of a kind: l<i> or s<i>, with the tag of slot i.
func (w *queue) key(kind string, i int) string {
	return w.KeyPrefix() + kind[:1] + strconv.Itoa(i) + w.place.Tag(i)
}

// processingKey is a list queue's processing list: the same tag, so the
// same slot (LMOVE and the drain's MULTI need both on one shard).
func processingKey(key string) string { return key + ":processing" }

func (w *queue) InitOps() []history.Op { return nil }

// Setup places the queues and creates each stream's consumer group (from
// "$", with MKSTREAM), before traffic, so that the group is replicated
// before any fault.
func (w *queue) Setup(ctx context.Context, c *client.Client) error {
	w.keys = workloads.KeyCount(w.Config().Keys, queueKeys, len(c.Addrs()))
	if err := w.place.Place(c, w.keys); err != nil {
		return err
	}
	for i := 0; i < w.keys; i++ {
		k := w.key(Stream, i)
		r := c.Do(ctx, client.Request{Slot: workloads.Keyslot(k), Build: func(ctx context.Context) []redis.Cmder {
			return []redis.Cmder{redis.NewStatusCmd(ctx, "xgroup", "create", k, queueGroup, "$", "mkstream")}
		}})
		if r.Err != nil && !redis.HasErrorPrefix(r.Err, "BUSYGROUP") {
			return fmt.Errorf("creating the consumer group of %s: %w", k, r.Err)
		}
	}
	return nil
}

// FinalOps drain every queue (reads only: retrying one is harmless).
func (w *queue) FinalOps() []history.Op {
	var ops []history.Op
	for i := 0; i < w.keys; i++ {
		for _, kind := range []string{List, Stream} {
			op := history.Op{F: string(Drain), Key: w.key(kind, i)}
			op.SetValue(Value{Kind: kind})
			ops = append(ops, op)
		}
	}
	return ops
}

// OwnClientOnly: an ack carries what the consumer's dequeue returned.
func (w *queue) OwnClientOnly() string {
	return "its ack names the message its dequeue returned, kept by redline's code between the two ops"
}

// Checkers: Jepsen's total queue and the pending entries at the end.
func (w *queue) Checkers(opts workloads.CheckOptions) []checker.Checker {
	return w.WithMeasures(opts, Checker(w.Scope(opts, "queue")))
}

type queueGen struct {
	w        *queue
	rng      *rand.Rand
	worker   int
	consumer string
	n        int
}

func (w *queue) Generator(worker int, seed int64) workloads.Generator {
	return &queueGen{w: w, rng: workloads.Seeded(seed, worker), worker: worker, consumer: "w" + strconv.Itoa(worker)}
}

func (g *queueGen) Next() history.Op {
	// First acknowledge what this consumer was given. The ack leaves the
	// list when it is sent (Invoke), so an op drawn and not sent (redrawn
	// by the shard gate) is drawn again.
	g.w.mu.Lock()
	if pend := g.w.toAck[g.consumer]; len(pend) > 0 {
		a := pend[0]
		g.w.mu.Unlock()
		op := history.Op{F: string(Ack), Key: a.key}
		op.SetValue(Value{Kind: a.kind, Consumer: g.consumer, Msgs: []Msg{a.msg}})
		return op
	}
	g.w.mu.Unlock()
	kind := List
	if g.rng.IntN(2) == 0 {
		kind = Stream
	}
	key := g.w.key(kind, g.rng.IntN(g.w.keys))
	switch r := g.rng.IntN(100); {
	case r < 50:
		g.n++
		op := history.Op{F: string(Enqueue), Key: key}
		op.SetValue(Value{Kind: kind, Msg: fmt.Sprintf("w%d-%d", g.worker, g.n)})
		return op
	case r < 55 && kind == Stream:
		op := history.Op{F: string(Claim), Key: key}
		op.SetValue(Value{Kind: kind, Consumer: g.consumer})
		return op
	default:
		op := history.Op{F: string(Dequeue), Key: key}
		op.SetValue(Value{Kind: kind, Consumer: g.consumer})
		return op
	}
}

// given notes messages delivered to a consumer, to be acknowledged next.
func (w *queue) given(key, kind, consumer string, ms []Msg) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range ms {
		w.toAck[consumer] = append(w.toAck[consumer], queueAck{key: key, kind: kind, msg: m})
	}
}

// sent takes an ack off its consumer's list.
func (w *queue) sent(consumer string, m Msg) {
	w.mu.Lock()
	defer w.mu.Unlock()
	pend := w.toAck[consumer]
	for i, a := range pend {
		if a.msg == m {
			w.toAck[consumer] = append(pend[:i:i], pend[i+1:]...)
			return
		}
	}
}

func (w *queue) Invoke(ctx context.Context, c workloads.Conn, inv history.Op) history.Op {
	var v Value
	if err := inv.DecodeValue(&v); err != nil || v.Kind != List && v.Kind != Stream {
		return workloads.UnknownOp(inv, "malformed queue op")
	}
	k, stream := inv.Key, v.Kind == Stream
	switch inv.Name() {
	case Enqueue:
		if !stream {
			out, _ := workloads.Write(ctx, c, w.Config(), inv, func(ctx context.Context) []redis.Cmder {
				return []redis.Cmder{redis.NewIntCmd(ctx, "lpush", k, v.Msg)}
			})
			return out
		}
		var cmd *redis.Cmd
		out, _ := workloads.Write(ctx, c, w.Config(), inv, func(ctx context.Context) []redis.Cmder {
			cmd = redis.NewCmd(ctx, "xadd", k, "*", "msg", v.Msg)
			return []redis.Cmder{cmd}
		})
		if out.Type == history.OK {
			v.ID = fmt.Sprint(cmd.Val()) // not an id: the checker flags it
			out.SetValue(v)
		}
		return out
	case Dequeue, Claim:
		var ms []Msg
		var read func() []Msg
		out, _ := workloads.Write(ctx, c, w.Config(), inv, func(ctx context.Context) []redis.Cmder {
			switch {
			case inv.Name() == Claim:
				cmd := redis.NewXAutoClaimCmd(ctx, "xautoclaim", k, queueGroup, v.Consumer, queueClaimIdle.Milliseconds(), "0-0", "count", 10)
				read = func() []Msg { msgs, _ := cmd.Val(); return streamMsgs(msgs) }
				return []redis.Cmder{cmd}
			case stream:
				cmd := redis.NewXStreamSliceCmd(ctx, "xreadgroup", "group", queueGroup, v.Consumer, "count", 1, "streams", k, ">")
				read = func() []Msg {
					var out []Msg
					for _, s := range cmd.Val() {
						out = append(out, streamMsgs(s.Messages)...)
					}
					return out
				}
				return []redis.Cmder{cmd}
			default:
				var cmd *redis.StringCmd
				if w.blocking(inv) {
					cmd = redis.NewStringCmd(ctx, "blmove", k, processingKey(k), "right", "left", queueBlock.Seconds())
				} else {
					cmd = redis.NewStringCmd(ctx, "lmove", k, processingKey(k), "right", "left")
				}
				read = func() []Msg {
					if cmd.Err() == redis.Nil {
						return nil
					}
					return []Msg{{Msg: cmd.Val()}}
				}
				return []redis.Cmder{cmd}
			}
		})
		if out.Type != history.OK {
			return out
		}
		ms = read()
		v.Msgs = ms
		out.SetValue(v)
		w.given(k, v.Kind, v.Consumer, ms)
		return out
	case Ack:
		if len(v.Msgs) != 1 {
			return workloads.UnknownOp(inv, "an ack names one message")
		}
		w.sent(v.Consumer, v.Msgs[0]) // sent once, whatever its outcome
		var cmd *redis.IntCmd
		out, _ := workloads.Write(ctx, c, w.Config(), inv, func(ctx context.Context) []redis.Cmder {
			if stream {
				cmd = redis.NewIntCmd(ctx, "xack", k, queueGroup, v.Msgs[0].ID)
			} else {
				cmd = redis.NewIntCmd(ctx, "lrem", processingKey(k), 1, v.Msgs[0].Msg)
			}
			return []redis.Cmder{cmd}
		})
		if out.Type == history.OK {
			n := cmd.Val()
			v.Acked = &n
			out.SetValue(v)
		}
		return out
	case Drain:
		return w.drain(ctx, c, inv, v)
	}
	return workloads.UnknownOp(inv, "unknown op "+inv.F)
}

// blocking picks BLMOVE for one list dequeue in four (by the op's
// history index: the seed's generator stays as it was), LMOVE otherwise.
func (w *queue) blocking(inv history.Op) bool { return inv.Index%4 == 0 }

// streamMsgs turns stream entries into messages; an entry without a
// string "msg" field keeps its raw fields as its body (the checker finds
// no enqueue of it).
func streamMsgs(xs []redis.XMessage) []Msg {
	out := make([]Msg, 0, len(xs))
	for _, x := range xs {
		m, ok := x.Values["msg"].(string)
		if !ok || m == "" {
			m = fmt.Sprint(x.Values)
		}
		out = append(out, Msg{Msg: m, ID: x.ID})
	}
	return out
}

// drain reads a queue whole in one MULTI: nothing is taken.
func (w *queue) drain(ctx context.Context, c workloads.Conn, inv history.Op, v Value) history.Op {
	k := inv.Key
	var decode func() error
	r := c.Do(ctx, client.Request{Slot: workloads.Keyslot(k), Tx: true, Build: func(ctx context.Context) []redis.Cmder {
		if v.Kind == List {
			q := redis.NewStringSliceCmd(ctx, "lrange", k, 0, -1)
			p := redis.NewStringSliceCmd(ctx, "lrange", processingKey(k), 0, -1)
			decode = func() error {
				v.Queue, v.Processing = q.Val(), p.Val()
				return nil
			}
			return []redis.Cmder{q, p}
		}
		entries := redis.NewXMessageSliceCmd(ctx, "xrange", k, "-", "+")
		groups := redis.NewXInfoGroupsCmd(ctx, k)
		pending := redis.NewXPendingExtCmd(ctx, "xpending", k, queueGroup, "-", "+", 1<<20)
		decode = func() error {
			v.Entries = streamMsgs(entries.Val())
			v.LastDelivered = ""
			for _, g := range groups.Val() {
				if g.Name == queueGroup {
					v.LastDelivered = g.LastDeliveredID
				}
			}
			if v.LastDelivered == "" {
				return fmt.Errorf("the stream has no group %s (XINFO GROUPS)", queueGroup)
			}
			v.Pending = nil
			for _, p := range pending.Val() {
				v.Pending = append(v.Pending, Pending{ID: p.ID, Consumer: p.Consumer, Deliveries: p.RetryCount})
			}
			return nil
		}
		return []redis.Cmder{entries, groups, pending}
	}})
	out := workloads.Complete(inv, r)
	if out.Type != history.OK {
		return out
	}
	if err := decode(); err != nil {
		// The group is gone: the drain saw no group state. Recorded as
		// read, without it (the checker flags a drain without a
		// last-delivered id).
		out.SetError(err.Error())
	}
	out.SetValue(v)
	return out
}
