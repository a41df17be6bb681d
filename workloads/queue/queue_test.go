package queue

import (
	"testing"
	"time"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/workloads/workloadtest"
)

func queueOp(f, key string, v Value) history.Op {
	op := history.Op{F: f, Key: key}
	op.SetValue(v)
	return op
}

// The commands on a real (in-process) cluster: a list message moves to
// the processing list and its ack removes it; a stream entry is delivered
// to its consumer, stays pending until XACK, and a drain sees both.
func TestQueueCommands(t *testing.T) {
	ctx, c := workloadtest.LocalClient(t)
	w := workloadtest.New(t, "queue").(*queue)
	if err := w.Setup(ctx, c); err != nil {
		t.Fatal(err)
	}
	value := func(op history.Op) Value {
		t.Helper()
		var v Value
		if op.Type != history.OK || op.DecodeValue(&v) != nil {
			t.Fatalf("%s: %+v %s", op.F, op, op.Value)
		}
		return v
	}
	for _, kind := range []string{List, Stream} {
		k := w.key(kind, 0)
		enq := value(w.Invoke(ctx, c, queueOp("enqueue", k, Value{Kind: kind, Msg: "m1"})))
		if kind == Stream && enq.ID == "" {
			t.Fatalf("XADD gave no id: %+v", enq)
		}
		got := value(w.Invoke(ctx, c, queueOp("dequeue", k, Value{Kind: kind, Consumer: "w0"})))
		if len(got.Msgs) != 1 || got.Msgs[0].Msg != "m1" || got.Msgs[0].ID != enq.ID {
			t.Fatalf("%s dequeue: %+v", kind, got)
		}
		if empty := value(w.Invoke(ctx, c, queueOp("dequeue", k, Value{Kind: kind, Consumer: "w0"}))); len(empty.Msgs) != 0 {
			t.Fatalf("%s dequeue of an empty queue: %+v", kind, empty)
		}
		d := value(w.Invoke(ctx, c, queueOp("drain", k, Value{Kind: kind})))
		if kind == List && (len(d.Queue) != 0 || len(d.Processing) != 1) ||
			kind == Stream && (len(d.Entries) != 1 || len(d.Pending) != 1 || d.LastDelivered != enq.ID) {
			t.Fatalf("%s drain before the ack: %+v", kind, d)
		}
		a := value(w.Invoke(ctx, c, queueOp("ack", k, Value{Kind: kind, Consumer: "w0", Msgs: got.Msgs})))
		if a.Acked == nil || *a.Acked != 1 {
			t.Fatalf("%s ack: %+v", kind, a)
		}
		a = value(w.Invoke(ctx, c, queueOp("ack", k, Value{Kind: kind, Consumer: "w0", Msgs: got.Msgs})))
		if a.Acked == nil || *a.Acked != 0 {
			t.Fatalf("%s second ack: %+v", kind, a)
		}
		d = value(w.Invoke(ctx, c, queueOp("drain", k, Value{Kind: kind})))
		if len(d.Processing) != 0 || len(d.Pending) != 0 {
			t.Fatalf("%s drain after the ack: %+v", kind, d)
		}
	}
	// A claim takes an entry left pending by another consumer once it has
	// been idle long enough.
	k := w.key(Stream, 1)
	value(w.Invoke(ctx, c, queueOp("enqueue", k, Value{Kind: Stream, Msg: "m2"})))
	value(w.Invoke(ctx, c, queueOp("dequeue", k, Value{Kind: Stream, Consumer: "dead"})))
	if got := value(w.Invoke(ctx, c, queueOp("claim", k, Value{Kind: Stream, Consumer: "w1"}))); len(got.Msgs) != 0 {
		t.Fatalf("claimed a fresh entry: %+v", got)
	}
	time.Sleep(queueClaimIdle + 100*time.Millisecond)
	if got := value(w.Invoke(ctx, c, queueOp("claim", k, Value{Kind: Stream, Consumer: "w1"}))); len(got.Msgs) != 1 || got.Msgs[0].Msg != "m2" {
		t.Fatalf("claim after the idle time: %+v", got)
	}
	if ops := w.FinalOps(); len(ops) != 2*w.keys || ops[0].F != "drain" {
		t.Fatalf("final ops %v", ops)
	}
}

// A few consumers on a healthy cluster, drained at the end: the queue
// checker finds every message accounted for.
func TestQueueWorkersOnAHealthyClusterAreValid(t *testing.T) {
	ctx, c := workloadtest.LocalClient(t)
	w := workloadtest.New(t, "queue").(*queue)
	if err := w.Setup(ctx, c); err != nil {
		t.Fatal(err)
	}
	ops := workloadtest.RunRecorded(t, ctx, c, w, 4, 40, nil)
	r := Checker(checker.Scope{KeyPrefix: w.KeyPrefix()}).Check(ctx, checker.NewHistory(ops))
	if r.Valid != checker.Valid {
		t.Fatalf("valid = %v: %v", r.Valid, r.Figures)
	}
	f, ok := checker.FiguresAs[*Figures](r)
	if !ok || f.EnqueuesOK == 0 || f.Delivered == 0 || f.DrainsOK != 2*w.keys {
		t.Fatalf("figures %v", r.Figures)
	}
	t.Logf("figures: enqueues %v, delivered %v, acks %v, pending at end %v, duplicates %v", f.EnqueuesOK, f.Delivered, f.AcksOK, f.PendingAtEnd, f.Duplicates)
}
