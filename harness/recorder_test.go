package harness

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redline-dev/redline/history"
)

// Concurrent records land in the file in index order with non-decreasing
// times, exactly once each, and the counts match.
func TestRecorderConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), history.FileName)
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
	path := filepath.Join(t.TempDir(), history.FileName)
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

// BenchmarkRecorder records invocation/completion pairs from 10 and 50
// concurrent workers: more workers must not make each record slower.
func BenchmarkRecorder(b *testing.B) {
	for _, workers := range []int{10, 50} {
		b.Run("workers="+strconv.Itoa(workers), func(b *testing.B) {
			rec, err := NewRecorder(filepath.Join(b.TempDir(), history.FileName), time.Now())
			if err != nil {
				b.Fatal(err)
			}
			defer rec.Close()
			var next atomic.Int64
			b.SetParallelism(max(1, workers/runtime.GOMAXPROCS(0)))
			b.RunParallel(func(pb *testing.PB) {
				p := history.Process(next.Add(1))
				for pb.Next() {
					inv := rec.Record(history.Op{Process: p, Type: history.Invoke, F: "write", Key: "redline:abcd:register:0:7", Value: json.RawMessage("3")})
					rec.Record(history.Op{Process: inv.Process, Type: history.OK, F: "write", Key: inv.Key, Value: inv.Value, Node: "10.0.0.2:6379"})
				}
			})
		})
	}
}

// Each line is exactly what history.Encode writes for the recorded entry,
// whatever fields it carries.
func TestRecorderLinesMatchEncode(t *testing.T) {
	path := filepath.Join(t.TempDir(), history.FileName)
	rec, err := NewRecorder(path, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ops := []history.Op{
		{Process: 3, Type: history.Invoke, F: "write", Key: "k", Value: json.RawMessage("7")},
		{Process: 3, Type: history.Info, F: "write", Key: "k", Value: json.RawMessage("7"), Node: "10.0.0.2:6379", Ext: history.NewExt(history.Ext{Error: "i/o timeout", Wait: &history.Wait{Want: 1, Acked: -1}, Redirects: 2})},
		{Process: history.Nemesis, Type: history.Invoke, F: "start-pause", Ext: history.NewExt(history.Ext{Nodes: []string{"n1"}, Detail: json.RawMessage(`{"mode":"one"}`)})},
	}
	var want bytes.Buffer
	for _, op := range ops {
		got := rec.Record(op)
		if err := history.Encode(&want, &got); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := history.OpenLines(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Format() != history.Framed {
		t.Fatalf("the recorder wrote format %d, want compressed frames", l.Format())
	}
	b, err := io.ReadAll(l)
	if err != nil || l.Torn() != "" {
		t.Fatalf("reading the recorded history: %v (torn %q)", err, l.Torn())
	}
	if string(b) != want.String() {
		t.Fatalf("recorded:\n%s\nwant:\n%s", b, want.String())
	}
}

// A run killed while the recorder writes a frame leaves every frame
// before it readable, and the reader reports the cut one: the crash
// costs at most one frame, never a silent prefix.
func TestRecorderCrashMidFrame(t *testing.T) {
	path := filepath.Join(t.TempDir(), history.FileName)
	rec, err := NewRecorder(path, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 150 {
		rec.Record(history.Op{Process: 1, Type: history.Invoke, F: "add", Key: "k", Value: json.RawMessage(strconv.Itoa(i))})
		if i == 99 {
			rec.writeFrame() // as the flusher does every frameEvery
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	whole, err := history.ReadFile(path)
	if err != nil || len(whole.Ops) != 150 || whole.TruncatedTail {
		t.Fatalf("whole: %d ops, torn %v, %v", len(whole.Ops), whole.TruncatedTail, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), history.FileName)
	if err := os.WriteFile(cut, b[:len(b)-10], 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := history.ReadFile(cut)
	if err != nil || len(res.Ops) != 100 || !res.TruncatedTail || res.TornBytes == 0 || res.TornLine != 101 {
		t.Fatalf("cut mid-frame: %d ops, torn %v (%d bytes at line %d), %v", len(res.Ops), res.TruncatedTail, res.TornBytes, res.TornLine, err)
	}
}

// recorded reads back what rec has recorded so far from its file (the
// recorder keeps no entries in memory): the pending entries are written
// as a frame first.
func recorded(t testing.TB, rec *Recorder) []history.Op {
	t.Helper()
	rec.writeFrame()
	res, err := history.ReadFile(rec.f.Name())
	if err != nil {
		t.Fatalf("reading back the history: %v", err)
	}
	if res.TruncatedTail {
		t.Fatalf("the history reads back torn")
	}
	return res.Ops
}
