package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/redline-dev/redline/clusteradmin/localcluster"
	"github.com/redline-dev/redline/harness/bench"
)

// actAsRedline makes this test binary act as redline when a test runs it
// as a local generator (os.Executable is the test binary then).
const actAsRedline = "REDLINE_TEST_ACT_AS_REDLINE"

// killGenerator names a generator (its index) that SIGKILLs itself a
// second into its traffic: a generator that dies mid-run.
const killGenerator = "REDLINE_TEST_KILL_GENERATOR"

func TestMain(m *testing.M) {
	if os.Getenv(actAsRedline) == "1" {
		args := os.Args[1:]
		if idx := os.Getenv(killGenerator); idx != "" && len(args) == 5 && args[0] == "bench-generator" && args[4] == idx {
			var c bench.GeneratorConfig
			if json.Unmarshal([]byte(args[2]), &c) == nil {
				go func() {
					time.Sleep(time.Until(time.Unix(0, c.StartAtNs)) + 1500*time.Millisecond)
					_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
				}()
			}
		}
		os.Exit(run(args, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// reportEnd is a generator's own totals: its report's end line.
type reportEnd struct {
	Counts bench.Counts      `json:"counts"`
	Hist   map[string][]byte `json:"hist"`
}

func readEnd(t *testing.T, path string) (reportEnd, bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var e reportEnd
	for _, line := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, bench.GeneratorMarker+" ")
		if ok && strings.Contains(rest, `"type":"end"`) {
			if err := json.Unmarshal([]byte(rest[9:]), &e); err != nil {
				t.Fatal(err)
			}
			return e, true
		}
	}
	return e, false
}

// distributedBench runs `redline bench --generators 3` against a local
// cluster, the generators local processes of this test binary.
func distributedBench(t *testing.T, kill string) (code int, dir string, out string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	lc, err := localcluster.Start(ctx, t.TempDir(), 6, 1, time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Stop()
	t.Setenv(actAsRedline, "1")
	t.Setenv(killGenerator, kill)
	res := t.TempDir()
	var stdout, stderr bytes.Buffer
	code = run([]string{"bench", "--addrs", strings.Join(lc.Addrs, ","), "--generators", "3", "--rate", "1500", "--concurrency", "2",
		"--time-limit", "4s", "--keys", "300", "--results", res, "--seed", "5"}, &stdout, &stderr)
	latest, err := filepath.EvalSymlinks(filepath.Join(res, "latest"))
	if err != nil {
		t.Fatalf("exit %d, no run directory: %v\nstdout:\n%s\nstderr:\n%s", code, err, stdout.String(), stderr.String())
	}
	return code, latest, stdout.String() + stderr.String()
}

func readBench(t *testing.T, dir string) bench.Result {
	t.Helper()
	var r bench.Result
	b, err := os.ReadFile(filepath.Join(dir, "bench.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// sumEnds is what the merged report must hold: the generators' counts
// summed and their histograms merged (by key).
func sumEnds(t *testing.T, ends []reportEnd) (ok, failed, hits int64, total *hdrhistogram.Histogram) {
	t.Helper()
	total = hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
	for _, e := range ends {
		ok += e.Counts.TotalOK()
		failed += e.Counts.Failed()
		hits += e.Counts.Hits
		for _, k := range []string{"get.corrected", "set.corrected"} {
			if enc, has := e.Hist[k]; has {
				h, err := hdrhistogram.Decode(enc)
				if err != nil {
					t.Fatal(err)
				}
				total.Merge(h)
			}
		}
	}
	return ok, failed, hits, total
}

// Three generators, local processes, run their shares against one
// cluster; the merged report's totals are the sum of their reports'
// counts and its percentiles those of their histograms merged.
func TestDistributedBenchMergesThreeGenerators(t *testing.T) {
	code, dir, out := distributedBench(t, "")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	r := readBench(t, dir)
	if len(r.Generators) != 3 || r.GeneratorsFailed != 0 {
		t.Fatalf("generators %+v (%d failed)\n%s", r.Generators, r.GeneratorsFailed, out)
	}
	var ends []reportEnd
	for i := 1; i <= 3; i++ {
		e, ok := readEnd(t, filepath.Join(dir, "generators", "1", "generator-"+strconv.Itoa(i)+".out"))
		if !ok {
			t.Fatalf("generator %d's report has no end line", i)
		}
		if e.Counts.TotalOK() == 0 {
			t.Errorf("generator %d measured no op", i)
		}
		ends = append(ends, e)
	}
	ok, failed, hits, total := sumEnds(t, ends)
	if r.Counts.TotalOK() != ok || r.Counts.Failed() != failed || r.Counts.Hits != hits {
		t.Errorf("merged ok %d failed %d hits %d, the generators' sum %d, %d, %d", r.Counts.TotalOK(), r.Counts.Failed(), r.Counts.Hits, ok, failed, hits)
	}
	if got := r.Ops["total"].Corrected.Count; got != ok {
		t.Errorf("the merged latency counts %d ops, the generators %d", got, ok)
	}
	for _, q := range []struct {
		got float64
		q   float64
	}{{r.Ops["total"].Corrected.P50, 50}, {r.Ops["total"].Corrected.P99, 99}, {r.Ops["total"].Corrected.P999, 99.9}} {
		if want := float64(total.ValueAtQuantile(q.q)) / 1000; q.got != want {
			t.Errorf("p%v %v ms, the merged histograms say %v", q.q, q.got, want)
		}
	}
	if h := r.Hist("total", "corrected"); h == nil || !h.Equals(total) {
		t.Error("the stored histogram is not the merge of the generators'")
	}
	// 1500 ops/s for 4 s among three generators: 6000 ops scheduled, each
	// measured or counted as unsent.
	if got := r.Counts.TotalOK() + r.Counts.Failed() + r.Unsent; got != 6000 {
		t.Errorf("%d ops measured or unsent, want the schedule's 6000", got)
	}
	var rs struct {
		Valid any `json:"valid"`
	}
	b, _ := os.ReadFile(filepath.Join(dir, "results.json"))
	_ = json.Unmarshal(b, &rs)
	if rs.Valid != true {
		t.Errorf("results.json valid %v, want true", rs.Valid)
	}
	if !strings.Contains(out, "GENERATOR") || !strings.Contains(out, "3 generators of 500 ops/s each") {
		t.Errorf("the summary does not list the generators:\n%s", out)
	}
}

// A generator killed mid-run is named in the report and results, its
// share left out of the figures, and the verdict is unknown (exit 2).
func TestDistributedBenchNamesADeadGenerator(t *testing.T) {
	code, dir, out := distributedBench(t, "2")
	if code != exitUnknown {
		t.Fatalf("exit %d, want %d (unknown)\n%s", code, exitUnknown, out)
	}
	r := readBench(t, dir)
	if len(r.Generators) != 3 || r.GeneratorsFailed != 1 {
		t.Fatalf("generators %+v (%d failed)", r.Generators, r.GeneratorsFailed)
	}
	g := r.Generators[1]
	if g.Merged || g.Status != bench.GenDied || !strings.Contains(g.Problem, "killed") {
		t.Errorf("generator 2: %+v", g)
	}
	if _, has := readEnd(t, filepath.Join(dir, "generators", "1", "generator-2.out")); has {
		t.Fatal("the killed generator wrote its end line")
	}
	var ends []reportEnd
	for _, i := range []int{1, 3} {
		e, _ := readEnd(t, filepath.Join(dir, "generators", "1", "generator-"+strconv.Itoa(i)+".out"))
		ends = append(ends, e)
	}
	ok, failed, _, total := sumEnds(t, ends)
	if r.Counts.TotalOK() != ok || r.Counts.Failed() != failed || r.Ops["total"].Corrected.P99 != float64(total.ValueAtQuantile(99))/1000 {
		t.Errorf("merged ok %d failed %d p99 %v, generators 1 and 3: %d, %d, %v", r.Counts.TotalOK(), r.Counts.Failed(), r.Ops["total"].Corrected.P99, ok, failed, float64(total.ValueAtQuantile(99))/1000)
	}
	var rs struct {
		Valid    any `json:"valid"`
		Checkers map[string]struct {
			Why string `json:"why"`
		} `json:"checkers"`
	}
	b, _ := os.ReadFile(filepath.Join(dir, "results.json"))
	if err := json.Unmarshal(b, &rs); err != nil {
		t.Fatal(err)
	}
	if rs.Valid != "unknown" || !strings.Contains(rs.Checkers["bench"].Why, "generator 2 of 3") {
		t.Errorf("results.json: %s", b)
	}
	if !strings.Contains(out, "generator 2 of 3") || !strings.Contains(out, "died") {
		t.Errorf("the output does not name generator 2:\n%s", out)
	}
	page, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	if !strings.Contains(string(page), "generator 2 of 3") {
		t.Error("report.html does not name generator 2")
	}
}

// A capacity search from three generators: every step is a round of
// three reports at a third of the step's rate each, and the answer is
// over the total rate.
func TestDistributedCapacitySearch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	lc, err := localcluster.Start(ctx, t.TempDir(), 6, 1, time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Stop()
	t.Setenv(actAsRedline, "1")
	res := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run([]string{"bench", "--addrs", strings.Join(lc.Addrs, ","), "--generators", "3", "--rate", "300", "--slo", "p99<=500ms",
		"--slo-max-rate", "600", "--slo-step", "1s", "--slo-warmup", "0s", "--concurrency", "2", "--keys", "300", "--results", res}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "capacity: 600 ops/s at p99<=500ms") {
		t.Errorf("no capacity line for the total rate:\n%s", stdout.String())
	}
	dir, _ := filepath.EvalSymlinks(filepath.Join(res, "latest"))
	var capacity bench.Capacity
	b, _ := os.ReadFile(filepath.Join(dir, "capacity.json"))
	if err := json.Unmarshal(b, &capacity); err != nil {
		t.Fatal(err)
	}
	for i, st := range capacity.Steps {
		for g := 1; g <= 3; g++ {
			rep, err := os.ReadFile(filepath.Join(dir, "generators", strconv.Itoa(i+1), "generator-"+strconv.Itoa(g)+".out"))
			if err != nil {
				t.Fatalf("step %d: %v", i+1, err)
			}
			share := `"rate":` + strconv.Itoa(int(st.Rate)/3) + `,`
			if !strings.Contains(string(rep), share) {
				t.Errorf("step %d at %v ops/s: generator %d's header lacks its share %s", i+1, st.Rate, g, share)
			}
		}
	}
	if len(capacity.Steps) < 2 {
		t.Errorf("%d steps", len(capacity.Steps))
	}
}

// A generator with a config it cannot run is refused with exit 254 and
// a reason, before it reads any clock; one that cannot reach the cluster
// says why in its report's end line.
func TestBenchGeneratorRefusesBadConfig(t *testing.T) {
	good := `{"of":3,"seeds":["127.0.0.1:1"],"kv":{"keys":10,"set_ratio":1,"get_ratio":1,"value_min":1,"value_max":1,"pattern":"uniform","pipeline":1},"rate":10,"concurrency":1,"duration_ns":1000000000,"op_timeout_ns":100000000,"start_at_ns":1,"clock_node":"127.0.0.1:1"}`
	for _, args := range [][]string{
		{"bench-generator", "--config", "{"},
		{"bench-generator", "--config", good, "--index", "4"},
		{"bench-generator", "--config", good},
	} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != exitBadArgs || errb.Len() == 0 {
			t.Errorf("%v: exit %d, stderr %q", args[:len(args)-1], code, errb.String())
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"bench-generator", "--config", good, "--index", "2"}, &out, &errb); code != exitHarness {
		t.Errorf("an unreachable cluster: exit %d, stderr %q", code, errb.String())
	}
	if !strings.Contains(out.String(), `"type":"end","error":"reading the cluster's clock`) {
		t.Errorf("the report does not say why: %q", out.String())
	}
}
