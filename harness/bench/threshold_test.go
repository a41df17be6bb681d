package bench

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseThresholds(t *testing.T) {
	ts, err := ParseThresholds(" p99<=2ms, p99.9<10ms,max<=1s, mean<=500us, errors<=0.1%, errors<=10, ops>=5000, throughput>4000ops/s, kb>=100, GET.p99<=1ms, SET.errors<=0, total.p90<=3ms")
	if err != nil {
		t.Fatal(err)
	}
	want := []Threshold{
		{Command: "total", Metric: "p99", Quantile: 99, Cmp: "<=", Limit: 2, Unit: "ms"},
		{Command: "total", Metric: "p99.9", Quantile: 99.9, Cmp: "<", Limit: 10, Unit: "ms"},
		{Command: "total", Metric: "max", Cmp: "<=", Limit: 1000, Unit: "ms"},
		{Command: "total", Metric: "mean", Cmp: "<=", Limit: 0.5, Unit: "ms"},
		{Command: "total", Metric: "errors", Cmp: "<=", Limit: 0.1, Unit: "%"},
		{Command: "total", Metric: "errors", Cmp: "<=", Limit: 10, Unit: "ops"},
		{Command: "total", Metric: "ops", Cmp: ">=", Limit: 5000, Unit: "ops/s"},
		{Command: "total", Metric: "ops", Cmp: ">", Limit: 4000, Unit: "ops/s"},
		{Command: "total", Metric: "kb", Cmp: ">=", Limit: 100, Unit: "KB/s"},
		{Command: "get", Metric: "p99", Quantile: 99, Cmp: "<=", Limit: 1, Unit: "ms"},
		{Command: "set", Metric: "errors", Cmp: "<=", Limit: 0, Unit: "ops"},
		{Command: "total", Metric: "p90", Quantile: 90, Cmp: "<=", Limit: 3, Unit: "ms"},
	}
	if len(ts) != len(want) {
		t.Fatalf("%d thresholds, want %d: %+v", len(ts), len(want), ts)
	}
	for i, w := range want {
		got := ts[i]
		got.Text = ""
		if got != w {
			t.Errorf("threshold %d (%q): %+v, want %+v", i, ts[i].Text, got, w)
		}
	}
	if ts[9].Text != "GET.p99<=1ms" {
		t.Errorf("text %q, want the threshold as written", ts[9].Text)
	}

	for _, bad := range []string{"", " , ", "p99", "p99=2ms", "p99<=2", "p99<=-1ms", "p100<=2ms", "px<=2ms",
		"errors<=150%", "errors<=1.5", "errors<=-1", "ops>=fast", "latency<=2ms", "DEL.p99<=1ms", "p99<=", "p99<=<2ms", "kb>=x"} {
		if _, err := ParseThresholds(bad); err == nil {
			t.Errorf("%q parsed; want an error", bad)
		} else if bad != "" && strings.TrimSpace(bad) != "," && !strings.Contains(err.Error(), strings.TrimSpace(bad)) {
			t.Errorf("%q: error %q does not name the threshold", bad, err)
		}
	}
}

// thresholdRun is a Result as a run stores it, without histograms: GETs
// at 900 ops/s with p99 1.5 ms, SETs at 100 ops/s, 2 failed GETs of 9002 (0.02% of 10002 ops).
func thresholdRun() *Result {
	return &Result{Throughput: 1000, Ops: map[string]*OpFigures{
		"get":   {OKPerS: 900, KBPerS: 120, Failed: 2, Corrected: Quantiles{Count: 9000, Mean: 0.6, P50: 0.5, P90: 0.9, P99: 1.5, P999: 4, Max: 9}},
		"set":   {OKPerS: 100, KBPerS: 30, Corrected: Quantiles{Count: 1000, Mean: 0.7, P50: 0.6, P90: 1, P99: 2.5, P999: 5, Max: 7}},
		"total": {OKPerS: 1000, KBPerS: 150, Failed: 2, Corrected: Quantiles{Count: 10000, Mean: 0.61, P50: 0.5, P90: 0.9, P99: 2, P999: 4.5, Max: 9}},
	}}
}

func TestEvaluateThresholds(t *testing.T) {
	r := thresholdRun()
	cases := []struct {
		spec  string
		value float64
		pass  bool
	}{
		{"p99<=2ms", 2, true},
		{"p99<2ms", 2, false},
		{"p99.9<=4ms", 4.5, false},
		{"max<=10ms", 9, true},
		{"mean<=0.5ms", 0.61, false},
		{"GET.p99<=1.5ms", 1.5, true},
		{"SET.p99<=2ms", 2.5, false},
		{"errors<=0.1%", 200.0 / 10002, true},
		{"errors<=0.01%", 200.0 / 10002, false},
		{"errors<=1", 2, false},
		{"errors<=2", 2, true},
		{"SET.errors<=0", 0, true},
		{"ops>=1000", 1000, true},
		{"ops>1000", 1000, false},
		{"GET.ops>=1000", 900, false},
		{"kb>=100", 150, true},
	}
	for _, c := range cases {
		ts, err := ParseThresholds(c.spec)
		if err != nil {
			t.Fatalf("%s: %v", c.spec, err)
		}
		got := EvaluateThresholds(r, ts)[0]
		if !got.Measured || got.Pass != c.pass || diff(got.Value, c.value) > 1e-9 {
			t.Errorf("%s: value %v measured %v pass %v, want %v pass %v", c.spec, got.Value, got.Measured, got.Pass, c.value, c.pass)
		}
	}

	// No ok SET: its latency was not measured, which fails the bound.
	r.Ops["set"] = &OpFigures{Failed: 5}
	ts, _ := ParseThresholds("p99<=2ms,SET.p99<=100ms,SET.errors<=10%")
	rs := EvaluateThresholds(r, ts)
	if !rs[0].Pass || rs[1].Measured || rs[1].Pass || rs[2].Value != 100 || rs[2].Pass {
		t.Errorf("%+v", rs)
	}
	if ThresholdsPassed(rs) || !ThresholdsPassed(rs[:1]) || !ThresholdsPassed(nil) {
		t.Errorf("ThresholdsPassed")
	}
	var out bytes.Buffer
	PrintThresholds(&out, rs)
	for _, want := range []string{"pass  p99<=2ms", "FAIL  SET.p99<=100ms", "measured nothing (no ok SET op)", "measured 100%", "limit <= 10%", "thresholds: 2 of 3 FAILED"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("printed thresholds lack %q:\n%s", want, out.String())
		}
	}
}

func diff(a, b float64) float64 {
	if a > b {
		return a - b
	}
	return b - a
}
