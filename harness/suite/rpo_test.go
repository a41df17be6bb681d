package suite

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// storedRun places a stored results.json (from a real reference run of
// isolate-primary, node-timeout 2s) in a run directory, edited by edit.
func storedRun(t *testing.T, edit func(checkers map[string]map[string]any)) string {
	t.Helper()
	b, err := os.ReadFile("testdata/isolate-primary-results.json")
	if err != nil {
		t.Fatal(err)
	}
	var rj map[string]any
	if err := json.Unmarshal(b, &rj); err != nil {
		t.Fatal(err)
	}
	cs := map[string]map[string]any{}
	for k, v := range rj["checkers"].(map[string]any) {
		cs[k] = v.(map[string]any)
	}
	if edit != nil {
		edit(cs)
	}
	rj["checkers"] = cs
	dir := t.TempDir()
	b, _ = json.Marshal(rj)
	if err := os.WriteFile(filepath.Join(dir, "results.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func studyResult(t *testing.T, r Run, code int, dir string) Result {
	t.Helper()
	res := Result{Name: r.Name, Params: r.Params}
	fill(&res, Outcome{Code: code, Dir: dir})
	return res
}

func TestStudyExpandsToOneFaultPerRun(t *testing.T) {
	st := Study{Targets: []string{"reference", "redis"}, Scenarios: []string{"isolate-primary", "pause-primary"},
		Waits: []int{0, 1}, NodeTimeouts: []time.Duration{2 * time.Second, 5 * time.Second}, Seeds: 2,
		Settings: [][]string{nil, {"min-replicas-to-write 1"}},
		Base:     Params{{Key: "server-binary", Values: []string{"/x/redis-server"}}, {Key: "concurrency", Values: []string{"20"}}}}
	s, err := st.Suite("rpo")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Runs) != 2*2*2*2*2*2 {
		t.Fatalf("%d runs", len(s.Runs))
	}
	for _, r := range s.Runs {
		if r.Params.Get("workload") != "set" || r.Params.Get("concurrency") != "20" {
			t.Fatalf("%s: %v", r.Name, r.Params)
		}
		if (r.Params.Get("server-binary") != "") != (r.Params.Get("target") == "redis") {
			t.Fatalf("server-binary belongs to the redis target only: %s %v", r.Name, r.Params)
		}
		// One fault: it starts at interval/2 and the run ends before
		// the next would start at 1.5 intervals.
		iv, _ := time.ParseDuration(r.Params.Get("nemesis-interval"))
		tl, _ := time.ParseDuration(r.Params.Get("time-limit"))
		nt, _ := time.ParseDuration(r.Params.Get("node-timeout"))
		if tl >= iv*3/2 || tl < iv*5/4 || iv < 5*nt {
			t.Fatalf("%s: interval %s, time-limit %s, node-timeout %s", r.Name, iv, tl, nt)
		}
	}
	if _, err := (Study{Targets: []string{"reference"}, Scenarios: []string{"nope"}, Waits: []int{0}, NodeTimeouts: []time.Duration{time.Second}, Seeds: 1}).Suite("x"); err == nil || !strings.Contains(err.Error(), "isolate-primary") {
		t.Fatalf("unknown scenario: %v", err)
	}
}

// Aggregation on stored results: sums, the loss window relative to the
// fault's start, RTO, throughput, WAIT's split; failed runs are listed and
// never counted as lossless.
func TestAggregateStoredResults(t *testing.T) {
	st := Study{Targets: []string{"reference"}, Scenarios: []string{"isolate-primary"}, Waits: []int{0, 1},
		NodeTimeouts: []time.Duration{2 * time.Second}, Seeds: 2}
	s, err := st.Suite("rpo")
	if err != nil {
		t.Fatal(err)
	}
	// Runs: wait 0 seed 1, wait 0 seed 2, wait 1 seed 1, wait 1 seed 2.
	later := storedRun(t, func(cs map[string]map[string]any) {
		w := cs["rpo"]["per_window"].([]any)[0].(map[string]any)
		w["acked_to_s"] = 8.018 // 3 s after the fault's start
		cs["rpo"]["rpo_ms"] = 2953.0
	})
	withWait := storedRun(t, func(cs map[string]map[string]any) {
		cs["set"]["lost"], cs["rpo"]["lost"] = 100.0, 100.0
		w := cs["rpo"]["per_window"].([]any)[0].(map[string]any)
		w["lost"], w["no_wait"], w["wait_unsatisfied"], w["wait_satisfied"] = 100.0, 0.0, 97.0, 3.0
		cs["perf"]["run_s"] = 30.538 // half the throughput
		cs["perf"]["new_figure_of_issue_10"] = map[string]any{"x": 1}
	})
	sum := &Summary{Runs: []Result{
		studyResult(t, s.Runs[0], 1, storedRun(t, nil)),
		studyResult(t, s.Runs[1], 1, later),
		studyResult(t, s.Runs[2], 1, withWait),
		studyResult(t, s.Runs[3], 255, ""),
	}}
	es := Aggregate(sum)
	if len(es) != 2 {
		t.Fatalf("%d entries", len(es))
	}
	e := es[0]
	if e.Target != "reference" || e.Scenario != "isolate-primary" || e.Wait != 0 || e.NodeTimeoutMs != 2000 || e.Runs != 2 {
		t.Fatalf("entry 0: %+v", e)
	}
	if e.Acked != 2*71314 || e.Lost != 2*7208 || math.Abs(e.LostPct-10.1074) > 0.001 {
		t.Fatalf("sums: acked %d lost %d pct %v", e.Acked, e.Lost, e.LostPct)
	}
	// Ack times 5.065..7.741 s and 5.065..8.018 s, fault at 5.018 s.
	if e.LossWindowMs == nil || e.LossWindowMs.From != 47 || e.LossWindowMs.To != 3000 {
		t.Fatalf("loss window %+v, want the worst run's 47..3000 ms", e.LossWindowMs)
	}
	if e.RPOMs.Max != 2953 || math.Abs(e.RPOMs.P50-(2676.311+2953)/2) > 0.1 {
		t.Fatalf("rpo %+v", e.RPOMs)
	}
	if e.RTOMs == nil || math.Abs(e.RTOMs.P50-10240.942) > 0.1 || e.RTOMs.Max != 10243.013 {
		t.Fatalf("rto %+v", e.RTOMs)
	}
	if math.Abs(e.ThroughputOpsS-(71314+8039)/15.269) > 0.1 {
		t.Fatalf("throughput %v", e.ThroughputOpsS)
	}
	w := es[1]
	if w.Wait != 1 || w.Runs != 1 || len(w.Failed) != 1 || w.Lost != 100 || w.LostWaitSatisfied != 3 || w.LostWaitUnsat != 97 {
		t.Fatalf("wait entry: %+v", w)
	}
	md := string((&StudyReport{Entries: es, Seeds: 2}).Markdown())
	for _, want := range []string{
		"| reference | isolate-primary | 0 | 2000 ms | defaults | 2 | 142628 | 14416 | 7208, 7208 | 10.107 | 2.8 s / 3.0 s | 2.7 s, 3.0 s |",
		"writes acknowledged from +0.0 s to +3.0 s after the fault began were lost",
		"**3 lost write(s) had WAIT 1 report enough replicas**",
		"WAIT cost throughput",
		"1 run(s) left out for lack of a verdict",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("rpo.md lacks %q:\n%s", want, md)
		}
	}
	h, err := (&StudyReport{Entries: es, Seeds: 2}).HTML()
	if err != nil || !strings.Contains(string(h), "<svg") || !strings.Contains(string(h), "<b>3 lost write(s)") {
		t.Fatalf("rpo.html (%v)", err)
	}
}

func TestCompareTargetsFlagsOnlyDifferencesBeyondNoise(t *testing.T) {
	entry := func(target string, tos ...float64) Entry {
		e := Entry{Target: target, Scenario: "isolate-primary", NodeTimeoutMs: 2000}
		for _, to := range tos {
			e.PerRun = append(e.PerRun, RunFigures{Acked: 1000, Lost: 10, LossWindowMs: &Span{To: to}, RTOMs: &Quant{Max: 4000}})
		}
		e.Runs = len(e.PerRun)
		return e
	}
	got, n := compareTargets([]Entry{entry("reference", 2500, 2700), entry("redis", 2400, 2800)})
	if len(got) != 0 || n != 1 {
		t.Fatalf("overlapping runs flagged: %v", got)
	}
	got, _ = compareTargets([]Entry{entry("reference", 5200, 5600), entry("redis", 2400, 2800)})
	if len(got) != 1 || !strings.Contains(got[0], "end of the loss window differs") || !strings.Contains(got[0], "fidelity") {
		t.Fatalf("got %v", got)
	}
	// One run a side shows no noise: nothing can be claimed.
	if got, n := compareTargets([]Entry{entry("reference", 5200), entry("redis", 2400)}); len(got) != 0 || n != 1 {
		t.Fatalf("single runs flagged: %v", got)
	}
}

// rpo.md says which builds were tested and on what shape of cluster.
func TestStudyReportNamesBuildsAndShape(t *testing.T) {
	dir := t.TempDir()
	cfg := `{"target":"redis","nodes":6,"replicas":1,"concurrency":10,"server_version":"Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 build=abc",
	  "server_sha256":"0123456789abcdef0123456789abcdef","server_binary":"/usr/bin/redis-server","versions":{"image":"redline/redis-binary:1234","redline":"e503682ad067"}}`
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	r := NewStudyReport(&Summary{Runs: []Result{{Dir: dir}, {Dir: dir}}}, 2)
	md := string(r.Markdown())
	for _, want := range []string{
		"- redis: Redis server v=7.0.15 sha=00000000:0", "sha256 0123456789abcdef", "image redline/redis-binary:1234",
		"- redline e503682ad067", "- redis: 6 nodes, 3 primaries with 1 replica(s) each, 10 clients",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("rpo.md lacks %q:\n%s", want, md)
		}
	}
	if len(r.Builds) != 2 || len(r.Shape) != 1 {
		t.Errorf("builds %q, shape %q: each once", r.Builds, r.Shape)
	}
}

// A study's invalid runs are its measurements: its summary says
// "measured" and exits 0 once every run has a verdict, never INVALID.
func TestStudySummaryIsMeasuredNotInvalid(t *testing.T) {
	st := Study{Targets: []string{"reference"}, Scenarios: []string{"kill-primary"}, Waits: []int{0}, NodeTimeouts: []time.Duration{time.Second}, Seeds: 2}
	s, err := st.Suite("rpo")
	if err != nil {
		t.Fatal(err)
	}
	sum := &Summary{Name: s.Name, Study: s.Study, Dir: t.TempDir(), Runs: []Result{{Verdict: Invalid}, {Verdict: Valid}}}
	if sum.ExitCode() != 0 || sum.Verdict() != Measured {
		t.Errorf("exit %d, verdict %s: want 0, measured", sum.ExitCode(), sum.Verdict())
	}
	h, err := sum.HTML()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(h), `RPO study: <span class="measured">measured</span>`) || !strings.Contains(string(h), `id="study-note"`) {
		t.Errorf("summary.html of a study:\n%s", h)
	}
	j, err := sum.JUnit()
	if err != nil || strings.Contains(string(j), "<failure") {
		t.Errorf("junit.xml of a study fails its measurements (%v):\n%s", err, j)
	}
	if !sum.Suite().Study {
		t.Error("a resumed study is no longer a study")
	}
	sum.Runs = append(sum.Runs, Result{Verdict: Pending})
	if sum.ExitCode() != 2 || sum.Verdict() != Unknown {
		t.Errorf("a study with a run left: exit %d, verdict %s", sum.ExitCode(), sum.Verdict())
	}
}

// The power-loss scenarios run the power fault with each persistence
// setting's server configuration, and their cells answer "with X we lose
// up to N ms of acknowledged writes on power loss" in words.
func TestPowerScenariosByPersistence(t *testing.T) {
	var settings [][]string
	for _, name := range []string{"always", "everysec", "no", "rdb", "none"} {
		p, ok := PersistenceByName(name)
		if !ok {
			t.Fatalf("no persistence setting %q", name)
		}
		settings = append(settings, p.Settings)
	}
	st := Study{Targets: []string{"reference", "redis"}, Scenarios: PowerScenarios, Waits: []int{0},
		NodeTimeouts: []time.Duration{2 * time.Second}, Seeds: 1, Settings: settings}
	s, err := st.Suite("rpo")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Runs) != 2*2*5 {
		t.Fatalf("%d runs, want 20", len(s.Runs))
	}
	seen := map[string]bool{}
	for _, r := range s.Runs {
		seen[r.Params.Get("nemesis")] = true
		var cfg []string
		for _, p := range r.Params {
			if p.Key == "server-config" {
				cfg = p.Values
			}
		}
		if len(cfg) == 0 || !strings.HasPrefix(cfg[0], "appendonly ") {
			t.Fatalf("%s: server-config %q", r.Name, cfg)
		}
		if !strings.Contains(r.Name, settingsName(cfg)) {
			t.Errorf("run name %q does not name its persistence %q", r.Name, settingsName(cfg))
		}
	}
	if !seen["power:shard"] || !seen["power:all"] || len(seen) != 2 {
		t.Fatalf("nemeses %v", seen)
	}
	if n := settingsName([]string{"appendonly yes", "appendfsync everysec", "min-replicas-to-write 1"}); n != "appendfsync everysec; min-replicas-to-write 1" {
		t.Errorf("settings name %q", n)
	}
	every, _ := PersistenceByName("everysec")
	e := Entry{Target: "redis", Scenario: "power-all", Settings: every.Settings, Runs: 2, Acked: 1000, Lost: 40,
		RPOMs: Quant{P50: 800, Max: 1100}, LossWindowMs: &Span{From: -1100, To: 0}}
	if p := e.Paragraph(nil); !strings.Contains(p, "So with appendfsync everysec (a background fsync about once a second), the whole cluster's power loss loses up to 1100 ms of acknowledged writes (the worst of 2 run(s); 800 ms at the median).") {
		t.Errorf("paragraph: %s", p)
	}
	e.Lost, e.Scenario = 0, "power-shard"
	if p := e.Paragraph(nil); !strings.Contains(p, "a shard's power loss lost no acknowledged write in 2 run(s)") {
		t.Errorf("paragraph: %s", p)
	}
}
