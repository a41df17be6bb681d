package checker

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/redline-dev/redline/harness/history"
)

type rpo struct{ o Options }

// RPO attributes lost acknowledged writes to the fault window in which they
// were acknowledged (a window is widened by Options.RPOSlack before its
// start) and reports, per window, how many were lost and the time span over
// which they had been acknowledged. For sets each lost element is known;
// for counters only the amount per key is, and it is shared among the
// windows in proportion to the increments acknowledged in each (the span
// is then that of those increments: an upper envelope). Its verdict is
// always valid: the set and counter checkers judge the loss itself.
func RPO(opts ...Options) Checker { return rpo{firstOpts(opts)} }

func (r rpo) Name() string { return r.o.name("rpo") }

// detectKind looks at the first ok read: a list means a set.
func detectKind(calls []call) string {
	for i := range calls {
		c := &calls[i]
		if c.inv.F == "read" && c.ok() && c.comp.HasValue() {
			if bytes.HasPrefix(bytes.TrimSpace(c.comp.Value), []byte("[")) {
				return "set"
			}
			return "counter"
		}
	}
	return ""
}

// rpoBucket accumulates the losses of one window (or of no window).
type rpoBucket struct {
	lost        int64
	split       waitSplit
	first, last int64
	keys        map[string]bool
}

func newRPOBucket() *rpoBucket { return &rpoBucket{first: inf, last: -1, keys: map[string]bool{}} }

func (b *rpoBucket) ack(t int64) {
	b.first = min(b.first, t)
	b.last = max(b.last, t)
}

func (b *rpoBucket) figures() map[string]any {
	m := map[string]any{"lost": b.lost, "keys": len(b.keys)}
	if b.last >= 0 {
		m["acked_from_s"] = sec(b.first)
		m["acked_to_s"] = sec(b.last)
		m["span_ms"] = ms(b.last - b.first)
	}
	b.split.into(m)
	return m
}

func (r rpo) Check(ctx context.Context, ops []history.Op) Result {
	calls, err := r.o.calls(ops)
	if err != nil {
		return invalidHistory(err)
	}
	windows := Windows(ops)
	kind := r.o.Kind
	if kind == "" {
		kind = detectKind(calls)
	}
	buckets := make([]*rpoBucket, len(windows))
	for i := range buckets {
		buckets[i] = newRPOBucket()
	}
	outside := newRPOBucket()
	windowOf := func(t int64) *rpoBucket {
		for i, w := range windows {
			if w.Contains(t, r.o.RPOSlack) {
				return buckets[i]
			}
		}
		return outside
	}
	var total int64
	switch kind {
	case "set":
		a := analyzeSet(calls)
		keyOf := map[*setElem]string{}
		for _, sk := range a.keys {
			for _, e := range sk.elems {
				if e.lost {
					keyOf[e] = sk.key
				}
			}
		}
		for _, e := range a.lost {
			b := windowOf(e.add.end)
			b.lost++
			b.split.add(ClassifyWait(e.add.wait()), 1)
			b.ack(e.add.end)
			b.keys[keyOf[e]] = true
			total++
		}
	case "counter":
		a := analyzeCounter(calls, finalReadsStart(ops), r.o.MaxExamples)
		for _, ck := range a.keys {
			if ck.lost == 0 {
				continue
			}
			total += ck.lost
			// Increments acknowledged in each window.
			in := map[*rpoBucket]int64{}
			var inAll int64
			for _, ad := range ck.okByEnd {
				b := windowOf(ad.end)
				if b == outside || ad.delta <= 0 {
					continue
				}
				in[b] += ad.delta
				inAll += ad.delta
			}
			if inAll == 0 {
				outside.lost += ck.lost
				outside.keys[ck.key] = true
				for _, ad := range ck.okByEnd {
					outside.ack(ad.end)
				}
				continue
			}
			// Share the loss in proportion, largest remainders last.
			left := ck.lost
			var biggest *rpoBucket
			for _, w := range buckets {
				n, ok := in[w]
				if !ok {
					continue
				}
				share := ck.lost * n / inAll
				w.lost += share
				left -= share
				w.keys[ck.key] = true
				if biggest == nil || n > in[biggest] {
					biggest = w
				}
			}
			biggest.lost += left
			for _, ad := range ck.okByEnd {
				if b := windowOf(ad.end); b != outside && in[b] > 0 {
					b.ack(ad.end)
				}
			}
		}
	case "":
		return Result{Valid: Valid, Figures: map[string]any{"lost": 0, "note": "no successful read: nothing to measure"}}
	default:
		return Result{Valid: Unknown, Figures: map[string]any{"error": fmt.Sprintf("rpo: unknown kind %q (want set or counter)", kind)}}
	}
	per := []map[string]any{}
	var worst int64
	for i, w := range windows {
		m := buckets[i].figures()
		m["window"] = i
		m["fault"] = w.Fault
		m["start_s"] = sec(w.Start)
		m["end_s"] = sec(w.End)
		m["nodes"] = nonNil(w.Nodes)
		if buckets[i].last >= 0 {
			worst = max(worst, buckets[i].last-buckets[i].first)
		}
		if len(per) < max(r.o.MaxExamples, 200) {
			per = append(per, m)
		}
	}
	fig := map[string]any{
		"kind":            kind,
		"lost":            total,
		"windows":         len(windows),
		"per_window":      per,
		"outside_windows": outside.figures(),
		"rpo_ms":          ms(worst),
		"slack_s":         time.Duration(r.o.RPOSlack).Seconds(),
	}
	if kind == "counter" {
		fig["note"] = "counter losses are per key, shared among windows in proportion to the increments acknowledged in each; spans are those of the acknowledged increments (an upper envelope)"
	}
	return Result{Valid: Valid, Figures: fig}
}
