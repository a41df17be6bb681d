package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/clusteradmin/localcluster"
	"github.com/redline-dev/redline/harness/bench"
	"github.com/redline-dev/redline/history"
)

// TestBenchKVExternal runs `redline bench` open-loop against six
// redis-server processes on loopback and reads back what it stored.
func TestBenchKVExternal(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lc, err := localcluster.Start(ctx, t.TempDir(), 6, 1, time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Stop()

	res := t.TempDir()
	var out, errb bytes.Buffer
	code := run([]string{"bench", "--addrs", strings.Join(lc.Addrs, ","), "--rate", "2000", "--concurrency", "8",
		"--time-limit", "3s", "--ratio", "1:1", "--value-size", "10-200", "--key-pattern", "zipfian", "--pipeline", "2",
		"--keys", "500", "--history", "--results", res, "--seed", "3"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	last := lines[len(lines)-1]
	m := regexp.MustCompile(`^throughput: (\d+) ops/s$`).FindStringSubmatch(last)
	if m == nil {
		t.Fatalf("last line %q is not 'throughput: N ops/s'", last)
	}
	for _, want := range []string{"Sets", "Gets", "Totals", "raw p99", "open loop at 2000 ops/s"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
	latest := filepath.Join(res, "latest")
	for _, f := range []string{"config.json", "bench.json", "results.json", "report.html", "run.log", "ops.jsonl.gz"} {
		if _, err := os.Stat(filepath.Join(latest, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	for _, name := range []string{history.FileName, history.JSONLinesName} {
		if _, err := os.Stat(filepath.Join(latest, name)); err == nil {
			t.Errorf("bench wrote %s: the full history is off in bench", name)
		}
	}
	var r bench.Result
	b, _ := os.ReadFile(filepath.Join(latest, "bench.json"))
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	// 2000 ops/s for 3 s: the schedule holds 6000 ops; each is measured or,
	// if the run ended while the generator was behind (a loaded machine),
	// counted as unsent.
	got := r.Counts.TotalOK() + r.Counts.Failed()
	if got+r.Unsent != 6000 || got < 1000 {
		t.Errorf("%d ops measured and %d unsent, want the schedule's 6000", got, r.Unsent)
	}
	if r.Counts.Misses != 0 || r.Counts.Hits == 0 {
		t.Errorf("hits %d misses %d: the populated key space should always hit", r.Counts.Hits, r.Counts.Misses)
	}
	if len(r.Seconds) < 3 || len(r.Shards) != 3 {
		t.Fatalf("%d seconds, %d shards", len(r.Seconds), len(r.Shards))
	}
	// Capacity planning from the client side; Redis 7 has no SLOT-STATS.
	if r.Load == nil || len(r.Load.Shards) != 3 || r.Load.SlotsTouched == 0 || len(r.Load.TopSlots) == 0 ||
		r.Load.Server != nil || !strings.Contains(r.Load.ServerNote, "no primary supports CLUSTER SLOT-STATS") {
		t.Errorf("load report %+v", r.Load)
	}
	if !strings.Contains(out.String(), "load per shard") || !strings.Contains(out.String(), "hot slots") {
		t.Errorf("summary lacks the load tables:\n%s", out.String())
	}
	for _, s := range r.Seconds {
		sum := 0.0
		for _, v := range s.ShardOKPerS {
			sum += v
		}
		if len(s.ShardOKPerS) != 3 || math.Abs(sum-s.OKPerS) > 0.01 {
			t.Errorf("second %.1f: per-shard ok/s %v do not add up to %.1f", s.T, s.ShardOKPerS, s.OKPerS)
		}
	}
	f, err := os.Open(filepath.Join(latest, "ops.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	all, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if n := int64(bytes.Count(all, []byte("\n"))); n != got {
		t.Errorf("op log has %d lines, want %d", n, got)
	}

	// A second, closed-loop bench, then 'results compare' of the two.
	first, _ := filepath.EvalSymlinks(latest)
	out.Reset()
	if code := run([]string{"bench", "--addrs", strings.Join(lc.Addrs, ","), "--concurrency", "4", "--time-limit", "2s",
		"--keys", "500", "--results", res}, &out, &errb); code != 0 {
		t.Fatalf("second bench: exit %d: %s", code, errb.String())
	}
	second, _ := filepath.EvalSymlinks(latest)
	out.Reset()
	if code := run([]string{"results", "compare", first, second}, &out, &errb); code != 0 {
		t.Fatalf("compare: exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"throughput ops/s", "raw p99.9 ms", "CHANGE", "note: the runs differ in load"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("compare output lacks %q:\n%s", want, out.String())
		}
	}
	page, err := os.ReadFile(filepath.Join(second, "compare.html"))
	if err != nil || bytes.Count(page, []byte(`class="series"`)) < 12 {
		t.Errorf("compare.html should overlay both runs in every chart (%v)", err)
	}
}

func TestBenchBadArguments(t *testing.T) {
	cases := [][]string{
		{"bench", "--ratio", "x"},
		{"bench", "--ratio", "0:0"},
		{"bench", "--value-size", "0"},
		{"bench", "--value-size", "10-5"},
		{"bench", "--key-pattern", "gaussian"},
		{"bench", "--pipeline", "0"},
		{"bench", "--preset", "ycsb-z"},
		{"bench", "--workload", "kv,register"},
		{"run", "--workload", "kv"},
		{"bench", "--slo", "p99<2ms"},
		{"bench", "--slo", "p99<=2ms", "--slo-step", "100ms"},
		{"bench", "--slo", "p99<=2ms", "--slo-warmup", "1500ms"},
		{"bench", "--slo", "p99<=2ms", "--nemesis", "pause"},
		{"bench", "--slo", "p99<=2ms", "--rate", "5000", "--slo-max-rate", "1000"},
		{"bench", "--plan", "at=10s grow"},
		{"bench", "--plan", "at=70s scale-out"},
		{"bench", "--plan", "at=10s scale-out", "--slo", "p99<=2ms"},
		{"bench", "--plan", "at=10s scale-out", "--nemesis", "kill"},
		{"bench", "--versus", "--no-such-flag 1"},
		{"bench", "--versus", "--ratio x"},
		{"bench", "--threshold", "p99<2"},
		{"bench", "--threshold", "latency<=2ms"},
		{"bench", "--threshold", "errors<=0.5"},
		{"bench", "--threshold", ","},
		{"bench", "--threshold", "p99<=2ms", "--slo", "p99<=2ms"},
		{"bench", "--threshold", "p99<=2ms", "--versus", "--nodes 8"},
		{"bench", "--threshold", "p99<=2ms", "--workload", "register"},
		{"bench", "--json", "--csv"},
		{"bench", "--json", "--versus", "--nodes 8"},
		{"bench", "--csv", "--workload", "register"},
		{"bench", "--run-count", "0"},
		{"bench", "--run-count", "2", "--slo", "p99<=2ms"},
		{"bench", "--run-count", "2", "--nemesis", "pause"},
		{"bench", "--run-count", "2", "--history"},
		{"bench", "--run-count", "2", "--workload", "register"},
		{"bench", "--generators", "-1", "--rate", "1000"},
		{"bench", "--generators", "3"},
		{"bench", "--generators", "3", "--rate", "1000", "--nemesis", "pause"},
		{"bench", "--generators", "3", "--rate", "1000", "--plan", "at=10s scale-out"},
		{"bench", "--generators", "3", "--rate", "1000", "--run-count", "2"},
		{"bench", "--generators", "3", "--rate", "1000", "--history"},
		{"bench", "--generators", "3", "--rate", "1000", "--versus", "--nodes 8"},
		{"bench", "--generators", "3", "--rate", "1000", "--workload", "register"},
	}
	for _, args := range cases {
		var out, errb bytes.Buffer
		res := t.TempDir()
		code := run(append(args, "--results", res), &out, &errb)
		if code != exitBadArgs {
			t.Errorf("%v: exit %d, want %d (stderr %q)", args, code, exitBadArgs, errb.String())
		}
		// Refused before anything started: no run directory.
		if ents, _ := os.ReadDir(res); len(ents) != 0 {
			t.Errorf("%v: %d entries in the results directory, want none", args, len(ents))
		}
		if args[1] == "--threshold" && !strings.Contains(errb.String(), "--threshold") {
			t.Errorf("%v: the error %q does not name --threshold", args, errb.String())
		}
	}
}

// TestBenchFailoverAndRebalanceInDocker runs an open-loop bench against
// real Redis 7 in containers while replicas take over and a new primary
// joins and gets slots: the run survives and reports each fault's windows.
func TestBenchFailoverAndRebalanceInDocker(t *testing.T) {
	requireDocker(t)
	res := t.TempDir()
	var out, errb bytes.Buffer
	code := run([]string{"bench", "--target", "redis", "--nemesis", "member,failover", "--nemesis-interval", "8s",
		"--time-limit", "40s", "--rate", "1000", "--concurrency", "20", "--node-timeout", "1s", "--results", res, "--seed", "11"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	var r bench.Result
	b, err := os.ReadFile(filepath.Join(res, "latest", "bench.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	faults := map[string]int{}
	for _, w := range r.Windows {
		faults[w.Fault]++
		if w.During.Seconds == 0 || w.Before.Seconds == 0 {
			t.Errorf("window of %s at %.1fs has no before/during figures: %+v", w.Fault, w.StartS, w)
		}
		if w.Fault == "member" && w.TookS <= 0 {
			t.Errorf("the rebalance at %.1fs took %.1fs", w.StartS, w.TookS)
		}
	}
	if faults["member"] == 0 || faults["failover"] == 0 {
		t.Fatalf("windows %v, want member and failover\n%s", faults, out.String())
	}
	if r.Throughput < 500 || r.Counts.Moved+r.Counts.Ask == 0 {
		t.Errorf("throughput %.0f, %d MOVED, %d ASK: the load should go on through the changes and follow them", r.Throughput, r.Counts.Moved, r.Counts.Ask)
	}
	if !strings.Contains(out.String(), "FAULT") || !strings.HasSuffix(strings.TrimSpace(out.String()), "ops/s") {
		t.Errorf("summary lacks the windows or the throughput line:\n%s", out.String())
	}
	if l := leftovers(t, "bench-redis-kv-"); l != "" {
		t.Fatalf("left behind after a bench: %s", l)
	}
}

// TestBenchCapacitySearchExternal searches the capacity of six
// redis-server processes under a generous objective with a low ceiling:
// the ramp reaches the ceiling, the answer is confirmed, printed before
// the throughput line and stored with its curve.
func TestBenchCapacitySearchExternal(t *testing.T) {
	res := t.TempDir()
	out, _ := benchRun(t, res, "bench", "--addrs", localAddrs(t), "--slo", "p99<=2s,errors<=1%", "--rate", "250", "--slo-max-rate", "1000",
		"--slo-step", "1s", "--slo-warmup", "1s", "--keys", "300", "--seed", "5")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if n := len(lines); n < 2 || lines[n-2] != "capacity: 1000 ops/s at p99<=2s,errors<=1% (at least: the search's ceiling)" || !strings.HasPrefix(lines[n-1], "throughput: ") {
		t.Fatalf("the last lines are not the capacity and the throughput:\n%s", out)
	}
	latest := filepath.Join(res, "latest")
	var c bench.Capacity
	b, err := os.ReadFile(filepath.Join(latest, "capacity.json"))
	if err != nil || json.Unmarshal(b, &c) != nil {
		t.Fatalf("capacity.json: %v", err)
	}
	var rates []float64
	for _, s := range c.Steps {
		rates = append(rates, s.Rate)
		if s.MeasuredS < 0.9 || s.WarmupS < 0.9 || len(s.Shards) != 3 {
			t.Errorf("step at %v: measured %.2f s after %.2f s warm-up, %d shards", s.Rate, s.MeasuredS, s.WarmupS, len(s.Shards))
		}
	}
	if len(rates) != 4 || rates[0] != 250 || rates[2] != 1000 || rates[3] != 1000 || !c.Confirmed {
		t.Errorf("steps %v (confirmed %v), want 250, 500, 1000 and 1000 again", rates, c.Confirmed)
	}
	page, err := os.ReadFile(filepath.Join(latest, "report.html"))
	if err != nil || !bytes.Contains(page, []byte(`data-plot="capacity-curve"`)) {
		t.Errorf("the report lacks the capacity curve (%v)", err)
	}
	for _, f := range bench.HistogramFiles() {
		if _, err := os.Stat(filepath.Join(latest, f)); err != nil {
			t.Errorf("export %s: %v", f, err)
		}
	}
}

// TestBenchPlanReshardExternal reshards 200 slots at 2 s into a 7 s
// open-loop bench on six redis-server processes: the change gets its
// window, its duration, the slots and keys it moved and the redirects.
func TestBenchPlanReshardExternal(t *testing.T) {
	out, r := benchRun(t, t.TempDir(), "bench", "--addrs", localAddrs(t), "--rate", "500", "--time-limit", "7s", "--plan", "at=2s reshard 200",
		"--keys", "2000", "--yes", "--seed", "5")
	if len(r.Windows) != 1 {
		t.Fatalf("windows %+v, want the reshard\n%s", r.Windows, out)
	}
	w := r.Windows[0]
	if w.Fault != "reshard" || w.StartS < 1.9 || w.TookS <= 0 || !strings.Contains(w.Detail, "200 slots moved") || !strings.Contains(w.Detail, "keys moved") {
		t.Errorf("window %+v", w)
	}
	if w.Before.Seconds == 0 || w.During.Seconds == 0 && w.TookS >= 1 {
		t.Errorf("window without before/during figures: %+v", w)
	}
	if r.Counts.Moved+r.Counts.Ask == 0 {
		t.Errorf("no MOVED or ASK while 200 slots moved under load")
	}
	if !strings.Contains(out, "reshard (took") {
		t.Errorf("the summary does not show the reshard's window:\n%s", out)
	}
}

// TestBenchPlanScaleOutInDocker adds a primary 5 s into an open-loop
// bench on the reference cluster in containers and removes one at 30 s:
// both changes finish under load and get their windows (duration, node
// added or removed, slots and keys moved, redirects), and the load goes on.
func TestBenchPlanScaleOutInDocker(t *testing.T) {
	requireDocker(t)
	res := t.TempDir()
	out, r := benchRun(t, res, "bench", "--rate", "500", "--time-limit", "55s", "--keys", "500", "--plan", "at=5s scale-out; at=30s scale-in",
		"--node-timeout", "1s", "--seed", "13")
	if len(r.Windows) != 2 {
		t.Fatalf("windows %+v, want the scale-out and the scale-in\n%s", r.Windows, out)
	}
	for i, want := range []struct{ fault, did string }{{"scale-out", "added n7"}, {"scale-in", "removed n"}} {
		w := r.Windows[i]
		if w.Fault != want.fault || w.TookS <= 0 || w.EndS >= r.DurationS || !strings.Contains(w.Detail, want.did) || !strings.Contains(w.Detail, "slots moved") {
			t.Errorf("window %d %+v (traffic %.1f s): want %s finished, %q with slots moved", i, w, r.DurationS, want.fault, want.did)
		}
		if w.Before.Seconds == 0 || w.During.Seconds == 0 || w.After.Seconds == 0 {
			t.Errorf("window without before/during/after figures: %+v", w)
		}
	}
	if r.Windows[0].StartS < 4.9 || r.Windows[1].StartS < 29.9 {
		t.Errorf("changes at %.1f s and %.1f s, planned at 5 s and 30 s", r.Windows[0].StartS, r.Windows[1].StartS)
	}
	if r.Throughput < 400 || r.Counts.Moved+r.Counts.Ask == 0 {
		t.Errorf("throughput %.0f, %d MOVED, %d ASK: the load should go on through the changes and follow them", r.Throughput, r.Counts.Moved, r.Counts.Ask)
	}
	// Only this run's cluster: other benches may share the engine.
	cfg, _ := os.ReadFile(filepath.Join(res, "latest", "config.json"))
	name := regexp.MustCompile(`bench-reference-kv-none-[0-9a-f]+`).Find(cfg)
	if name == nil {
		t.Fatalf("config.json does not name the cluster:\n%s", cfg)
	}
	if l := leftovers(t, string(name)); l != "" {
		t.Fatalf("left behind after a bench: %s", l)
	}
}

// benchRun runs `redline` with args, fails the test unless it exits 0,
// and returns its stdout and the stored bench.json of the latest run.
func benchRun(t *testing.T, res string, args ...string) (string, bench.Result) {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(append(args, "--results", res), &out, &errb); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	var r bench.Result
	b, err := os.ReadFile(filepath.Join(res, "latest", "bench.json"))
	if err != nil || json.Unmarshal(b, &r) != nil {
		t.Fatalf("bench.json: %v", err)
	}
	return out.String(), r
}

// localAddrs starts six redis-server processes (3 primaries) on loopback.
func localAddrs(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lc, err := localcluster.Start(ctx, t.TempDir(), 6, 1, time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lc.Stop)
	return strings.Join(lc.Addrs, ",")
}

// TestBenchVersusExternal compares two client settings on one cluster in
// one command: A as given, B with --pipeline 4 and A's seed; the page
// beside B names the difference.
func TestBenchVersusExternal(t *testing.T) {
	res := t.TempDir()
	out, b := benchRun(t, res, "bench", "--addrs", localAddrs(t), "--rate", "300", "--time-limit", "2s", "--keys", "200", "--versus", "--pipeline 4")
	for _, want := range []string{"=== A: the bench as given", "=== B: --pipeline 4", "=== A vs B", "FIGURE", "versus: throughput A "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if lines := strings.Split(strings.TrimSpace(out), "\n"); !strings.HasPrefix(lines[len(lines)-1], "throughput: ") {
		t.Errorf("the last line is not the throughput: %q", lines[len(lines)-1])
	}
	if b.Pipeline != 4 {
		t.Errorf("B ran with pipeline %d, want 4", b.Pipeline)
	}
	latest, _ := filepath.EvalSymlinks(filepath.Join(res, "latest"))
	page, err := os.ReadFile(filepath.Join(latest, "compare.html"))
	if err != nil || !regexp.MustCompile(`id="config-differ">the runs differ in: [^<]*kv\.pipeline`).Match(page) {
		t.Errorf("compare.html does not name the pipeline as the difference (%v)", err)
	}
	// Both runs with one seed (A's, chosen for both).
	runs, _ := filepath.Glob(filepath.Join(filepath.Dir(latest), "*", "config.json"))
	seeds := map[string]bool{}
	for _, f := range runs {
		var c struct{ Seed int64 }
		if err := json.Unmarshal(mustRead(t, f), &c); err != nil || c.Seed == 0 {
			t.Errorf("%s: seed %d (%v)", f, c.Seed, err)
		}
		seeds[fmt.Sprint(c.Seed)] = true
	}
	if len(runs) != 2 || len(seeds) != 1 {
		t.Errorf("%d runs with seeds %v, want A and B with one seed", len(runs), seeds)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBenchThresholdExternal runs two short benches against local
// redis-server processes: one whose thresholds hold (exit 0, --csv) and
// one that asks for a rate no laptop delivers (exit 99, --json), both
// stored; stdout holds the machine summary alone, stderr the rest.
func TestBenchThresholdExternal(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lc, err := localcluster.Start(ctx, t.TempDir(), 3, 0, time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Stop()
	res := t.TempDir()
	bench1 := func(threshold string, more ...string) (int, string, string, bench.Result) {
		var out, errb bytes.Buffer
		code := run(append([]string{"bench", "--addrs", strings.Join(lc.Addrs, ","), "--rate", "300", "--concurrency", "2",
			"--time-limit", "2s", "--keys", "100", "--results", res, "--seed", "5", "--threshold", threshold}, more...), &out, &errb)
		var r bench.Result
		b, _ := os.ReadFile(filepath.Join(res, "latest", "bench.json"))
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("bench.json: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
		}
		return code, out.String(), errb.String(), r
	}
	code, out, human, r := bench1("p99<=10s,errors<=100%,GET.max<=10s", "--csv")
	if code != exitValid || !strings.Contains(human, "thresholds: all 3 passed") {
		t.Errorf("exit %d, want 0:\n%s", code, human)
	}
	if len(r.Thresholds) != 3 || !r.Thresholds[2].Pass || r.Thresholds[2].Command != "get" {
		t.Errorf("stored thresholds %+v", r.Thresholds)
	}
	rows := strings.Split(strings.TrimSpace(out), "\n")
	if len(rows) != 4 || !strings.HasPrefix(rows[0], "type,ops_per_s,") || !strings.HasPrefix(rows[3], "total,") {
		t.Errorf("stdout is not the CSV summary:\n%s", out)
	}

	// Two runs: the thresholds and the summary are the aggregate's.
	code, out, human, r = bench1("p99<=10s,ops>=1000000", "--json", "--run-count", "2")
	if code != exitThreshold || !strings.Contains(human, "FAIL  ops>=1000000") || !strings.Contains(human, "thresholds: 1 of 2 FAILED") {
		t.Errorf("exit %d, want %d:\n%s", code, exitThreshold, human)
	}
	if len(r.Thresholds) != 2 || !r.Thresholds[0].Pass || r.Thresholds[1].Pass || r.Thresholds[1].Value <= 0 {
		t.Errorf("stored thresholds %+v", r.Thresholds)
	}
	lines := strings.Split(strings.TrimSpace(human), "\n")
	if !strings.HasPrefix(lines[len(lines)-1], "throughput: ") {
		t.Errorf("last line %q is not the throughput", lines[len(lines)-1])
	}
	var s bench.Summary
	if err := json.Unmarshal([]byte(out), &s); err != nil || strings.Count(out, "\n") != 1 {
		t.Fatalf("stdout is not one line of JSON (%v):\n%s", err, out)
	}
	if s.ExitCode != exitThreshold || s.ThresholdsPassed || s.Ops["total"].OK == 0 || s.Mode != "open-loop" || s.Dir == "" {
		t.Errorf("JSON summary %+v", s)
	}
	// results.json must not read as a pass in `results list` when a
	// threshold failed: invalid, naming it.
	var stored struct {
		Valid    any `json:"valid"`
		Checkers map[string]struct {
			Failed []string `json:"failed_thresholds"`
		} `json:"checkers"`
	}
	if b, err := os.ReadFile(filepath.Join(s.Dir, "results.json")); err != nil || json.Unmarshal(b, &stored) != nil {
		t.Errorf("results.json of the run: %v", err)
	} else if stored.Valid != false || len(stored.Checkers["bench"].Failed) != 1 || !strings.Contains(stored.Checkers["bench"].Failed[0], "ops>=1000000") {
		t.Errorf("results.json after a failed threshold: valid %v, bench %+v", stored.Valid, stored.Checkers["bench"])
	}
	if len(s.Runs) != 2 || len(r.Runs) != 2 || s.BestRun == 0 || s.WorstRun == 0 || r.DurationS < 3 ||
		s.Ops["total"].OK != int64(r.Runs[0].Ops["total"].Corrected.Count+r.Runs[1].Ops["total"].Corrected.Count) {
		t.Errorf("--run-count 2: summary runs %+v, stored %+v over %v s", s.Runs, r.Runs, r.DurationS)
	}
	for _, want := range []string{"BEST RUN RESULTS", "WORST RUN RESULTS", "AGGREGATED AVERAGE RESULTS (2 runs"} {
		if !strings.Contains(human, want) {
			t.Errorf("output lacks %q:\n%s", want, human)
		}
	}
}
