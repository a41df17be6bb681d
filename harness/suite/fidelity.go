package suite

import (
	"fmt"
	"math"
	"strings"
)

// FidelityFactor is how far one of the reference's RPO figures may stand
// from redis-server's in the same study before the reference is called
// unfaithful: within Factor of Redis's (either way), or both at most
// NearZero. The default target's figures are only as true as these hold,
// so the fidelity test (cmd/redline) runs them on every change.
type FidelityFactor struct {
	Name     string
	Unit     string
	Factor   float64
	NearZero float64
	// get reads a run's figure; false when the run has none (a run that
	// lost nothing has a loss window ending at 0, not none).
	get func(RunFigures) (float64, bool)
	// onlyWithLoss: judged only where both sides lost more than the lost
	// share's near zero. A handful of writes a zombie primary acknowledged
	// at its resume (pause-primary) is a rare event on either server; its
	// time says nothing of a server's shape, and the lost share already
	// judges a side that loses where the other does not.
	onlyWithLoss bool
}

// FidelityFactors are issue 37's: 2x for the lost share and the end of the
// loss window, 1.5x for the RTO.
var FidelityFactors = []FidelityFactor{
	{"lost share", "%", 2, 0.1, lostShare, false},
	{"end of the loss window", "ms", 2, 250, func(f RunFigures) (float64, bool) {
		if f.LossWindowMs == nil {
			return 0, true
		}
		return f.LossWindowMs.To, true
	}, true},
	{"RTO p50", "ms", 1.5, 0, func(f RunFigures) (float64, bool) {
		if f.RTOMs == nil {
			return 0, false
		}
		return f.RTOMs.P50, true
	}, false},
}

func lostShare(f RunFigures) (float64, bool) {
	if f.Acked == 0 {
		return 0, false
	}
	return 100 * float64(f.Lost) / float64(f.Acked), true
}

// FidelityGaps compares every cell run on both the reference and redis by
// FidelityFactors, on the medians of their runs, and says each figure
// outside its factor in words. A cell where either side has no figure is
// a gap too ("no figure"): a comparison that could not be made is not a
// pass.
func FidelityGaps(es []Entry) []string {
	type key struct {
		client, scenario string
		wait             int
		nt               int64
		settings         string
	}
	keyOf := func(e Entry) key {
		return key{e.Client, e.Scenario, e.Wait, e.NodeTimeoutMs, strings.Join(e.Settings, ";")}
	}
	red := map[key]Entry{}
	for _, e := range es {
		if e.Target == "redis" {
			red[keyOf(e)] = e
		}
	}
	var out []string
	for _, a := range es {
		b, ok := red[keyOf(a)]
		if a.Target != "reference" || !ok {
			continue
		}
		where := fmt.Sprintf("%s, wait %d, node-timeout %dms, %s", a.Scenario, a.Wait, a.NodeTimeoutMs, settingsName(a.Settings))
		lossA, lossB := median(values(a.PerRun, lostShare)), median(values(b.PerRun, lostShare))
		for _, ff := range FidelityFactors {
			if ff.onlyWithLoss && (lossA <= FidelityFactors[0].NearZero || lossB <= FidelityFactors[0].NearZero) {
				continue
			}
			va, vb := values(a.PerRun, ff.get), values(b.PerRun, ff.get)
			if len(va) == 0 || len(vb) == 0 {
				out = append(out, fmt.Sprintf("%s: %s: no figure (reference %d runs, redis %d runs with one)", where, ff.Name, len(va), len(vb)))
				continue
			}
			ma, mb := median(va), median(vb)
			if !ff.within(ma, mb) {
				out = append(out, fmt.Sprintf("%s: %s: reference %.4g %s, redis %.4g %s: outside %gx", where, ff.Name, ma, ff.Unit, mb, ff.Unit, ff.Factor))
			}
		}
	}
	return out
}

// within: a and b within the factor of each other, or both near zero.
func (ff FidelityFactor) within(a, b float64) bool {
	if a <= ff.NearZero && b <= ff.NearZero {
		return true
	}
	lo, hi := math.Min(a, b), math.Max(a, b)
	return lo > 0 && hi <= ff.Factor*lo
}
