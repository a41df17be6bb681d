package harness

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/redline-dev/redline/harness/history"
)

// Concurrent records land in the file in index order with non-decreasing
// times, exactly once each, and the counts match.
func TestRecorderConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	rec, err := NewRecorder(path, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 8, 500
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				inv := rec.Record(history.Op{Process: history.Process(w), Type: history.Invoke, F: "read", Key: "k"})
				typ := history.OK
				if i%10 == 0 {
					typ = history.Info
				}
				rec.Record(history.Op{Process: inv.Process, Type: typ, F: "read", Key: "k"})
			}
		}()
	}
	wg.Wait()
	if ok, fail, info := rec.Counts(); ok != workers*each*9/10 || info != workers*each/10 || fail != 0 {
		t.Fatalf("counts %d %d %d", ok, fail, info)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	res, err := history.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Ops) != 2*workers*each {
		t.Fatalf("%d entries in the file", len(res.Ops))
	}
	for i, op := range res.Ops {
		if op.Index != int64(i) {
			t.Fatalf("entry %d has index %d", i, op.Index)
		}
		if i > 0 && op.Time < res.Ops[i-1].Time {
			t.Fatalf("time goes back at %d", i)
		}
	}
	if _, err := history.Pairs(res.Ops); err != nil {
		t.Fatal(err)
	}
}

// The file is written while the run goes, not only at Close.
func TestRecorderFlushesDuringRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	rec, err := NewRecorder(path, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	rec.Record(history.Op{Process: 0, Type: history.Invoke, F: "read", Key: "k"})
	deadline := time.Now().Add(5 * time.Second)
	for {
		res, err := history.ReadFile(path)
		if err == nil && len(res.Ops) == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("entry never reached the file: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
