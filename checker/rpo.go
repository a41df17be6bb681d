package checker

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/redline-dev/redline/harness/history"
)

type rpo struct{ o Options }

// RPO attributes lost acknowledged writes to the fault window in which they
// were acknowledged (a window is widened by Options.RPOSlack before its
// start) and reports, per window, how many were lost and the time span over
// which they had been acknowledged. For sets each lost element is known.
// For counters only amounts are: each rise of a key's deficit (a read below
// the increments acknowledged before it) is charged to the window in force
// when the revealing read began, and the span is that of the increments
// acknowledged from the window's start to that read (an upper envelope).
// Its verdict is always valid: the set and counter checkers judge the loss.
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
		a := analyzeSet(calls, r.o.MaxExamples)
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
		// The window in force (the latest to start, slack included)
		// when a read began.
		latest := func(t int64) (int, bool) {
			best := -1
			for i, w := range windows {
				if w.Start-int64(r.o.RPOSlack) <= t && (best < 0 || w.Start > windows[best].Start) {
					best = i
				}
			}
			return best, best >= 0
		}
		for _, ck := range a.keys {
			if ck.lost == 0 {
				continue
			}
			total += ck.lost
			// A loss shows as a deficit: a read below the increments
			// acknowledged before it began. Each rise of the deficit is
			// charged to the window in force when the read that revealed
			// it began; the increments lost were acknowledged between
			// that window's start and the read. Rises beyond the final
			// loss (transient deficits) are not charged.
			reads := slices.Clone(ck.reads)
			slices.SortFunc(reads, func(x, y counterRead) int { return cmpInt(x.c.end, y.c.end) })
			var seen, charged int64
			for _, rd := range reads {
				lo, _ := ck.bounds(rd.c.start, rd.c.end)
				d := lo - rd.value
				if d <= seen || charged >= ck.lost {
					continue
				}
				rise := min(d-seen, ck.lost-charged)
				seen, charged = d, charged+rise
				b, from := outside, int64(-1<<62)
				if i, ok := latest(rd.c.start); ok {
					b, from = buckets[i], windows[i].Start-int64(r.o.RPOSlack)
				}
				b.lost += rise
				b.keys[ck.key] = true
				var acked waitSplit
				for _, ad := range ck.okByEnd {
					if ad.end >= from && ad.end < rd.c.start {
						b.ack(ad.end)
						acked.add(ad.wait, pos(ad.delta))
					}
				}
				// WAIT split as the counter checker does it: unconfirmed
				// increments first, wait_satisfied gets the rest.
				left := rise
				for _, cl := range []WaitClass{NoWait, WaitUnsatisfied, WaitSatisfied} {
					n := min(left, acked[cl])
					if cl == WaitSatisfied {
						n = left
					}
					b.split.add(cl, n)
					left -= n
				}
			}
			if charged < ck.lost { // cannot happen: the final read shows it
				outside.lost += ck.lost - charged
				outside.split.add(NoWait, ck.lost-charged)
				outside.keys[ck.key] = true
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
		fig["note"] = "counter losses are known per key only: each rise of a key's deficit is charged to the fault window in force when the read revealing it began; spans cover the increments acknowledged from that window's start to the read (an upper envelope)"
	}
	return Result{Valid: Valid, Figures: fig}
}
