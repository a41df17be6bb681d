package browsertest

import (
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/redline-dev/redline/harness"
	"github.com/redline-dev/redline/harness/bench"
	"github.com/redline-dev/redline/results"
)

// benchResult is a synthetic bench: 30 s at 20,000 ops/s on three shards,
// a scale-out from 10 s to 14 s that raises p99 and brings MOVED/ASK, n2
// slow for a second at 20 s, a capacity search of five steps and whole
// histograms; keys uniform (no hot-slot table).
func benchResult(t *testing.T) *bench.Result {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 7))
	hists := map[string][]byte{}
	for _, key := range []string{"get.corrected", "get.raw", "set.corrected", "set.raw"} {
		h := hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
		for range 50000 {
			us := 200 + rng.ExpFloat64()*300
			if strings.HasSuffix(key, "corrected") && rng.IntN(200) == 0 {
				us += 20000 * rng.Float64()
			}
			_ = h.RecordValue(int64(us))
		}
		enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		hists[key] = enc
	}
	r := &bench.Result{DurationS: 30, WarmupS: 2, Rate: 20000, Workers: 10, Pipeline: 1, Throughput: 19950, Cores: 2, CPUMaxCores: 0.7,
		LagMaxMs: 850, DispatchLagMaxMs: 3, LateOps: 900, Histograms: hists,
		Ops: map[string]*bench.OpFigures{
			"get":   {OKPerS: 18136, HitsPerS: 18000, MissesPerS: 136, KBPerS: 1771, Corrected: bench.Quantiles{Count: 544080, Mean: 0.6, P50: 0.45, P90: 0.9, P99: 2.1, P999: 14, Max: 850}, Raw: bench.Quantiles{Count: 544080, Mean: 0.5, P50: 0.4, P99: 1.5, P999: 4}},
			"set":   {OKPerS: 1814, KBPerS: 177, Corrected: bench.Quantiles{Count: 54420, Mean: 0.7, P50: 0.5, P90: 1, P99: 2.4, P999: 15, Max: 840}, Raw: bench.Quantiles{Count: 54420, Mean: 0.6, P50: 0.45, P99: 1.7, P999: 4.2}},
			"total": {OKPerS: 19950, Corrected: bench.Quantiles{Count: 598500, Mean: 0.61, P50: 0.46, P90: 0.9, P99: 2.2, P999: 14, Max: 850}, Raw: bench.Quantiles{Count: 598500, Mean: 0.5, P50: 0.4, P99: 1.5, P999: 4}},
		},
		Load: &bench.LoadReport{ShardSkew: 1.02, SlotSkew: 1.9, SlotsTouched: 9000, Shards: []bench.ShardLoad{{Shard: "n1", Share: 0.33}, {Shard: "n2", Share: 0.34}, {Shard: "n3", Share: 0.33}},
			TopSlots:   []bench.SlotLoad{{Slot: 17, Shard: "n1", Share: 0.0004}},
			SlotsMoved: 4096, Nodes: []bench.NodeServed{{Node: "n1", Addr: "10.0.0.2:6379", SlotsStart: 5461, SlotsEnd: 4096, OpsPerS: 5600, Share: 0.28},
				{Node: "n7", Addr: "10.0.0.8:6379", SlotsStart: 0, SlotsEnd: 4096, OpsPerS: 3100, Share: 0.155}}},
	}
	for i, name := range []string{"n1", "n2", "n3"} {
		r.Shards = append(r.Shards, bench.ShardGap{Shard: name, Addr: "10.0.0." + string(rune('2'+i)) + ":6379", OK: 199500,
			Corrected: bench.Quantiles{Count: 199500, P50: 0.46, P99: 2.2, P999: 14, Max: 850}, LagMaxMs: map[bool]float64{true: 850, false: 2}[name == "n2"]})
	}
	for s := 1; s <= 30; s++ {
		T := 2 + float64(s)
		p := bench.Second{T: T, OKPerS: 19950, GetPerS: 18136, SetPerS: 1814, P50Ms: 0.45, P99Ms: 1.9, P999Ms: 6, RawP99Ms: 1.4, CPUCores: 0.6,
			ShardOKPerS: []float64{6650, 6650, 6650}, ShardLagMaxMs: []float64{0.5, 0.5, 0.5}, LagMaxMs: 0.5, DispatchLagMaxMs: 0.3}
		if T > 12 && T <= 16 {
			p.P99Ms, p.P999Ms, p.MovedPerS, p.AskPerS, p.TryAgain = 8, 30, 120, 40, 3
		}
		if T == 22 {
			p.P99Ms, p.P999Ms, p.LagMaxMs = 600, 840, 850
			p.ShardLagMaxMs = []float64{0.5, 850, 0.6}
			p.ShardOKPerS = []float64{6650, 1200, 6650}
		}
		r.Seconds = append(r.Seconds, p)
	}
	r.Events = []bench.Event{{AtS: 12, Type: "invoke", F: "start-scale-out"}, {AtS: 16, Type: "info", F: "start-scale-out",
		Detail: []byte(`{"added":"n7","slots_moved":4096,"keys_moved":2500}`)}}
	r.Windows = []bench.Window{{Fault: "scale-out", StartS: 12, EndS: 16, TookS: 4, Detail: "added n7, 4,096 slots moved, 2,500 keys moved",
		Before: bench.WindowFigures{FromS: 7, ToS: 12, Seconds: 5, OKPerS: 19950, P50Ms: 0.45, P99Ms: 1.9, P999Ms: 6},
		During: bench.WindowFigures{FromS: 12, ToS: 16, Seconds: 4, OKPerS: 19900, P50Ms: 0.6, P99Ms: 8, P999Ms: 30, Moved: 480, Ask: 160, TryAgain: 12},
		After:  bench.WindowFigures{FromS: 16, ToS: 21, Seconds: 5, OKPerS: 19950, P50Ms: 0.44, P99Ms: 1.8, P999Ms: 6}}}
	r.Diagnosis = []string{"slow shard: ops to some shards waited in their node's queue past their intended time, at worst (n2 850 ms in 1 s), while the other shards' ops were sent on time"}
	slo, err := bench.ParseSLO("p99<=2ms")
	if err != nil {
		t.Fatal(err)
	}
	c := &bench.Capacity{SLO: slo, Rate: 20000, Bound: 22000, Confirmed: true, LimitKind: "shard",
		Limit: "at 22,000 ops/s: shard n2 3.1 ms missed p99<=2ms while n1, n3 met it"}
	for _, rate := range []float64{5000, 10000, 20000, 40000, 30000, 25000, 22000, 20000} {
		p99 := 0.5 / (1 - rate/45000)
		st := bench.Step{Rate: rate, OKPerS: rate, Latency: map[string]float64{"p50": p99 / 4, "p99": p99, "p99.9": 2 * p99}, Cores: 2, GeneratorCores: rate / 60000, Stable: true}
		for i, name := range []string{"n1", "n2", "n3"} {
			st.Shards = append(st.Shards, bench.ShardStep{Shard: name, OKPerS: rate / 3, P99Ms: p99 * (1 + 0.2*float64(i))})
		}
		bench.Judge(&st, slo)
		c.Steps = append(c.Steps, st)
	}
	best := c.Steps[2]
	c.Best = &best
	r.Capacity = c
	return r
}

// The bench report, opened from disk in headless Chromium, has the parts
// a load-test report needs: a headline in words, the configuration, the
// capacity curve, ops by type, plots with ticks, units and the change
// shaded, the percentile spectrum with its exports linked, shards by node
// name, the change's windows with MOVED/ASK/TRYAGAIN, no hot-slot table
// for uniform keys, numbers formatted for people, and no console error.
func TestBenchReportInBrowser(t *testing.T) {
	store := results.Store{Root: t.TempDir()}
	run, err := store.NewRun("bench-reference-kv-none", time.Date(2026, 12, 1, 22, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(run.Path("config.json"), []byte(`{"target":"reference","nodes":6,"replicas":1,"workload":["kv"],"rate":0,"concurrency":10,"seed":42,"kv":{"set_ratio":1,"get_ratio":10,"keys":10000,"pattern":"uniform","pipeline":1},"capacity":{"slo":"p99<=2ms","step":"5s","warmup":"2s"},"key_prefix":"redline:x:"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := harness.SaveLoad(run, benchResult(t)); err != nil {
		t.Fatal(err)
	}
	p := newPage(t)
	p.open("file://" + run.Path("report.html"))
	p.wantPlots("capacity-curve", "throughput", "latency", "errors", "generator", "spectrum", "shard-throughput", "shard-lag")

	text := func(sel string) string {
		return eval[string](p, `(document.querySelector('`+sel+`')||{innerText:''}).innerText`)
	}
	if h := text("#headline"); !strings.Contains(h, "Capacity 20,000 ops/s at p99<=2ms (met twice)") || !strings.Contains(h, "shard n2") ||
		!strings.Contains(h, "19,950 ops/s delivered of 20,000 scheduled") || !strings.Contains(h, "scale-out from 12 s to 16 s (the change took 4 s): p99 1.9 ms before, 8 ms during, 1.8 ms after") {
		t.Errorf("headline:\n%s", h)
	}
	if c := text("#config"); !strings.Contains(c, "target\treference") || !strings.Contains(c, "capacity.slo\tp99<=2ms") || strings.Contains(c, "key_prefix") {
		t.Errorf("configuration block:\n%s", c)
	}
	// Ops split by type, numbers for people.
	if n := eval[int](p, `document.querySelectorAll('#ops tr.op-get, #ops tr.op-set, #ops tr.op-total').length`); n != 3 {
		t.Errorf("%d rows of ops by type, want GET, SET and total", n)
	}
	if o := text("#ops"); !strings.Contains(o, "18,136") || strings.Contains(o, "e+") {
		t.Errorf("ops table:\n%s", o)
	}
	// Ticks and units on every plot; the change shaded on the time plots.
	type axes struct {
		Plot         string `json:"plot"`
		XTicks       int    `json:"x"`
		YTicks       int    `json:"y"`
		XUnit, YUnit string
		Faults       int `json:"faults"`
	}
	for _, a := range eval[[]axes](p, `Array.from(document.querySelectorAll('svg.plot')).map(s => ({plot: s.dataset.plot,
	    x: s.querySelectorAll('.xtick').length, y: s.querySelectorAll('.ytick').length,
	    XUnit: (s.querySelector('.xunit')||{textContent:''}).textContent, YUnit: (s.querySelector('.yunit')||{textContent:''}).textContent,
	    faults: s.querySelectorAll('rect.fault').length}))`) {
		if a.XTicks < 3 || a.YTicks < 2 || a.XUnit == "" || a.YUnit == "" {
			t.Errorf("plot %s: %d x ticks, %d y ticks, units %q / %q", a.Plot, a.XTicks, a.YTicks, a.XUnit, a.YUnit)
		}
		if (a.Plot == "throughput" || a.Plot == "latency" || a.Plot == "shard-lag") && a.Faults != 1 {
			t.Errorf("plot %s shades %d windows, want the scale-out", a.Plot, a.Faults)
		}
	}
	if n := eval[int](p, `document.querySelectorAll('svg[data-plot="throughput"] .series').length`); n != 3 {
		t.Errorf("throughput plot has %d lines, want total, GET and SET", n)
	}
	if n := eval[int](p, `document.querySelectorAll('svg[data-plot="capacity-curve"] .hline').length`); n != 1 {
		t.Errorf("the capacity curve draws %d SLO lines", n)
	}
	if s := text("#spectrum"); !strings.Contains(s, "p99.99") || !strings.Contains(s, "corrected") || !strings.Contains(s, "raw") {
		t.Errorf("spectrum section:\n%s", s)
	}
	if links := eval[[]string](p, `Array.from(document.querySelectorAll('#exports a')).map(a => a.getAttribute('href'))`); len(links) != 7 || links[0] != "latency-total-corrected.hgrm" {
		t.Errorf("export links %v", links)
	}
	hgrm, err := os.ReadFile(run.Path("latency-total-corrected.hgrm"))
	if err != nil || !strings.Contains(string(hgrm), "1/(1-Percentile)") || !strings.Contains(string(hgrm), "#[Mean") {
		t.Errorf("the .hgrm export is not HdrHistogram's percentile distribution: %v\n%.400s", err, hgrm)
	}
	if s := text("#shards"); !strings.Contains(s, "n2\t10.0.0.3:6379") {
		t.Errorf("shards are not by node name with the address beside:\n%s", s)
	}
	if w := text("#windows"); !strings.Contains(w, "added n7, 4,096 slots moved, 2,500 keys moved") || !strings.Contains(w, "480\t160\t12") {
		t.Errorf("windows:\n%s", w)
	}
	if eval[int](p, `document.querySelectorAll('#load').length`) != 0 || !strings.Contains(text(".load-even"), "keys spread evenly") {
		t.Errorf("uniform keys got a hot-slot table")
	}
	// The scale-out moved slots: who answered the ops, the added node too.
	if n := text("#nodes-served"); !strings.Contains(n, "n7\t10.0.0.8:6379\t0\t4,096\t3,100") {
		t.Errorf("nodes served after the scale-out:\n%s", n)
	}
	if n := text("#notes"); !strings.Contains(n, "slow shard") {
		t.Errorf("notes:\n%s", n)
	}
	if all := text("body"); strings.Contains(all, "e+0") || strings.Contains(all, "NaN") {
		t.Errorf("a number not formatted for people on the page")
	}
	p.screenshot("bench-report")
	for _, sec := range []string{"headline", "config", "capacity", "ops", "spectrum", "shards", "windows"} {
		p.elementShot("bench-report-"+sec, "#"+sec)
	}
	if broken := p.brokenLinks(); len(broken) > 0 {
		t.Errorf("broken links: %v", broken)
	}
	p.noConsoleErrors()
}

// The page of two benches (a --versus or 'results compare'): the
// configurations side by side with the differences named and marked,
// both capacity curves and both runs' lines on every time plot.
func TestBenchCompareInBrowser(t *testing.T) {
	a, b := benchResult(t), benchResult(t)
	b.Capacity.Rate, b.Throughput = 26000, 25950
	for i := range b.Capacity.Steps {
		b.Capacity.Steps[i].OKPerS *= 1.3
	}
	page := bench.Page("redline bench: A vs B", []bench.Named{
		{Name: "A 3 primaries", R: a, Config: map[string]string{"target": "redis", "nodes": "6", "seed": "42"}},
		{Name: "B 4 primaries", R: b, Config: map[string]string{"target": "redis", "nodes": "8", "seed": "42"}},
	})
	f := t.TempDir() + "/compare.html"
	if err := os.WriteFile(f, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	p := newPage(t)
	p.open("file://" + f)
	p.wantPlots("capacity-curve", "throughput", "latency", "spectrum")
	if d := eval[string](p, `document.getElementById('config-differ').innerText`); !strings.Contains(d, "nodes") || strings.Contains(d, "target") || strings.Contains(d, "seed") {
		t.Errorf("config differences: %q", d)
	}
	if n := eval[int](p, `document.querySelectorAll('#config tr.differ').length`); n != 1 {
		t.Errorf("%d configuration rows marked as differing, want nodes only", n)
	}
	for plot, want := range map[string]int{"capacity-curve": 2, "throughput": 2, "latency": 4, "spectrum": 4} {
		if n := eval[int](p, `document.querySelectorAll('svg[data-plot="`+plot+`"] .series').length`); n != want {
			t.Errorf("plot %s overlays %d lines, want %d", plot, n, want)
		}
	}
	if h := eval[string](p, `document.getElementById('headline').innerText`); !strings.Contains(h, "A 3 primaries: Capacity 20,000") || !strings.Contains(h, "B 4 primaries: Capacity 26,000") {
		t.Errorf("headline:\n%s", h)
	}
	p.screenshot("bench-compare")
	p.noConsoleErrors()
}
