package bench

import (
	"testing"
	"time"
)

// A run of 30 one-second intervals where a fault from 10 s to 15 s halves
// throughput and adds MOVED: the windows must say so.
func TestFaultWindows(t *testing.T) {
	e := newEngine(Options{KV: testKV(), Concurrency: 1, Duration: time.Hour, OpTimeout: time.Second}, nil)
	s := newSeries(e.workers, e.shards())
	w := e.workers[0]
	for sec := 1; sec <= 30; sec++ {
		n, lat := 1000, time.Millisecond
		if sec > 10 && sec <= 15 {
			n, lat = 500, 20*time.Millisecond
			w.stats.c.Moved += 10
		}
		for i := 0; i < n; i++ {
			w.record([]pending{{out: outOK, sent: 0, done: lat}})
		}
		s.collect(time.Duration(sec) * time.Second)
	}
	e.series = s
	r := e.result(30 * time.Second)
	r.Events = []Event{
		{AtS: 10, Type: "invoke", F: "start-migrate"},
		{AtS: 12.5, Type: "info", F: "start-migrate"},
		{AtS: 14.9, Type: "invoke", F: "stop-migrate"},
		{AtS: 15, Type: "info", F: "stop-migrate"},
	}
	r.finish()
	if len(r.Windows) != 1 {
		t.Fatalf("windows %+v", r.Windows)
	}
	win := r.Windows[0]
	if win.Fault != "migrate" || win.StartS != 10 || win.EndS != 15 || win.TookS != 2.5 {
		t.Errorf("window %s %.1f-%.1f took %.1f", win.Fault, win.StartS, win.EndS, win.TookS)
	}
	if win.Before.OKPerS != 1000 || win.During.OKPerS != 500 || win.After.OKPerS != 1000 {
		t.Errorf("ok/s before %.0f during %.0f after %.0f", win.Before.OKPerS, win.During.OKPerS, win.After.OKPerS)
	}
	if win.Before.P99Ms > 1.1 || win.During.P99Ms < 19 || win.After.P99Ms > 1.1 {
		t.Errorf("p99 before %.3f during %.3f after %.3f", win.Before.P99Ms, win.During.P99Ms, win.After.P99Ms)
	}
	if win.During.RedirectsPerS != 10 || win.Before.RedirectsPerS != 0 {
		t.Errorf("redirects/s during %.1f before %.1f", win.During.RedirectsPerS, win.Before.RedirectsPerS)
	}
	if r.Throughput < 900 || r.Throughput > 920 {
		t.Errorf("throughput %.1f, want (25*1000+5*500)/30", r.Throughput)
	}
}

// A fault still in force when traffic ends gets a window up to the end.
func TestOpenFaultWindowEndsWithTraffic(t *testing.T) {
	r := &Result{DurationS: 20, Events: []Event{{AtS: 12, Type: "invoke", F: "start-pause"}}}
	r.finish()
	if len(r.Windows) != 1 || r.Windows[0].EndS != 20 || r.Windows[0].Fault != "pause" {
		t.Fatalf("windows %+v", r.Windows)
	}
}

// Faults without a stop (a failover, a rebalance) last until their start
// completes; a window before one fault never reaches back into the previous.
func TestWindowsOfFaultsWithoutStop(t *testing.T) {
	r := &Result{DurationS: 45, Events: []Event{
		{AtS: 4.0, Type: "invoke", F: "start-failover"},
		{AtS: 4.05, Type: "info", F: "start-failover"},
		{AtS: 20, Type: "invoke", F: "start-member"},
		{AtS: 29.8, Type: "info", F: "start-member"},
		{AtS: 30, Type: "info", F: "start-kill"}, // skipped: no invoke
	}}
	r.finish()
	if len(r.Windows) != 2 {
		t.Fatalf("windows %+v", r.Windows)
	}
	fo, m := r.Windows[0], r.Windows[1]
	if fo.Fault != "failover" || fo.EndS != 4.05 || fo.After.ToS != 9.05 {
		t.Errorf("failover window %+v", fo)
	}
	if m.Fault != "member" || m.EndS != 29.8 || m.TookS < 9.79 || m.TookS > 9.81 || m.Before.FromS != 10.2 || m.After.ToS != 39.6 {
		t.Errorf("member window %+v", m)
	}
}

// A shard's gap while the generator itself was behind is flagged: the
// workers may all have been waiting on another shard.
func TestGapsFlaggedWhenGeneratorBehind(t *testing.T) {
	e := newEngine(Options{KV: testKV(), Concurrency: 1, Rate: 1000, Duration: 10 * time.Second, OpTimeout: time.Second}, nil)
	e.gaps = newGapTracker([]string{"a", "b"})
	e.series = newSeries(e.workers, 2)
	w := e.workers[0]
	for sec := 1; sec <= 10; sec++ {
		w.stats.c.OK[opGet] += 1000
		if sec == 6 {
			w.stats.c.LagMaxNs = int64(1500 * time.Millisecond)
		}
		e.series.collect(time.Duration(sec) * time.Second)
	}
	e.gaps.note(0, 4500*time.Millisecond, 2*time.Second) // while behind
	e.gaps.note(1, 8*time.Second, time.Second)           // on schedule
	r := e.result(10 * time.Second)
	if !r.Shards[0].GeneratorBehind || r.Shards[1].GeneratorBehind {
		t.Fatalf("shards %+v", r.Shards)
	}
	if r.Shards[0].MaxGapAtS != 4.5 || r.Shards[0].MaxGapS != 2 {
		t.Errorf("shard a: %+v", r.Shards[0])
	}
}
