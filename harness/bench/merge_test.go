package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/redline-dev/redline/cluster"
)

var testShards = []string{"10.0.0.1:6379", "10.0.0.2:6379", "10.0.0.3:6379"}

// fakeReport writes generator index's report as RunGenerator does: a
// header, secs measured seconds of seeded random traffic (latencies of a
// few hundred µs with a tail), and the end line with the totals.
func fakeReport(t *testing.T, index, of int, seed uint64, secs int) []byte {
	t.Helper()
	var b bytes.Buffer
	rw := &reportWriter{w: bufio.NewWriter(&b)}
	rng := rand.New(rand.NewPCG(seed, 7))
	rw.line(genHeader{Type: "header", Index: index, Of: of, Host: fmt.Sprintf("gen-%d", index), Rate: 1000, Cores: 2,
		StartAtNs: 1e18, StartedNs: 1e18 + int64(rng.IntN(5e6)), ClockRTTNs: 200e3, Shards: testShards})
	total := newHists()
	var c Counts
	shardH := []*hdrhistogram.Histogram{newShardHist(), newShardHist(), newShardHist()}
	for s := 1; s <= secs; s++ {
		sec := second{At: time.Duration(s) * time.Second, Len: time.Second, CPU: 0.3, Shard: newShardFigs(len(testShards))}
		h := newHists()
		for i := 0; i < 900+rng.IntN(200); i++ {
			op := opGet
			if rng.IntN(4) == 0 {
				op = opSet
			}
			lat := time.Duration(100+rng.IntN(400)) * time.Microsecond
			if rng.IntN(100) == 0 {
				lat = time.Duration(5+rng.IntN(50)) * time.Millisecond
			}
			record(h[op][corrected], lat)
			record(h[op][raw], lat/2)
			sec.C.OK[op]++
			sh := rng.IntN(len(testShards))
			sec.Shard.ok[sh]++
			record(shardH[sh], lat)
		}
		sec.C.Errors[opSet] = int64(rng.IntN(3))
		for o := range sec.H {
			for k := range sec.H[o] {
				if h[o][k].TotalCount() > 0 {
					sec.H[o][k], _ = h[o][k].Encode(hdrhistogram.V2CompressedEncodingCookieBase)
				}
			}
		}
		c.add(&sec.C)
		total.merge(&h)
		rw.line(sec.wire())
	}
	end := genEnd{Type: "end", Seconds: secs, ElapsedNs: int64(secs) * 1e9, Counts: c}
	r := &Result{}
	r.encodeHists(total)
	end.Hist = r.Histograms
	for _, h := range shardH {
		enc, _ := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		end.ShardHist = append(end.ShardHist, enc)
	}
	rw.line(end)
	if rw.err != nil {
		t.Fatal(rw.err)
	}
	return b.Bytes()
}

func testMergeConfig(of int) MergeConfig {
	return MergeConfig{Rate: 1000 * float64(of), Duration: 10 * time.Second, Concurrency: 4, Pipeline: 1}
}

func outcomes(reports ...[]byte) []cluster.GeneratorOutcome {
	var out []cluster.GeneratorOutcome
	for i, r := range reports {
		out = append(out, cluster.GeneratorOutcome{Index: i + 1, Name: fmt.Sprintf("pod-%d", i+1), Output: r, Exited: true})
	}
	return out
}

// endOf decodes a report's end line (the generator's own totals).
func endOf(t *testing.T, rep []byte) genEnd {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(string(rep)), "\n")
	last := lines[len(lines)-1]
	var e genEnd
	if err := json.Unmarshal([]byte(last[len(GeneratorMarker)+10:]), &e); err != nil {
		t.Fatal(err)
	}
	return e
}

// sumAndMerge is what the merged report must say: the counts of the
// given reports summed and their end histograms merged.
func sumAndMerge(t *testing.T, reps ...[]byte) (Counts, hists) {
	t.Helper()
	var c Counts
	h := newHists()
	for _, rep := range reps {
		e := endOf(t, rep)
		c.add(&e.Counts)
		for o := range h {
			for k := range h[o] {
				if enc, ok := e.Hist[histKey(o, k)]; ok {
					d, err := hdrhistogram.Decode(enc)
					if err != nil {
						t.Fatal(err)
					}
					h[o][k].Merge(d)
				}
			}
		}
	}
	return c, h
}

// Three generators' reports merge into one Result whose totals are the
// sum of theirs and whose percentiles are those of their histograms
// merged: overall, per op, and second by second.
func TestMergeGeneratorsIsExact(t *testing.T) {
	reps := [][]byte{fakeReport(t, 1, 3, 1, 10), fakeReport(t, 2, 3, 2, 10), fakeReport(t, 3, 3, 3, 10)}
	r, err := MergeGenerators(testMergeConfig(3), outcomes(reps...))
	if err != nil {
		t.Fatal(err)
	}
	if r.GeneratorsFailed != 0 || len(r.Generators) != 3 {
		t.Fatalf("generators %+v, %d failed", r.Generators, r.GeneratorsFailed)
	}
	wantC, wantH := sumAndMerge(t, reps...)
	if r.Counts != wantC {
		t.Errorf("merged counts %+v, want the sum %+v", r.Counts, wantC)
	}
	var sumOK int64
	for _, g := range r.Generators {
		sumOK += g.OK
	}
	if r.Counts.TotalOK() != sumOK || sumOK == 0 {
		t.Errorf("merged %d ok ops, the generators counted %d", r.Counts.TotalOK(), sumOK)
	}
	all := newHist()
	for o := range opNames {
		all.Merge(wantH[o][corrected])
		if got, want := r.Ops[opNames[o]].Corrected, quantiles(wantH[o][corrected]); got != want {
			t.Errorf("%s: merged %+v, want %+v", opNames[o], got, want)
		}
		if got, want := r.Ops[opNames[o]].Raw, quantiles(wantH[o][raw]); got != want {
			t.Errorf("%s raw: merged %+v, want %+v", opNames[o], got, want)
		}
	}
	if got, want := r.Ops["total"].Corrected, quantiles(all); got != want {
		t.Errorf("total: merged %+v, want %+v", got, want)
	}
	if h := r.Hist("total", "corrected"); h == nil || !h.Equals(all) {
		t.Error("the stored total histogram is not the merge of the generators'")
	}
	if r.Percentile(99.99) != float64(all.ValueAtQuantile(99.99))/1000 {
		t.Errorf("p99.99 %v, want %v", r.Percentile(99.99), float64(all.ValueAtQuantile(99.99))/1000)
	}
	// Second by second: each merged second is the three generators' same second.
	if len(r.Seconds) != 10 {
		t.Fatalf("%d seconds, want 10", len(r.Seconds))
	}
	for i := range r.Seconds {
		var c Counts
		h := newHist()
		for g, rep := range reps {
			p, err := parseReport(rep, g+1, 3)
			if err != nil {
				t.Fatal(err)
			}
			c.add(&p.secs[i].Counts)
			for o := range opNames {
				h.Merge(p.hist[i][o][corrected])
			}
		}
		if got := r.Seconds[i]; got.P99Ms != quantiles(h).P99 || got.OKPerS != float64(c.TotalOK()) {
			t.Errorf("second %d: ok/s %v p99 %v, want %d and %v", i+1, got.OKPerS, got.P99Ms, c.TotalOK(), quantiles(h).P99)
		}
	}
	var shardOK int64
	for _, s := range r.Shards {
		shardOK += s.OK
	}
	if len(r.Shards) != 3 || shardOK != r.Counts.TotalOK() {
		t.Errorf("%d shards with %d ok ops, want 3 with %d", len(r.Shards), shardOK, r.Counts.TotalOK())
	}
	if r.Rate != 3000 || r.RequestedRate != 3000 {
		t.Errorf("rate %v requested %v, want 3000", r.Rate, r.RequestedRate)
	}
}

// A generator that died (its report stops mid-way), never reported, or
// wrote a report that does not hold together is named and left out; the
// others are merged exactly; the run says it is not the rate asked.
func TestMergeGeneratorsNamesTheOnesLeftOut(t *testing.T) {
	good1, good3 := fakeReport(t, 1, 3, 1, 10), fakeReport(t, 3, 3, 3, 10)
	full2 := fakeReport(t, 2, 3, 2, 10)
	flip := func(b []byte, at int) []byte {
		c := append([]byte(nil), b...)
		c[at] ^= 0x01
		return c
	}
	lines2 := strings.SplitAfter(string(full2), "\n")
	cases := []struct {
		name   string
		out    cluster.GeneratorOutcome
		status string
		want   string
	}{
		{"died", cluster.GeneratorOutcome{Output: []byte(strings.Join(lines2[:5], "")), Exited: true, ExitCode: 137, Reason: "OOMKilled"}, GenDied, "stops after 4 measured seconds"},
		{"torn mid-line", cluster.GeneratorOutcome{Output: full2[:len(full2)/2]}, GenDied, "without its end line"},
		{"never reported", cluster.GeneratorOutcome{Output: nil, Exited: true, ExitCode: 1}, GenMissing, "never reported"},
		{"runtime could not run it", cluster.GeneratorOutcome{Err: fmt.Errorf("pod unschedulable")}, GenFailed, "unschedulable"},
		{"a flipped bit", cluster.GeneratorOutcome{Output: flip(full2, len(lines2[0])+len(lines2[1])+200)}, GenGarbled, ""},
		{"log lines only", cluster.GeneratorOutcome{Output: []byte("starting\npopulated\n")}, GenMissing, "never reported"},
		{"whole but exited 2", cluster.GeneratorOutcome{Output: full2, Exited: true, ExitCode: 2}, GenFailed, "exited with an error"},
		{"report of another generator", cluster.GeneratorOutcome{Output: good1}, GenGarbled, "expected 2 of 3"},
		{"its own error", cluster.GeneratorOutcome{Output: []byte(GeneratorMarker + " " + signed(`{"type":"end","error":"cannot reach the cluster"}`))}, GenFailed, "cannot reach the cluster"},
		{"lines after the end", cluster.GeneratorOutcome{Output: append(append([]byte(nil), full2...), []byte(lines2[1])...)}, GenGarbled, "after the end"},
		{"seconds out of order", cluster.GeneratorOutcome{Output: []byte(lines2[0] + lines2[2] + lines2[1] + strings.Join(lines2[3:], ""))}, GenGarbled, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			outs := outcomes(good1, nil, good3)
			tc.out.Index, tc.out.Name = 2, "pod-2"
			outs[1] = tc.out
			r, err := MergeGenerators(testMergeConfig(3), outs)
			if err != nil {
				t.Fatal(err)
			}
			g := r.Generators[1]
			if g.Merged || r.GeneratorsFailed != 1 {
				t.Fatalf("generator 2 %+v merged (%d failed)", g, r.GeneratorsFailed)
			}
			if tc.status != "" && g.Status != tc.status || !strings.Contains(g.Problem, tc.want) {
				t.Errorf("status %q problem %q, want %q with %q", g.Status, g.Problem, tc.status, tc.want)
			}
			named := false
			for _, d := range r.Diagnosis {
				if strings.Contains(d, "generator 2 of 3 (pod-2)") && strings.Contains(d, "not in the figures") {
					named = true
				}
			}
			if !named {
				t.Errorf("the diagnosis does not name generator 2: %q", r.Diagnosis)
			}
			wantC, _ := sumAndMerge(t, good1, good3)
			if r.Counts != wantC {
				t.Errorf("merged counts %+v, want generators 1 and 3's %+v", r.Counts, wantC)
			}
			if r.Rate != 2000 || r.RequestedRate != 3000 {
				t.Errorf("rate %v of %v, want 2000 of 3000", r.Rate, r.RequestedRate)
			}
		})
	}
}

// signed is a report line's checksum and payload.
func signed(payload string) string {
	var b bytes.Buffer
	rw := &reportWriter{w: bufio.NewWriter(&b)}
	var v any
	_ = json.Unmarshal([]byte(payload), &v)
	rw.line(v)
	return strings.TrimPrefix(b.String(), GeneratorMarker+" ")
}

// A report whose lines are each well signed but lie to one another is
// garbled: totals that are not the sum of the seconds, a histogram that
// holds fewer ops than the second counts.
func TestMergeGeneratorsCatchesConsistentLies(t *testing.T) {
	rep := fakeReport(t, 1, 1, 9, 4)
	lines := strings.Split(strings.TrimSpace(string(rep)), "\n")
	payload := func(l string) map[string]any {
		var m map[string]any
		if err := json.Unmarshal([]byte(l[len(GeneratorMarker)+10:]), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	resign := func(i int, edit func(map[string]any)) []byte {
		m := payload(lines[i])
		edit(m)
		b, _ := json.Marshal(m)
		out := append([]string(nil), lines...)
		out[i] = GeneratorMarker + " " + signed(string(b))
		return []byte(strings.Join(out, "\n") + "\n")
	}
	last := len(lines) - 1
	for name, bad := range map[string][]byte{
		"end totals inflated": resign(last, func(m map[string]any) {
			c := m["counts"].(map[string]any)
			c["ok"].([]any)[0] = c["ok"].([]any)[0].(float64) + 1000
		}),
		"a second's count without its latencies": resign(2, func(m map[string]any) {
			c := m["counts"].(map[string]any)
			c["ok"].([]any)[0] = c["ok"].([]any)[0].(float64) + 1
		}),
		"a second left out of the end": resign(last, func(m map[string]any) { m["seconds"] = 3.0 }),
		"a histogram from another second": resign(2, func(m map[string]any) {
			m["hist"] = payload(lines[3])["hist"]
		}),
		"an unknown field": resign(1, func(m map[string]any) { m["rate_override"] = 5.0 }),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := MergeGenerators(testMergeConfig(1), outcomes(bad))
			if err == nil || !strings.Contains(err.Error(), "garbled") && !strings.Contains(err.Error(), "not sound") {
				t.Fatalf("merged a lying report: %v", err)
			}
		})
	}
	if _, err := MergeGenerators(testMergeConfig(1), outcomes(rep)); err != nil {
		t.Fatalf("the untouched report: %v", err)
	}
}

// A generator that started over a second late is left out, and one
// within the tolerance is merged with its skew said.
func TestMergeGeneratorsLateStart(t *testing.T) {
	rep := fakeReport(t, 2, 2, 5, 3)
	lines := strings.SplitAfter(string(rep), "\n")
	var h genHeader
	_ = json.Unmarshal([]byte(strings.TrimSpace(lines[0])[len(GeneratorMarker)+10:]), &h)
	h.StartedNs = h.StartAtNs + int64(3*time.Second)
	b, _ := json.Marshal(h)
	lines[0] = GeneratorMarker + " " + signed(string(b))
	r, err := MergeGenerators(testMergeConfig(2), outcomes(fakeReport(t, 1, 2, 4, 3), []byte(strings.Join(lines, ""))))
	if err != nil {
		t.Fatal(err)
	}
	if g := r.Generators[1]; g.Status != GenLate || g.Merged || !strings.Contains(g.Problem, "3,000 ms after") {
		t.Errorf("late generator: %+v", g)
	}
}

// A shard's merged availability gap is a time no generator had a success
// on it: the intersection of the generators' gaps.
func TestMergeGapsIntersects(t *testing.T) {
	a, b := testShards[0], testShards[1]
	rep := func(gaps ...Gap) *report {
		return &report{hdr: genHeader{Shards: testShards}, end: genEnd{Gaps: gaps}}
	}
	g := mergeGaps([]string{"n1", "n2", "n3"}, testShards, []*report{
		rep(Gap{Shard: a, StartS: 1, LengthS: 2}, Gap{Shard: b, StartS: 5, LengthS: 1}),
		rep(Gap{Shard: a, StartS: 2, LengthS: 2}),
		rep(Gap{Shard: a, StartS: 0, LengthS: 10}, Gap{Shard: b, StartS: 5, LengthS: 1}),
	})
	if len(g.gaps) != 1 || g.gaps[0].Shard != "n1" || g.gaps[0].StartS != 2 || g.gaps[0].LengthS != 1 {
		t.Errorf("gaps %+v, want n1's from 2 s for 1 s only (n2 was served by the second generator)", g.gaps)
	}
	if g.max[0] != time.Second || g.max[1] != 0 {
		t.Errorf("longest gaps %v", g.max)
	}
}

// The page of a run with a generator left out says so first, and lists
// every generator.
func TestPageNamesGeneratorsLeftOut(t *testing.T) {
	outs := outcomes(fakeReport(t, 1, 2, 1, 3), nil)
	outs[1].Exited, outs[1].ExitCode, outs[1].Reason = true, 137, "OOMKilled"
	r, err := MergeGenerators(testMergeConfig(2), outs)
	if err != nil {
		t.Fatal(err)
	}
	page := Page("t", []Named{{Name: "run", R: r}})
	for _, want := range []string{"Not a measurement of the 2,000 ops/s asked: 1 of 2 generators left out (generator 2 missing)", `<section id="generators">`, "OOMKilled", "ok, merged"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
