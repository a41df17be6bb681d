package queue

import (
	"github.com/redline-dev/redline/checker/checkertest"
	"strings"
	"testing"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
)

// queueH builds queue histories: times in ms.
type queueH struct {
	checkertest.Hist
	kind string
}

func (h *queueH) enq(p int, key, msg string, t0 int64, typ history.Type, id string, t1 int64, node string) *queueH {
	in := map[string]any{"kind": h.kind, "msg": msg}
	out := map[string]any{"kind": h.kind, "msg": msg}
	if id != "" {
		out["id"] = id
	}
	if c := h.Call(p, "enqueue", key, in, t0, typ, out, t1); c != nil {
		c.Node = node
	}
	return h
}

// msgs are "body" or "body@id".
func qmsgs(ms ...string) []map[string]any {
	out := []map[string]any{}
	for _, m := range ms {
		body, id, _ := strings.Cut(m, "@")
		e := map[string]any{"msg": body}
		if id != "" {
			e["id"] = id
		}
		out = append(out, e)
	}
	return out
}

func (h *queueH) deq(p int, f, key, consumer string, t0 int64, typ history.Type, t1 int64, ms ...string) *queueH {
	in := map[string]any{"kind": h.kind, "consumer": consumer}
	out := map[string]any{"kind": h.kind, "consumer": consumer, "msgs": qmsgs(ms...)}
	h.Call(p, f, key, in, t0, typ, out, t1)
	return h
}

func (h *queueH) ack(p int, key, consumer, msg string, t0 int64, typ history.Type, acked int, t1 int64) *queueH {
	in := map[string]any{"kind": h.kind, "consumer": consumer, "msgs": qmsgs(msg)}
	out := map[string]any{"kind": h.kind, "consumer": consumer, "msgs": qmsgs(msg), "acked": acked}
	h.Call(p, "ack", key, in, t0, typ, out, t1)
	return h
}

func (h *queueH) drainList(key string, t int64, queue, processing []string) *queueH {
	h.Call(90+len(h.Ops), "drain", key, map[string]any{"kind": List}, t, history.OK,
		map[string]any{"kind": List, "queue": queue, "processing": processing}, t+1)
	return h
}

func (h *queueH) drainStream(key string, t int64, entries []string, last string, pending ...string) *queueH {
	var pel []map[string]any
	for _, id := range pending {
		pel = append(pel, map[string]any{"id": id, "consumer": "c0", "deliveries": 1})
	}
	h.Call(90+len(h.Ops), "drain", key, map[string]any{"kind": Stream}, t, history.OK,
		map[string]any{"kind": Stream, "entries": qmsgs(entries...), "last_delivered": last, "pending": pel}, t+1)
	return h
}

// listOK: a, b, c enqueued; a delivered and acked; b delivered, not acked
// (in processing at the end); c still queued.
func listOK() *queueH {
	h := &queueH{kind: List}
	h.enq(0, "q", "a", 0, history.OK, "", 1, "A")
	h.enq(0, "q", "b", 2, history.OK, "", 3, "A")
	h.enq(0, "q", "c", 4, history.OK, "", 5, "A")
	h.deq(1, "dequeue", "q", "c1", 6, history.OK, 7, "a")
	h.ack(1, "q", "c1", "a", 8, history.OK, 1, 9)
	h.deq(1, "dequeue", "q", "c1", 10, history.OK, 11, "b")
	return h
}

func TestQueueListValid(t *testing.T) {
	h := listOK()
	h.deq(2, "dequeue", "q", "c2", 12, history.OK, 13) // empty: nothing to deliver? c is queued: allowed (another view)
	h.drainList("q", 100, []string{"c"}, []string{"b"})
	r := checkertest.Check(t, Checker(), h.Done())
	checkertest.WantValid(t, r, checker.Valid)
	if checkertest.Fig[int](t, r, "lost") != 0 || checkertest.Fig[int](t, r, "pending_at_end") != 1 || checkertest.Fig[int](t, r, "delivered") != 2 || checkertest.Fig[int](t, r, "duplicates") != 0 {
		t.Fatalf("figures %v", r.Figures)
	}
}

func TestQueueLostIsInvalidAndClassified(t *testing.T) {
	build := func(kill bool) []history.Op {
		h := listOK()
		if kill {
			h.Nemesis(50, "start-kill", "A")
			h.Nemesis(60, "stop-kill", "A")
		}
		h.drainList("q", 100, nil, []string{"b"}) // c is gone
		return h.Done()
	}
	r := checkertest.Check(t, Checker(), build(false))
	checkertest.WantValid(t, r, checker.Invalid)
	if checkertest.Fig[int](t, r, "lost") != 1 || checkertest.Fig[int](t, r, "lost_unexplained") != 1 || !strings.Contains(r.Why(), "lost 1 acknowledged") {
		t.Fatalf("figures %v", r.Figures)
	}
	r = checkertest.Check(t, Checker(), build(true))
	checkertest.WantValid(t, r, checker.Invalid)
	if checkertest.Fig[int](t, r, "lost_after_failover_loss") != 1 || !strings.Contains(r.Why(), "1 after-failover-loss") {
		t.Fatalf("figures %v", r.Figures)
	}
}

func TestQueueUnexpectedAndEarlyDelivery(t *testing.T) {
	cases := map[string]*queueH{
		"never sent": func() *queueH {
			h := listOK()
			h.deq(2, "dequeue", "q", "c2", 12, history.OK, 13, "zzz")
			return h.drainList("q", 100, []string{"c"}, []string{"b", "zzz"})
		}(),
		"enqueue failed": func() *queueH {
			h := listOK()
			h.enq(3, "q", "f", 20, history.Fail, "", 21, "A")
			return h.drainList("q", 100, []string{"c", "f"}, []string{"b"})
		}(),
		"another queue's message": func() *queueH {
			h := listOK()
			h.enq(3, "q2", "x", 20, history.OK, "", 21, "A")
			h.drainList("q2", 100, []string{"x"}, nil)
			return h.drainList("q", 100, []string{"c", "x"}, []string{"b"})
		}(),
		"delivered before enqueued": func() *queueH {
			h := listOK()
			h.deq(2, "dequeue", "q", "c2", 12, history.OK, 13, "late")
			h.enq(3, "q", "late", 20, history.OK, "", 21, "A")
			return h.drainList("q", 100, []string{"c"}, []string{"b", "late"})
		}(),
	}
	for name, h := range cases {
		r := checkertest.Check(t, Checker(), h.Done())
		if r.Valid != checker.Invalid {
			t.Errorf("%s: %v %v", name, r.Valid, r.Figures)
		}
	}
}

// Duplicates are counted, not judged: at least once is the promise.
func TestQueueDuplicatesAreCounted(t *testing.T) {
	h := listOK()
	h.deq(2, "dequeue", "q", "c2", 12, history.OK, 13, "a") // a again (its move lost, say)
	h.drainList("q", 100, []string{"c", "c"}, []string{"b"})
	r := checkertest.Check(t, Checker(), h.Done())
	checkertest.WantValid(t, r, checker.Valid)
	if checkertest.Fig[int](t, r, "duplicates") != 2 {
		t.Fatalf("figures %v", r.Figures)
	}
}

// A message acked but pending again at the end: the ack was lost.
func TestQueueAckLostIsReported(t *testing.T) {
	h := listOK()
	h.drainList("q", 100, []string{"c"}, []string{"a", "b"})
	r := checkertest.Check(t, Checker(), h.Done())
	checkertest.WantValid(t, r, checker.Valid)
	if checkertest.Fig[int](t, r, "acks_lost") != 1 || !strings.Contains(r.Why(), "1 acks were lost") {
		t.Fatalf("figures %v", r.Figures)
	}
}

// streamOK: a (1-0), b (2-0), c (3-0); a delivered and acked, b delivered
// and pending, c never delivered (above last-delivered 2-0).
func streamOK() *queueH {
	h := &queueH{kind: Stream}
	h.enq(0, "s", "a", 0, history.OK, "1-0", 1, "A")
	h.enq(0, "s", "b", 2, history.OK, "2-0", 3, "A")
	h.enq(0, "s", "c", 4, history.OK, "3-0", 5, "A")
	h.deq(1, "dequeue", "s", "c1", 6, history.OK, 7, "a@1-0")
	h.ack(1, "s", "c1", "a", 8, history.OK, 1, 9)
	h.deq(1, "dequeue", "s", "c1", 10, history.OK, 11, "b@2-0")
	return h
}

func TestQueueStream(t *testing.T) {
	h := streamOK()
	h.drainStream("s", 100, []string{"a@1-0", "b@2-0", "c@3-0"}, "2-0", "2-0")
	r := checkertest.Check(t, Checker(), h.Done())
	checkertest.WantValid(t, r, checker.Valid)
	if checkertest.Fig[int](t, r, "pending_at_end") != 1 || checkertest.Fig[int](t, r, "duplicates") != 0 {
		t.Fatalf("figures %v", r.Figures)
	}
	// A claim redelivers b: a duplicate, still valid.
	h = streamOK()
	h.deq(2, "claim", "s", "c2", 20, history.OK, 21, "b@2-0")
	h.drainStream("s", 100, []string{"a@1-0", "b@2-0", "c@3-0"}, "2-0", "2-0")
	r = checkertest.Check(t, Checker(), h.Done())
	checkertest.WantValid(t, r, checker.Valid)
	if checkertest.Fig[int](t, r, "duplicates") != 1 {
		t.Fatalf("figures %v", r.Figures)
	}
	// c skipped by the group (below last-delivered, not pending, never
	// delivered): lost.
	h = streamOK()
	h.drainStream("s", 100, []string{"a@1-0", "b@2-0", "c@3-0"}, "3-0", "2-0")
	r = checkertest.Check(t, Checker(), h.Done())
	checkertest.WantValid(t, r, checker.Invalid)
	if checkertest.Fig[int](t, r, "lost") != 1 {
		t.Fatalf("figures %v", r.Figures)
	}
	// A delivery with another id than its XADD got.
	h = streamOK()
	h.deq(2, "dequeue", "s", "c2", 20, history.OK, 21, "c@9-0")
	h.drainStream("s", 100, []string{"a@1-0", "b@2-0", "c@3-0"}, "3-0", "2-0", "3-0")
	r = checkertest.Check(t, Checker(), h.Done())
	checkertest.WantValid(t, r, checker.Invalid)
	if checkertest.Fig[map[string]any](t, r, "anomalies")["id-mismatch"] == nil {
		t.Fatalf("figures %v", r.Figures)
	}
	// Pending at the end but never delivered, no indeterminate dequeue.
	h = streamOK()
	h.drainStream("s", 100, []string{"a@1-0", "b@2-0", "c@3-0"}, "3-0", "2-0", "3-0")
	r = checkertest.Check(t, Checker(), h.Done())
	checkertest.WantValid(t, r, checker.Invalid)
	if checkertest.Fig[map[string]any](t, r, "anomalies")["pending-never-delivered"] == nil {
		t.Fatalf("figures %v", r.Figures)
	}
	// ... explained by an indeterminate dequeue.
	h = streamOK()
	h.deq(2, "dequeue", "s", "c2", 20, history.Info, 21)
	h.drainStream("s", 100, []string{"a@1-0", "b@2-0", "c@3-0"}, "3-0", "2-0", "3-0")
	checkertest.WantValid(t, checkertest.Check(t, Checker(), h.Done()), checker.Valid)
}

// Stream ids that go backwards (the tail lost in a failover) are reported.
func TestQueueStreamIDRegression(t *testing.T) {
	h := streamOK()
	h.enq(0, "s", "d", 20, history.OK, "2-0", 21, "B") // after c's 3-0
	h.deq(1, "dequeue", "s", "c1", 22, history.OK, 23, "c@3-0")
	h.deq(1, "dequeue", "s", "c1", 24, history.OK, 25, "d@2-0")
	h.drainStream("s", 100, []string{"a@1-0", "d@2-0"}, "3-0", "2-0", "3-0")
	r := checkertest.Check(t, Checker(), h.Done())
	if checkertest.Fig[int](t, r, "id_regressions") != 1 {
		t.Fatalf("figures %v", r.Figures)
	}
}

// Every lie is invalid or unknown, never valid.
func TestQueueLiesAreNeverValid(t *testing.T) {
	drained := func(h *queueH) *queueH { return h.drainList("q", 100, []string{"c"}, []string{"b"}) }
	cases := map[string]struct {
		h    func() *queueH
		want checker.Validity
	}{
		"delivery not a list": {func() *queueH {
			h := drained(listOK())
			h.Call(5, "dequeue", "q", map[string]any{"kind": "list", "consumer": "c5"}, 30, history.OK, map[string]any{"kind": "list", "msgs": "abc"}, 31)
			return h
		}, checker.Invalid},
		"delivery without a body": {func() *queueH {
			h := drained(listOK())
			h.Call(5, "dequeue", "q", map[string]any{"kind": "list", "consumer": "c5"}, 30, history.OK, map[string]any{"kind": "list", "msgs": []any{map[string]any{}}}, 31)
			return h
		}, checker.Invalid},
		"ack count 7": {func() *queueH {
			h := listOK()
			h.ack(1, "q", "c1", "b", 20, history.OK, 7, 21)
			return drained(h)
		}, checker.Invalid},
		"stream enqueue without id": {func() *queueH {
			h := &queueH{kind: Stream}
			h.enq(0, "s", "a", 0, history.OK, "", 1, "A")
			return h.drainStream("s", 100, []string{"a@1-0"}, "0-0")
		}, checker.Invalid},
		"stream drain with a garbage last-delivered id": {func() *queueH {
			h := &queueH{kind: Stream}
			h.enq(0, "s", "a", 0, history.OK, "1-0", 1, "A")
			return h.drainStream("s", 100, []string{"a@1-0"}, "everything")
		}, checker.Invalid},
		"drain unreadable": {func() *queueH {
			h := listOK()
			h.Call(90, "drain", "q", map[string]any{"kind": "list"}, 100, history.OK, "garbage", 101)
			return h
		}, checker.Invalid},
		"no kind": {func() *queueH {
			h := drained(listOK())
			h.Call(5, "enqueue", "q", map[string]any{"msg": "z"}, 30, history.OK, nil, 31)
			return h
		}, checker.Unknown},
		"message enqueued twice": {func() *queueH {
			h := listOK()
			h.enq(5, "q", "a", 30, history.OK, "", 31, "A")
			return drained(h)
		}, checker.Unknown},
		"ack of a message never delivered to its consumer": {func() *queueH {
			h := listOK()
			h.ack(5, "q", "c5", "c", 30, history.OK, 1, 31)
			return drained(h)
		}, checker.Unknown},
		"an op after the drain": {func() *queueH {
			h := drained(listOK())
			h.enq(5, "q", "z", 200, history.Fail, "", 201, "A")
			return h
		}, checker.Unknown},
		"another op": {func() *queueH {
			h := drained(listOK())
			h.Call(5, "read", "q", map[string]any{"kind": "list"}, 30, history.OK, nil, 31)
			return h
		}, checker.Unknown},
		"no drain": {func() *queueH { return listOK() }, checker.Unknown},
		"drain failed": {func() *queueH {
			h := listOK()
			h.Call(90, "drain", "q", map[string]any{"kind": "list"}, 100, history.Info, nil, 101)
			return h
		}, checker.Unknown},
	}
	for name, c := range cases {
		r := checkertest.Check(t, Checker(), c.h().Done())
		if r.Valid != c.want {
			t.Errorf("%s: %v, want %v; %v", name, r.Valid, c.want, r.Figures)
		}
		if r.Valid != checker.Valid && r.Why() == "" {
			t.Errorf("%s: no why", name)
		}
	}
}

func TestQueueBrokenHistoriesAreNeverValid(t *testing.T) {
	ops := drainedList().Done()
	if r := checkertest.Check(t, Checker(), ops); r.Valid != checker.Valid {
		t.Fatalf("the base history: %v %v", r.Valid, r.Figures)
	}
	bad := append([]history.Op(nil), ops...)
	bad[1].Time = bad[0].Time - 1
	if r := checkertest.Check(t, Checker(), bad); r.Valid == checker.Valid {
		t.Errorf("completion before invocation: %v", r.Figures)
	}
	dup := append([]history.Op(nil), ops...)
	dup[2].Index = dup[0].Index
	if r := checkertest.Check(t, Checker(), dup); r.Valid == checker.Valid {
		t.Errorf("duplicated index: %v", r.Figures)
	}
	twice := append(append([]history.Op(nil), ops...), ops[len(ops)-1])
	if r := checkertest.Check(t, Checker(), twice); r.Valid == checker.Valid {
		t.Errorf("duplicated completion: %v", r.Figures)
	}
	swapped := append([]history.Op(nil), ops...)
	swapped[0], swapped[1] = swapped[1], swapped[0]
	if r := checkertest.Check(t, Checker(), swapped); r.Valid == checker.Valid {
		t.Errorf("swapped: %v", r.Figures)
	}
	// Torn: the history ends before the drain completed.
	if r := checkertest.Check(t, Checker(), ops[:len(ops)-1]); r.Valid == checker.Valid {
		t.Errorf("torn: %v %v", r.Valid, r.Figures)
	}
	// Missing completions: the enqueues' acks gone, so nothing to account for.
	var noAcks []history.Op
	for _, op := range ops {
		if op.F == "enqueue" && op.Type == history.OK {
			continue
		}
		noAcks = append(noAcks, op)
	}
	if r := checkertest.Check(t, Checker(), noAcks); r.Valid == checker.Valid {
		t.Errorf("no acknowledged enqueue: %v", r.Figures)
	}
}

func drainedList() *queueH { return listOK().drainList("q", 100, []string{"c"}, []string{"b"}) }

// Every acknowledged message delivered, but no drain: valid on the total
// queue, and the why says the end state is not known.
func TestQueueWithoutDrainSaysSo(t *testing.T) {
	h := &queueH{kind: List}
	h.enq(0, "q", "a", 0, history.OK, "", 1, "A")
	h.deq(1, "dequeue", "q", "c1", 6, history.OK, 7, "a")
	r := checkertest.Check(t, Checker(), h.Done())
	checkertest.WantValid(t, r, checker.Valid)
	if checkertest.Fig[int](t, r, "undrained_queues") != 1 || !strings.Contains(r.Why(), "no successful final drain") {
		t.Fatalf("figures %v", r.Figures)
	}
}

func TestQueueNoEvidenceIsUnknown(t *testing.T) {
	checkertest.WantValid(t, checkertest.Check(t, Checker(), nil), checker.Unknown)
	if checker.DescribeFigure("duplicates") == "" || checker.DescribeFigure("acks_lost") == "" {
		t.Fatal("the queue's figures have no explanation")
	}
}
