package adversary

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/workloads/lock"
	"github.com/redline-dev/redline/workloads/queue"
	"github.com/redline-dev/redline/workloads/ttl"
)

// Queue (queue checker): enqueues, deliveries (dequeue, claim), acks and a
// final drain per queue.

// okCallsWith are the calls of one of the ops fs that completed ok with a
// value of type T that keep accepts.
func okCallsWith[T any](r *Run, keep func(T) bool, fs ...history.OpName) []call {
	var out []call
	for _, c := range r.calls() {
		comp := r.compOf(c)
		if !slices.Contains(fs, r.invOf(c).Name()) || comp == nil || comp.Type != history.OK {
			continue
		}
		var v T
		if comp.DecodeValue(&v) == nil && keep(v) {
			out = append(out, c)
		}
	}
	return out
}

// queueDeliveries are the ok dequeues and claims that handed out at least
// one message.
func (r *Run) queueDeliveries() []call {
	return okCallsWith(r, func(v queue.Value) bool { return len(v.Msgs) > 0 }, queue.Dequeue, queue.Claim)
}

var queueMutations = []Mutation{
	{
		Name: "queue-phantom-delivery", Kind: Anomaly, Checker: "queue", Figure: unexpectedFigure,
		Class: "a dequeue hands out a message nobody enqueued",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			c, ok := pick(rng, r.queueDeliveries())
			if !ok {
				return "", ErrNotApplicable
			}
			comp := r.compOf(c)
			var v queue.Value
			if err := comp.DecodeValue(&v); err != nil {
				return "", err
			}
			v.Msgs = append(v.Msgs, queue.Msg{Msg: "adversary-phantom", ID: v.Msgs[0].ID})
			r.setValue(c.comp, v)
			return "added a message no enqueue sent to " + r.describe(c.comp), nil
		},
	},
	{
		Name: "queue-delivered-before-enqueued", Kind: Anomaly, Checker: "queue", Figure: class("delivered-before-enqueued"),
		Class: "a dequeue completed before its message's enqueue was invoked",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			// A delivery of a message enqueued later: the first delivery in
			// the run gets the body of an enqueue invoked after it ended.
			ds := r.queueDeliveries()
			for _, c := range ds {
				end := r.end(c)
				for _, e := range r.calls() {
					inv := r.invOf(e)
					if inv.Name() != queue.Enqueue || inv.Key != r.invOf(c).Key || inv.Time <= end || r.outcome(e) != history.OK {
						continue
					}
					var ev queue.Value
					if inv.DecodeValue(&ev) != nil || ev.Msg == "" {
						continue
					}
					var v queue.Value
					if r.compOf(c).DecodeValue(&v) != nil {
						continue
					}
					id := ""
					if comp := r.compOf(e); comp != nil {
						var cv queue.Value
						if comp.DecodeValue(&cv) == nil {
							id = cv.ID
						}
					}
					v.Msgs = append(v.Msgs, queue.Msg{Msg: ev.Msg, ID: id})
					r.setValue(c.comp, v)
					return fmt.Sprintf("%s now delivers %s, enqueued by op %d later", r.describe(c.comp), ev.Msg, inv.Index), nil
				}
			}
			return "", ErrNotApplicable
		},
	},
	{
		Name: "queue-garbage-ack", Kind: Anomaly, Checker: "queue", Figure: class("garbage"),
		Class: "an ack's count is neither 0 nor 1",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			var acks []call
			for _, c := range r.calls() {
				if r.invOf(c).Name() == queue.Ack && r.outcome(c) == history.OK {
					acks = append(acks, c)
				}
			}
			c, ok := pick(rng, acks)
			if !ok {
				return "", ErrNotApplicable
			}
			var v queue.Value
			if err := r.compOf(c).DecodeValue(&v); err != nil {
				return "", err
			}
			two := int64(2)
			v.Acked = &two
			r.setValue(c.comp, v)
			return "set the ack count of " + r.describe(c.comp) + " to 2", nil
		},
	},
}

// Lock (lock checker): acquires (SET NX PX with a fence), releases by
// compare-and-delete.

// lockAcquires are the acquires of the run, ok or refused, in invocation
// order.
func (r *Run) lockAcquires() (ok, refused []call) {
	for _, c := range r.calls() {
		if r.invOf(c).Name() != lock.Acquire {
			continue
		}
		switch comp := r.compOf(c); {
		case comp == nil:
		case comp.Type == history.OK:
			ok = append(ok, c)
		case comp.Type == history.Fail && comp.ErrorText() == lock.Held:
			refused = append(refused, c)
		}
	}
	return ok, refused
}

func (r *Run) lockFence(c call) (int64, bool) {
	var v lock.Value
	if r.compOf(c).DecodeValue(&v) != nil {
		return 0, false
	}
	var f int64
	if json.Unmarshal(v.Fence, &f) != nil {
		return 0, false
	}
	return f, true
}

var lockMutations = []Mutation{
	{
		Name: "lock-granted-while-held", Kind: Anomaly, Checker: "lock", Figure: lockFigure("double_holds", func(f *lock.Figures) int { return f.DoubleHolds }),
		Class: "an acquire the server refused while another client held the lock is acknowledged instead (two holders)",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			oks, refused := r.lockAcquires()
			// A refusal that began after an ok acquire of its lock
			// completed and ended well before that lock could expire or
			// be released: certainly inside its hold.
			var xs [][2]call
			for _, f := range refused {
				for _, a := range oks {
					ai, fi := r.invOf(a), r.invOf(f)
					if ai.Key != fi.Key || r.end(a) >= fi.Time {
						continue
					}
					var v lock.Value
					if ai.DecodeValue(&v) != nil || v.TTLms <= 0 {
						continue
					}
					released := r.releaseOf(ai.Key, v.Token)
					if r.end(f)+10*1e6 < min(ai.Time+v.TTLms*1e6, released) {
						xs = append(xs, [2]call{a, f})
					}
				}
			}
			x, ok := pick(rng, xs)
			if !ok {
				return "", ErrNotApplicable
			}
			a, f := x[0], x[1]
			top := int64(0)
			for _, o := range oks {
				if fe, ok := r.lockFence(o); ok && fe > top {
					top = fe
				}
			}
			var v lock.Value
			if err := r.invOf(f).DecodeValue(&v); err != nil {
				return "", err
			}
			v.Fence = json.RawMessage(fmt.Sprint(top + 1000))
			comp := r.compOf(f)
			comp.Type = history.OK
			comp.SetError("")
			r.setValue(f.comp, v)
			return fmt.Sprintf("%s acknowledged during the hold of op %d", r.describe(f.comp), r.invOf(a).Index), nil
		},
	},
	{
		Name: "lock-fence-repeated", Kind: Anomaly, Checker: "lock", Figure: lockFigure("fence_regressions", func(f *lock.Figures) int { return f.FenceRegressions }),
		Class: "two acquires get the same fencing token",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			oks, _ := r.lockAcquires()
			if len(oks) < 2 {
				return "", ErrNotApplicable
			}
			i := 1 + rng.IntN(len(oks)-1)
			prev, ok1 := r.lockFence(oks[i-1])
			if _, ok2 := r.lockFence(oks[i]); !ok1 || !ok2 {
				return "", ErrNotApplicable
			}
			var v lock.Value
			if err := r.compOf(oks[i]).DecodeValue(&v); err != nil {
				return "", err
			}
			v.Fence = json.RawMessage(fmt.Sprint(prev))
			r.setValue(oks[i].comp, v)
			return fmt.Sprintf("gave %s the fence %d of the acquire before it", r.describe(oks[i].comp), prev), nil
		},
	},
}

// releaseOf is the invocation time of the release of token on key, or the
// end of time when none was sent.
func (r *Run) releaseOf(key, token string) int64 {
	for _, c := range r.calls() {
		inv := r.invOf(c)
		if inv.Name() != lock.Release || inv.Key != key {
			continue
		}
		var v lock.Value
		if inv.DecodeValue(&v) == nil && v.Token == token {
			return inv.Time
		}
	}
	return 1 << 62
}

// TTL (ttl checker): sets with expiries, reads of value and PTTL.

func (r *Run) ttlReads() []call {
	return okCallsWith(r, func(v ttl.Value) bool { return v.Got != nil && v.PTTL != nil }, checker.OpRead)
}

var ttlMutations = []Mutation{
	{
		Name: "ttl-phantom-value", Kind: Anomaly, Checker: "ttl", Figure: class("unexpected"),
		Class: "a read returns a value no set wrote",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			c, ok := pick(rng, r.ttlReads())
			if !ok {
				return "", ErrNotApplicable
			}
			var v ttl.Value
			if err := r.compOf(c).DecodeValue(&v); err != nil {
				return "", err
			}
			phantom := "adversary-phantom"
			v.Got = &phantom
			r.setValue(c.comp, v)
			return "made " + r.describe(c.comp) + " read a value nobody set", nil
		},
	},
	{
		Name: "ttl-garbage-pttl", Kind: Anomaly, Checker: "ttl", Figure: class("garbage"),
		Class: "a read returns a value beside PTTL -2 (no such key)",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			c, ok := pick(rng, r.ttlReads())
			if !ok {
				return "", ErrNotApplicable
			}
			var v ttl.Value
			if err := r.compOf(c).DecodeValue(&v); err != nil {
				return "", err
			}
			gone := int64(-2)
			v.PTTL = &gone
			r.setValue(c.comp, v)
			return "gave " + r.describe(c.comp) + " PTTL -2 beside its value", nil
		},
	},
}

// lockFigure is a count of the lock checker's figures (workloads/lock).
func lockFigure(name string, of func(*lock.Figures) int) Figure {
	return Figure{name, func(r checker.Result) bool {
		f, ok := checker.FiguresAs[*lock.Figures](r)
		return ok && of(f) > 0
	}}
}
