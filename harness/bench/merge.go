package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/redline-dev/redline/cluster"
)

// The coordinator's side of a distributed load run (generator.go): read
// every generator's report, check it, and merge the sound ones exactly
// (counts summed, HDR histograms merged, second by second) into one
// Result, as if one generator had run the whole rate. A generator that
// died, never reported, failed, started late or wrote a report that does
// not hold together is named in Result.Generators and the diagnosis, its
// figures left out: the merged figures say whose they are, and the run's
// verdict is no longer valid (harness.SaveLoad).

// Generator statuses in GeneratorFigures.Status.
const (
	GenOK      = "ok"      // merged
	GenDied    = "died"    // its report stops before its end: it died or its output was cut
	GenMissing = "missing" // it never reported (never started, or its output is lost)
	GenFailed  = "failed"  // it said why it could not run, or the runtime could not run it
	GenGarbled = "garbled" // a line of its report fails its checksum or its checks
	GenLate    = "late"    // it started over a second after the coordinated start
)

// GeneratorFigures are one generator's part of a distributed run.
type GeneratorFigures struct {
	Index  int    `json:"index"`
	Name   string `json:"name"`
	Host   string `json:"host,omitempty"`
	Status string `json:"status"`
	// Problem says in words what went wrong ("" when merged).
	Problem string  `json:"problem,omitempty"`
	Merged  bool    `json:"merged"`
	Rate    float64 `json:"rate"`
	// What its report says (when it had one): measured seconds, ok and
	// failed ops, its own corrected p99.
	Seconds int     `json:"seconds"`
	OK      int64   `json:"ok"`
	Failed  int64   `json:"failed"`
	P99Ms   float64 `json:"p99_ms"`
	// StartSkewMs is how late its traffic started after the coordinated
	// start, in the cluster's clock, known to ± ClockUncertaintyMs.
	StartSkewMs        float64 `json:"start_skew_ms"`
	ClockOffsetMs      float64 `json:"clock_offset_ms"`
	ClockUncertaintyMs float64 `json:"clock_uncertainty_ms"`
}

// MergeConfig is what the coordinator asked of the generators.
type MergeConfig struct {
	// Rate is the total scheduled rate, Duration the traffic's length
	// with the warm-up.
	Rate        float64
	Duration    time.Duration
	Concurrency int // per generator
	Pipeline    int
	// NodeNames names shards by their primary's address.
	NodeNames map[string]string
}

// lateStart: a generator whose traffic started later than this after the
// coordinated start would put its seconds beside other generators'
// following seconds: it is left out.
const lateStart = time.Second

// report is a generator's checked report.
type report struct {
	hdr  genHeader
	secs []genSecond
	hist []hists // per second, decoded
	end  genEnd
}

// errTorn is a report that stops before its end line.
var errTorn = errors.New("torn")

// parseReport reads and checks a generator's report. A report without
// its end line returns errTorn (with what it had); a line that fails its
// checksum, is out of order or disagrees with the others returns another
// error; an end line that carries the generator's own error returns it as
// the report's end with Error set.
func parseReport(b []byte, index, of int) (*report, error) {
	r := &report{}
	// A last line without its newline was cut while being written (the
	// generator died mid-write, its log was cut): the report is torn
	// there, not garbled.
	partial := false
	if i := bytes.LastIndexByte(b, '\n'); i < len(b)-1 {
		partial, b = true, b[:i+1]
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	state := 0 // 0 before the header, 1 seconds, 2 after the end
	n := 0
	for sc.Scan() {
		n++
		line := sc.Bytes()
		rest, ok := bytes.CutPrefix(line, []byte(GeneratorMarker+" "))
		if !ok {
			if bytes.Contains(line, []byte(GeneratorMarker)) {
				return r, fmt.Errorf("line %d holds the report's marker in the middle: two writes interleaved", n)
			}
			continue // the generator's log, where the runtime mixes it in
		}
		if state == 2 {
			return r, fmt.Errorf("line %d: report lines after the end line", n)
		}
		sum, payload, ok := bytes.Cut(rest, []byte(" "))
		want, err := strconv.ParseUint(string(sum), 16, 32)
		if !ok || err != nil || len(sum) != 8 {
			return r, fmt.Errorf("line %d: no checksum after the marker", n)
		}
		if crc32.ChecksumIEEE(payload) != uint32(want) {
			return r, fmt.Errorf("line %d: checksum mismatch (the line was changed or cut)", n)
		}
		var kind struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(payload, &kind); err != nil {
			return r, fmt.Errorf("line %d: %v", n, err)
		}
		dec := json.NewDecoder(bytes.NewReader(payload))
		dec.DisallowUnknownFields()
		switch {
		case kind.Type == "end":
			if err := dec.Decode(&r.end); err != nil {
				return r, fmt.Errorf("line %d (end): %v", n, err)
			}
			state = 2
		case kind.Type == "header" && state == 0:
			if err := dec.Decode(&r.hdr); err != nil {
				return r, fmt.Errorf("line %d (header): %v", n, err)
			}
			if r.hdr.Index != index || r.hdr.Of != of {
				return r, fmt.Errorf("the header says generator %d of %d, expected %d of %d", r.hdr.Index, r.hdr.Of, index, of)
			}
			state = 1
		case kind.Type == "second" && state == 1:
			var s genSecond
			if err := dec.Decode(&s); err != nil {
				return r, fmt.Errorf("line %d (second): %v", n, err)
			}
			if err := r.addSecond(s); err != nil {
				return r, fmt.Errorf("line %d (second %d): %v", n, len(r.secs)+1, err)
			}
		default:
			return r, fmt.Errorf("line %d: a %q line out of order", n, kind.Type)
		}
	}
	if err := sc.Err(); err != nil {
		return r, fmt.Errorf("reading the report: %v", err)
	}
	if state != 2 {
		return r, errTorn
	}
	if partial {
		return r, errors.New("a cut line after the end line")
	}
	if r.end.Error != "" {
		return r, nil
	}
	if state == 2 && r.hdr.Type == "" {
		return r, errors.New("an end line without a header")
	}
	return r, r.checkEnd()
}

// addSecond checks one second against what came before and decodes it.
func (r *report) addSecond(s genSecond) error {
	if s.Second != 0 && s.Second != len(r.secs)+1 {
		return fmt.Errorf("numbered %d", s.Second)
	}
	if s.LenNs <= 0 || len(r.secs) > 0 && s.AtNs <= r.secs[len(r.secs)-1].AtNs {
		return errors.New("its time does not follow the second before")
	}
	ns := len(r.hdr.Shards)
	if len(s.ShardOK) != ns || len(s.ShardBacklog) != ns || len(s.ShardLagNs) != ns {
		return fmt.Errorf("%d shard figures for %d shards", len(s.ShardOK), ns)
	}
	var h hists
	for o := range h {
		for k := range h[o] {
			key := histKey(o, k)
			h[o][k] = newHist()
			if enc, ok := s.Hist[key]; ok {
				d, err := hdrhistogram.Decode(enc)
				if err != nil {
					return fmt.Errorf("histogram %s: %v", key, err)
				}
				h[o][k].Merge(d)
			}
		}
		// Every ok op is in both latency histograms of its op, once.
		for k := range h[o] {
			if got := h[o][k].TotalCount(); got != s.Counts.OK[o] {
				return fmt.Errorf("%d ok %s ops but %d in its %s histogram", s.Counts.OK[o], opNames[o], got, kindNames[k])
			}
		}
	}
	var shardOK int64
	for _, v := range s.ShardOK {
		shardOK += v
	}
	if ns > 0 && shardOK != s.Counts.TotalOK() {
		return fmt.Errorf("%d ok ops but %d in its shards", s.Counts.TotalOK(), shardOK)
	}
	for k := range s.Hist {
		if !knownHistKey(k) {
			return fmt.Errorf("unknown histogram %q", k)
		}
	}
	r.secs = append(r.secs, s)
	r.hist = append(r.hist, h)
	return nil
}

func knownHistKey(k string) bool {
	for o := range opNames {
		for kk := range kindNames {
			if histKey(o, kk) == k {
				return true
			}
		}
	}
	return false
}

// checkEnd holds the end line's totals against the seconds: the counts
// summed and the histograms merged must be exactly the end's.
func (r *report) checkEnd() error {
	e := &r.end
	if e.Seconds != len(r.secs) {
		return fmt.Errorf("the end line counts %d seconds, the report has %d", e.Seconds, len(r.secs))
	}
	var sum Counts
	for i := range r.secs {
		sum.add(&r.secs[i].Counts)
	}
	if sum != e.Counts {
		return fmt.Errorf("the end line's totals (%d ok, %d failed) are not the sum of its seconds' (%d ok, %d failed)",
			e.Counts.TotalOK(), e.Counts.Failed(), sum.TotalOK(), sum.Failed())
	}
	for o := range opNames {
		for k := range kindNames {
			key := histKey(o, k)
			merged := newHist()
			for i := range r.hist {
				merged.Merge(r.hist[i][o][k])
			}
			end := newHist()
			if enc, ok := e.Hist[key]; ok {
				d, err := hdrhistogram.Decode(enc)
				if err != nil {
					return fmt.Errorf("the end line's histogram %s: %v", key, err)
				}
				end.Merge(d)
			}
			if !merged.Equals(end) {
				return fmt.Errorf("the end line's histogram %s (%d values) is not the merge of its seconds' (%d values)", key, end.TotalCount(), merged.TotalCount())
			}
		}
	}
	if len(e.ShardHist) != len(r.hdr.Shards) {
		return fmt.Errorf("%d shard histograms for %d shards", len(e.ShardHist), len(r.hdr.Shards))
	}
	for i, enc := range e.ShardHist {
		d, err := hdrhistogram.Decode(enc)
		if err != nil {
			return fmt.Errorf("shard histogram %d: %v", i, err)
		}
		var ok int64
		for j := range r.secs {
			ok += r.secs[j].ShardOK[i]
		}
		if d.TotalCount() != ok {
			return fmt.Errorf("shard %s: %d ok ops but %d in its histogram", r.hdr.Shards[i], ok, d.TotalCount())
		}
	}
	if e.ElapsedNs <= 0 || len(r.secs) > 0 && e.ElapsedNs < r.secs[len(r.secs)-1].AtNs {
		return errors.New("the end line's elapsed time ends before its last second")
	}
	return nil
}

// MergeGenerators checks every generator's report and merges the sound
// ones into one Result. It fails only when no generator's report can be
// merged; each one left out is named in Result.Generators.
func MergeGenerators(cfg MergeConfig, outs []cluster.GeneratorOutcome) (*Result, error) {
	of := len(outs)
	var good []*report
	var figs []GeneratorFigures
	for _, out := range outs {
		f := GeneratorFigures{Index: out.Index, Name: out.Name, Rate: cfg.Rate / float64(max(of, 1))}
		rep, problem, status := judge(out, of)
		if rep != nil {
			f.Host = rep.hdr.Host
			if rep.hdr.Rate > 0 {
				f.Rate = rep.hdr.Rate
			}
			f.Seconds = len(rep.secs)
			var c Counts
			h := newHist()
			for i := range rep.secs {
				c.add(&rep.secs[i].Counts)
				for o := range opNames {
					h.Merge(rep.hist[i][o][corrected])
				}
			}
			f.OK, f.Failed = c.TotalOK(), c.Failed()
			f.P99Ms = quantiles(h).P99
			if rep.hdr.StartAtNs > 0 {
				f.StartSkewMs = float64(rep.hdr.StartedNs-rep.hdr.StartAtNs) / 1e6
				f.ClockOffsetMs = float64(rep.hdr.ClockOffsetNs) / 1e6
				f.ClockUncertaintyMs = float64(rep.hdr.ClockRTTNs) / 2e6
			}
		}
		if status == GenOK && f.StartSkewMs > float64(lateStart/time.Millisecond)+f.ClockUncertaintyMs {
			status, problem = GenLate, fmt.Sprintf("its traffic started %s ms after the coordinated start (its seconds would sit beside the others' following seconds)", Num(f.StartSkewMs))
		}
		f.Status, f.Problem = status, problem
		if status == GenOK {
			f.Merged = true
			good = append(good, rep)
		}
		figs = append(figs, f)
	}
	if len(good) == 0 {
		var why []string
		for _, f := range figs {
			why = append(why, fmt.Sprintf("generator %d (%s): %s", f.Index, f.Name, f.Problem))
		}
		return nil, fmt.Errorf("no generator's report can be merged: %s", strings.Join(why, "; "))
	}
	r := mergeReports(cfg, good)
	r.Generators = figs
	r.RequestedRate = cfg.Rate
	var notes []string
	for _, f := range figs {
		if !f.Merged {
			r.GeneratorsFailed++
			notes = append(notes, fmt.Sprintf("generator %d of %d (%s) %s: %s; its %s scheduled ops/s are not in the figures", f.Index, of, f.Name, f.Status, f.Problem, Count(f.Rate)))
		}
	}
	if r.GeneratorsFailed > 0 {
		var merged []string
		for _, f := range figs {
			if f.Merged {
				merged = append(merged, strconv.Itoa(f.Index))
			}
		}
		who := "generator " + merged[0]
		if len(merged) > 1 {
			who = "generators " + strings.Join(merged[:len(merged)-1], ", ") + " and " + merged[len(merged)-1]
		}
		notes = append(notes, fmt.Sprintf("the figures are %s's only: %s of the %s ops/s scheduled; the run is not a valid measurement of the rate asked", who, Count(r.Rate), Count(cfg.Rate)))
	}
	skew := 0.0
	for _, f := range figs {
		if f.Merged {
			skew = max(skew, f.StartSkewMs)
		}
	}
	r.Diagnosis = append(notes, r.Diagnosis...)
	r.Diagnosis = append(r.Diagnosis, fmt.Sprintf("%d generators of %s ops/s each started together (the latest %s ms after the coordinated start, in the cluster's clock); their counts are summed and their latency histograms merged second by second", len(good), Count(cfg.Rate/float64(max(of, 1))), Num(skew)))
	return r, nil
}

// judge reads one generator's report and says whether it can be merged.
func judge(out cluster.GeneratorOutcome, of int) (rep *report, problem, status string) {
	exit := ""
	switch {
	case out.Exited && out.Reason != "":
		exit = fmt.Sprintf(" (exit %d, %s)", out.ExitCode, out.Reason)
	case out.Exited:
		exit = fmt.Sprintf(" (exit %d)", out.ExitCode)
	case out.Reason != "":
		exit = " (" + out.Reason + ")"
	}
	rep, err := parseReport(out.Output, out.Index, of)
	switch {
	case errors.Is(err, errTorn) && rep.hdr.Type == "":
		if out.Err != nil {
			return nil, out.Err.Error() + exit, GenFailed
		}
		return nil, "it never reported" + exit, GenMissing
	case errors.Is(err, errTorn):
		return rep, fmt.Sprintf("its report stops after %d measured second%s, without its end line%s", len(rep.secs), plural(len(rep.secs)), exit), GenDied
	case err != nil:
		return rep, "its report is not sound: " + err.Error() + exit, GenGarbled
	case rep.end.Error != "":
		return rep, "it could not run: " + rep.end.Error + exit, GenFailed
	case out.Err != nil:
		return rep, out.Err.Error() + exit, GenFailed
	case out.Exited && out.ExitCode != 0:
		return rep, "its report is whole but it exited with an error" + exit, GenFailed
	}
	return rep, "", GenOK
}

// mergeReports merges sound reports second by second into a Result, as
// the engine summarises its own series (engine.result).
func mergeReports(cfg MergeConfig, reps []*report) *Result {
	// Shards by their primary's address, in the order first seen.
	var addrs []string
	index := map[string]int{}
	for _, rp := range reps {
		for _, a := range rp.hdr.Shards {
			if _, ok := index[a]; !ok {
				index[a] = len(addrs)
				addrs = append(addrs, a)
			}
		}
	}
	ser := &series{shards: len(addrs), totalH: newHists(), scratch: newHists()}
	for range addrs {
		ser.shardH = append(ser.shardH, newShardHist())
	}
	rate, cores, elapsed := 0.0, 0, time.Duration(0)
	n := 0
	for _, rp := range reps {
		n = max(n, len(rp.secs))
		rate += rp.hdr.Rate
		if cores == 0 || rp.hdr.Cores < cores {
			cores = rp.hdr.Cores
		}
		elapsed = max(elapsed, time.Duration(rp.end.ElapsedNs))
		ser.warmedAt = max(ser.warmedAt, time.Duration(rp.end.WarmedNs))
		for i, enc := range rp.end.ShardHist {
			if d, err := hdrhistogram.Decode(enc); err == nil { // checked by parseReport
				ser.shardH[index[rp.hdr.Shards[i]]].Merge(d)
			}
		}
	}
	for i := 0; i < n; i++ {
		sec := second{Shard: newShardFigs(len(addrs))}
		h := newHists()
		for _, rp := range reps {
			if i >= len(rp.secs) {
				continue
			}
			s := &rp.secs[i]
			sec.At = max(sec.At, time.Duration(s.AtNs))
			sec.Len = max(sec.Len, time.Duration(s.LenNs))
			sec.C.add(&s.Counts)
			sec.CPU = max(sec.CPU, s.CPU) // the busiest generator
			for j, a := range rp.hdr.Shards {
				k := index[a]
				sec.Shard.ok[k] += s.ShardOK[j]
				sec.Shard.backlog[k] += s.ShardBacklog[j]
				sec.Shard.lagNs[k] = max(sec.Shard.lagNs[k], s.ShardLagNs[j])
			}
			h.merge(&rp.hist[i])
		}
		for o := range sec.H {
			for k := range sec.H[o] {
				sec.Sum[o][k] = quantiles(h[o][k])
				if h[o][k].TotalCount() > 0 {
					sec.H[o][k], _ = h[o][k].Encode(hdrhistogram.V2CompressedEncodingCookieBase)
				}
			}
		}
		ser.total.add(&sec.C)
		ser.totalH.merge(&h)
		ser.seconds = append(ser.seconds, sec)
	}
	names := make([]string, len(addrs))
	for i, a := range addrs {
		names[i] = a
		if nm, ok := cfg.NodeNames[a]; ok {
			names[i] = nm
		}
	}
	e := &engine{o: Options{Rate: rate, Concurrency: cfg.Concurrency, Duration: cfg.Duration}, series: ser, shardAddrs: addrs,
		gaps: mergeGaps(names, addrs, reps)}
	e.o.KV.Pipeline = cfg.Pipeline
	r := e.result(elapsed)
	r.Cores = cores
	return r
}

// mergeGaps: the merged load had no success on a shard while no
// generator had one, so its gaps are the intersection of the
// generators' gaps (each lists every gap of 250 ms or more; a merged gap
// that long lies in one of each generator's).
func mergeGaps(names, addrs []string, reps []*report) *gapTracker {
	g := newGapTracker(names)
	type span struct{ from, to float64 }
	for i, a := range addrs {
		var acc []span
		started := false
		for _, rp := range reps {
			if !slices.Contains(rp.hdr.Shards, a) {
				continue // this generator did not see the shard at all
			}
			var mine []span
			for _, gp := range rp.end.Gaps {
				if gp.Shard == a {
					mine = append(mine, span{gp.StartS, gp.StartS + gp.LengthS})
				}
			}
			if !started {
				acc, started = mine, true
				continue
			}
			var out []span
			for _, x := range acc {
				for _, y := range mine {
					if lo, hi := max(x.from, y.from), min(x.to, y.to); hi > lo {
						out = append(out, span{lo, hi})
					}
				}
			}
			acc = out
		}
		for _, s := range acc {
			if d := time.Duration((s.to - s.from) * float64(time.Second)); d >= gapWorth {
				g.note(i, time.Duration(s.from*float64(time.Second)), d)
			}
		}
	}
	return g
}
