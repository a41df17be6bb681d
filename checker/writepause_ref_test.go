package checker

import (
	"fmt"
	"slices"

	"github.com/redline-dev/redline/history"
)

// The write-pause checker as it was before it streamed (writepause.go):
// the reference its streaming form is compared with (TestWritePauseStream),
// kept verbatim.

func writePauseReference(w writePause, in *History) Result {
	ops := in.Ops
	calls, err := w.o.calls(in)
	if err != nil {
		return invalidHistory(err)
	}
	migs := migrations(ops)
	if len(migs) == 0 {
		return NotApplicable("no slot migration during the run: no migrate or member fault moved a slot")
	}
	// Acknowledgement times of writes, per slot, sorted.
	acks := map[int][]int64{}
	for i := range calls {
		c := &calls[i]
		if c.ok() && isWrite(c.inv.F) && c.inv.Key != "" {
			sl := history.Keyslot(c.inv.Key)
			acks[sl] = append(acks[sl], c.end)
		}
	}
	for _, a := range acks {
		slices.Sort(a)
	}
	gaps := map[string][]int64{}
	unmeasured := map[string]int{}
	var detail []map[string]any
	var serverPauses []int64 // ns, of the measured atomic units
	for _, m := range migs {
		for _, u := range m.units {
			var times []int64
			for _, sl := range u.slots {
				times = append(times, acks[sl]...)
			}
			slices.Sort(times)
			// The acknowledgements that bound the migration: the last before
			// its start, those during it, the first after its end.
			lo, hi := -1, -1
			for i, t := range times {
				if t < m.start {
					lo = i
				} else if t > m.end && hi < 0 {
					hi = i
				}
			}
			if lo < 0 || hi < 0 {
				unmeasured[m.method]++
				continue
			}
			var longest int64
			for i := lo; i < hi; i++ {
				longest = max(longest, times[i+1]-times[i])
			}
			gaps[m.method] = append(gaps[m.method], longest)
			if len(detail) < 50 {
				e := map[string]any{"index": m.index, "method": m.method, "slots": len(u.slots), "longest_gap_ms": ms(longest)}
				if u.task != "" {
					e["task"] = u.task
				}
				if u.serverPause >= 0 {
					e["server_write_pause_ms"] = u.serverPause
					serverPauses = append(serverPauses, u.serverPause*int64(1e6))
				}
				detail = append(detail, e)
			}
		}
	}
	if len(gaps["atomic"])+len(gaps["classic"]) == 0 {
		// No migrated slot had this workload's acknowledged writes on both
		// sides of its move: there is no pause to measure.
		return NotApplicable(fmt.Sprintf("%d migrations, none with acknowledged writes of this workload on its slots before and after the move", len(migs)))
	}
	fig := map[string]any{"measurement": true, "migrations": len(migs)}
	for _, method := range []string{"atomic", "classic"} {
		g := gaps[method]
		if len(g) == 0 && unmeasured[method] == 0 {
			continue
		}
		f := map[string]any{"measured": len(g), "unmeasured": unmeasured[method]}
		if len(g) > 0 {
			f["longest_gap_ms"] = quantilesMs(g)
		}
		f["unit"] = map[string]string{"atomic": "task", "classic": "slot"}[method]
		if method == "atomic" && len(serverPauses) > 0 {
			f["server_write_pause_ms"] = quantilesMs(serverPauses)
		}
		fig[method] = f
	}
	if len(detail) > 0 {
		fig["per_migration"] = detail
	}
	return Result{Valid: Valid, Figures: Map(fig)}
}
