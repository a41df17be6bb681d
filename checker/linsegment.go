package checker

import (
	"slices"
	"time"

	"github.com/anishathalye/porcupine"
)

// Segmenting one key's history at quiescent points.
//
// Porcupine's cost grows with the square of a key's history (each step
// copies and hashes a bitset over all its ops): 20k ops on one key take
// about 1.5 s, 50k about 10 s. A key is idle now and then (no op in flight);
// at such a point the history splits into segments that only share the
// register's value. Segment by segment, we compute the set of values the
// register may hold at the end, asking porcupine whether the segment, run
// from a possible start value, can end on each candidate value (a synthetic
// read of it placed after the segment). The candidates are the values of
// the writes that may be linearized last (or the start value when nothing
// is written). Everything from the segment holding the first indeterminate
// op on is one last segment, checked whole from each possible start value.
// A timeout anywhere makes the key unknown unless a linearization was
// found; "illegal" is reported only when every combination was refuted.

// segmentMin is the smallest segment worth cutting off.
const segmentMin = 1000

// checkKey checks one key's ops within budget.
func checkKey(ops []regOp, budget time.Duration) porcupine.CheckResult {
	return checkSegmented(ops, budget, segmentMin)
}

func checkSegmented(ops []regOp, budget time.Duration, minSeg int) porcupine.CheckResult {
	deadline := time.Now().Add(budget)
	segs, tail := segments(ops, minSeg)
	if len(segs) == 0 {
		return checkWhole(ops, regState{}, deadline)
	}
	starts := []regState{{}}
	unknown := false
	for _, seg := range segs {
		var ends []regState
		for _, v := range endCandidates(seg, starts) {
			for _, s := range starts {
				left := time.Until(deadline)
				if left <= 0 {
					return porcupine.Unknown
				}
				pops := append(buildOps(seg, false), finalRead(seg, v))
				res := porcupine.CheckOperationsTimeout(startingAt(registerModel, s), pops, left)
				if res == porcupine.Ok {
					ends = append(ends, v)
					break
				}
				if res == porcupine.Unknown {
					unknown = true
				}
			}
		}
		if len(ends) == 0 {
			if unknown {
				return porcupine.Unknown
			}
			return porcupine.Illegal
		}
		starts = ends
	}
	if len(tail) == 0 {
		return porcupine.Ok
	}
	for _, s := range starts {
		switch checkWhole(tail, s, deadline) {
		case porcupine.Ok:
			return porcupine.Ok
		case porcupine.Unknown:
			unknown = true
		}
	}
	if unknown {
		return porcupine.Unknown
	}
	return porcupine.Illegal
}

// segments cuts ops (in invocation order) at quiescent points into
// segments of at least min ops, up to the first indeterminate op; the rest
// is the tail. No segments means "check the key whole".
func segments(ops []regOp, min int) (segs [][]regOp, tail []regOp) {
	from := 0
	var maxEnd int64 = -1 << 62
	for i, op := range ops {
		if i > from && i-from >= min && maxEnd < op.start {
			segs = append(segs, ops[from:i])
			from = i
		}
		if (op.in.kind == regWrite || op.in.kind == regCAS) && !op.ok() {
			break // the rest, from this segment on, is the tail
		}
		maxEnd = max(maxEnd, op.end)
	}
	if len(segs) == 0 {
		return nil, nil
	}
	return segs, ops[from:]
}

// endCandidates lists the values the register may hold after seg (which
// has no indeterminate op): the value of any write or successful cas that
// may be linearized last, or, when there is none, the start values.
func endCandidates(seg []regOp, starts []regState) []regState {
	var maxStart, second int64 = -1 << 62, -1 << 62
	for _, op := range seg {
		if op.in.kind == regWrite || op.in.kind == regCAS {
			if op.start > maxStart {
				maxStart, second = op.start, maxStart
			} else if op.start > second {
				second = op.start
			}
		}
	}
	var out []regState
	for _, op := range seg {
		if op.in.kind != regWrite && op.in.kind != regCAS {
			continue
		}
		// Nothing written may be forced after it: every other producer
		// began before it ended.
		others := maxStart
		if op.start == maxStart {
			others = second
		}
		if op.end < others {
			continue
		}
		v := regState{true, op.in.a}
		if op.in.kind == regCAS {
			v.v = op.in.b
		}
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	if out == nil {
		return starts
	}
	return out
}

// finalRead is a read of v after every op of seg.
func finalRead(seg []regOp, v regState) porcupine.Operation {
	var end int64
	for _, op := range seg {
		end = max(end, op.end)
	}
	return porcupine.Operation{ClientId: 1 << 30, Input: regInput{kind: regRead}, Call: end + 1, Return: end + 1,
		Output: regOutput{known: true, exists: v.exists, v: v.v}}
}

// checkWhole checks ops from the start value s. A key with indeterminate
// cas ops is first tried with the pooled model's quick form, whose "ok" is
// sound; anything else it says is settled by the exact model.
func checkWhole(ops []regOp, s regState, deadline time.Time) porcupine.CheckResult {
	left := time.Until(deadline)
	if left <= 0 {
		return porcupine.Unknown
	}
	if hasIndeterminateCAS(ops) {
		quick := porcupine.CheckOperationsTimeout(startingAt(pooledRegisterModel, s), buildOps(ops, true, true), left)
		if quick == porcupine.Ok {
			return porcupine.Ok
		}
		if left = time.Until(deadline); left <= 0 {
			return porcupine.Unknown
		}
	}
	pops, model := porcupineOps(ops)
	return porcupine.CheckOperationsTimeout(startingAt(model, s), pops, left)
}

func hasIndeterminateCAS(ops []regOp) bool {
	for _, op := range ops {
		if op.in.kind == regCAS && !op.ok() {
			return true
		}
	}
	return false
}

// startingAt returns the model with the register initially holding s.
func startingAt(m porcupine.Model, s regState) porcupine.Model {
	if _, pooled := m.Init().(poolState); pooled {
		m.Init = func() any { return poolState{{exists: s.exists, cur: s.v}} }
		return m
	}
	m.Init = func() any { return s }
	return m
}
