package queue

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
)

// The explanations of the queue checker's figures (checker.DescribeFigure).
var _ = checker.ExplainFigures(map[string]string{
	"lost_after_failover_loss": "acknowledged messages lost where the evidence supports the documented loss: the primary that acknowledged the enqueue was struck by a fault (not a clock fault) afterwards and its WAIT was not satisfied (Redis Cluster replicates asynchronously); still a loss",
	"lost_unexplained":         "acknowledged messages lost with no fault on the acknowledging node after the ack, or despite a satisfied WAIT: nothing documented explains them",
	"duplicates":               "messages delivered more than once (a claim of a pending entry, a move lost in a failover, a message still queued at the end that was delivered already): allowed, as a reliable queue delivers at least once",
	"pending_at_end":           "messages delivered but not acknowledged at the end: in the list queue's processing list or the stream group's pending entries list, where a consumer can recover them",
	"acks_lost":                "messages whose acknowledgement removed them (LREM or XACK answered 1) but that were pending again at the end: the acknowledgement was lost (a failover); they will be delivered again",
	"acks_found_nothing":       "acknowledgements that found their message neither in the processing list nor pending (LREM or XACK answered 0): its delivery was lost (a failover) or it was claimed and acknowledged already",
	"id_regressions":           "stream entries added after another had been acknowledged that got a lower id: the stream's tail was lost in a failover and its ids were handed out again",
	"recovered":                "messages whose enqueue had an unknown outcome but that were delivered or found at the end: the enqueue did happen",
	"undrained_queues":         "queues with no successful final drain: what they still held at the end, and their pending entries, are not known (an acknowledged message never delivered there makes the verdict unknown)",
})

type queueChecker struct{ o checker.Scope }

// Checker judges a history of the queue workload as Jepsen's total-queue
// checker does, per queue (key), plus what a reliable queue adds: a
// delivered message is kept (the processing list, the stream group's
// pending entries) until it is acknowledged, so the final drain (after
// healing, reads only) shows what is still queued and what is still
// pending.
//
//   - lost: an acknowledged enqueue never delivered (no ok dequeue or
//     claim returned it) and not in the final drain (neither still queued
//     nor pending). Classified after-failover-loss when the enqueue's WAIT
//     was not satisfied and a fault (not a clock fault) struck the node
//     that acknowledged it after it did (Redis Cluster replicates
//     asynchronously), else unexplained. Invalid either way: the queue
//     forgot a message it accepted.
//   - unexpected: a delivered (or drained) message that no enqueue sent,
//     whose enqueue certainly failed, or that was enqueued on another
//     queue: the server made it up.
//   - delivered-before-enqueued: a dequeue that completed before the
//     message's enqueue was invoked.
//   - id-mismatch: a stream delivery whose entry id is not the id the
//     message's XADD was acknowledged with.
//   - pending-never-delivered: a message in the processing list or the
//     pending entries at the end that no dequeue or claim could have
//     delivered (none was indeterminate on that queue).
//   - garbage: a reply that cannot be what the workload wrote (a stream
//     enqueue acknowledged without an id, an ack count other than 0 or 1,
//     an unreadable delivery or drain).
//   - duplicates (a figure, not judged: delivery is at least once): a
//     message delivered more than once (a claim of a pending entry, a
//     move lost in a failover and delivered again, a message still queued
//     at the end that was delivered already).
//   - acks_lost (reported): a message whose ack removed it (acked 1) but
//     that is pending again at the end: the ack was lost (failover);
//     acks_found_nothing: an ack that found its message neither in the
//     processing list nor pending (acked 0); id_regressions: an XADD begun
//     after another completed that got a lower id (the stream's tail was
//     lost in a failover, and ids are handed out again).
//
// Invalid on any anomaly; unknown when ops cannot be read (no kind, an
// enqueue without a message or a message enqueued twice, an ack of a
// message its consumer was never given, an op after its queue's drain,
// an op completed before it was invoked or an index used twice), when a
// queue with acknowledged enqueues has no successful drain, or when no
// enqueue was acknowledged.
func Checker(opts ...checker.Scope) checker.Checker {
	var o checker.Scope
	if len(opts) > 0 {
		o = opts[0]
	}
	return queueChecker{o.WithDefaults()}
}

func (q queueChecker) Name() string { return q.o.NameOr("queue") }

// queueDelivery is one message handed out (or found at the end).
type queueDelivery struct {
	c   *checker.Call
	msg Msg
}

type queueState struct {
	kind          string
	enqueues      []*checker.Call
	deliveries    []queueDelivery
	indeterminate int // dequeues and claims of unknown outcome
	drain         *checker.Call
	drainValue    Value
	acks          []*checker.Call
	ops           []*checker.Call // every op but the drains
}

func (q queueChecker) Check(_ context.Context, in *checker.History) checker.Result {
	p, err := q.analyze(in, queueNames{})
	if err != nil {
		return checker.InvalidHistory(err)
	}
	return q.verdict(p)
}

// CheckPartitions is Check on a history given as slot partitions
// (checker.PartitionChecker): a queue's ops are all in one partition
// (each op names its queue's key, whichever kind it is) and the fault
// windows are run-wide, so each partition is analysed as Check analyses
// the whole and the partials add up (merge). What is not a queue's own is
// its messages: Check looks a message up across queues (one enqueued
// twice makes the later enqueue unreadable; one delivered from another
// queue than it was enqueued on names that queue). Messages are unique in
// a run, so when no message is used in two partitions
// (checker.SharedNames, 8 bytes an enqueue) one pass is all; otherwise a
// second pass finds the enqueues of the shared messages and a third
// analyses every partition knowing them (queueNames). It holds one
// partition's queue ops and their analysis at a time.
func (q queueChecker) CheckPartitions(ctx context.Context, n int, load checker.PartitionLoader) (checker.Result, error) {
	var names checker.SharedNames
	m, err := q.partitions(ctx, n, load, queueNames{}, func(p *queuePartial) { names.Add(p.defined, p.wanted) })
	if err != nil {
		return checker.PartitionStopped(err)
	}
	shared := names.Shared()
	if shared == nil {
		return q.verdict(m), nil
	}
	owners := map[string]*queueOwner{}
	if m, err = q.partitions(ctx, n, load, queueNames{shared: shared}, func(p *queuePartial) {
		for msg, o := range p.owners {
			if w := owners[msg]; w == nil || o.index < w.index {
				owners[msg] = o
			}
		}
	}); err != nil {
		return checker.PartitionStopped(err)
	}
	m, err = q.partitions(ctx, n, load, queueNames{owners: owners}, nil)
	if err != nil {
		return checker.PartitionStopped(err)
	}
	return q.verdict(m), nil
}

// partitions analyses each partition with names, gives each partial to
// each (if any) and merges them (checker.MergePartitions).
func (q queueChecker) partitions(ctx context.Context, n int, load checker.PartitionLoader, names queueNames, each func(*queuePartial)) (*queuePartial, error) {
	return checker.MergePartitions(ctx, n, load, q.o.Filter(),
		func(in *checker.History) (*queuePartial, error) { return q.analyze(in, names) },
		(*queuePartial).merge, q.newPartial, each)
}

// queueNames is what a partition's analysis is told of the messages other
// partitions use: to note the enqueues of shared ones (the second pass),
// or which enqueue sent each (the third).
type queueNames struct {
	shared map[uint64]bool
	owners map[string]*queueOwner
}

// queueOwner is the enqueue Check takes a message's to be, the first
// readable one: its index and its queue.
type queueOwner struct {
	index int64
	key   string
}

// queuePartial is what the queue checker found in a history or in one
// partition of it: counts, and the first findings of each list by where a
// check of the whole history finds them (checker.Pos).
type queuePartial struct {
	an          *checker.Findings
	malformed   *checker.Firsts[string]
	lostSamples *checker.Firsts[map[string]any]
	counts      map[string]int
	// undrained and notDrained are queues (keys in name order): with a
	// lost message and no drain, without a drain.
	undrained, notDrained []string

	queues, lost, lostAfterLoss, lostUnexplained, lostWaitSat                       int
	duplicates, recovered, pendingEnd, acksLost, acksNothing, idRegressions, faults int

	// defined are the messages its enqueues sent, wanted those it found
	// delivered or drained without an enqueue here
	// (checker.SharedNames); owners the enqueues of shared messages
	// (queueNames.shared).
	defined, wanted map[string]bool
	owners          map[string]*queueOwner
}

func (q queueChecker) newPartial() *queuePartial {
	return &queuePartial{an: checker.NewFindings(q.o.MaxExamples), malformed: checker.NewFirsts[string](q.o.MaxExamples),
		lostSamples: checker.NewFirsts[map[string]any](q.o.MaxExamples), counts: map[string]int{},
		defined: map[string]bool{}, wanted: map[string]bool{}, owners: map[string]*queueOwner{}}
}

// merge adds r, a partial of other queues, to p.
func (p *queuePartial) merge(r *queuePartial) {
	p.an.Merge(r.an)
	p.malformed.Merge(r.malformed)
	p.lostSamples.Merge(r.lostSamples)
	for k, n := range r.counts {
		p.counts[k] += n
	}
	p.undrained = append(p.undrained, r.undrained...)
	slices.Sort(p.undrained)
	p.notDrained = append(p.notDrained, r.notDrained...)
	slices.Sort(p.notDrained)
	p.queues += r.queues
	p.lost += r.lost
	p.lostAfterLoss += r.lostAfterLoss
	p.lostUnexplained += r.lostUnexplained
	p.lostWaitSat += r.lostWaitSat
	p.duplicates += r.duplicates
	p.recovered += r.recovered
	p.pendingEnd += r.pendingEnd
	p.acksLost += r.acksLost
	p.acksNothing += r.acksNothing
	p.idRegressions += r.idRegressions
	// The fault windows are run-wide: every partition has them all.
	p.faults = r.faults
	p.defined, p.wanted, p.owners = nil, nil, nil
}

// The passes of the queue checker over a history, in the order it makes
// them (checker.Pos.Phase).
const (
	queueScan   = iota // the calls, by index
	queueQueues        // the queues, by name
)

// analyze is the queue checker's pass over the calls of in; an error is
// a history that cannot be paired.
func (q queueChecker) analyze(in *checker.History, names queueNames) (*queuePartial, error) {
	calls, err := q.o.Calls(in)
	if err != nil {
		return nil, err
	}
	part := q.newPartial()
	an := part.an
	var seq int64 // the order of the findings: the whole's within a queue
	scanAt := func(c *checker.Call) checker.Pos { return checker.Pos{Phase: queueScan, At: c.Inv.Index} }
	queueAt := func(k string) checker.Pos { seq++; return checker.Pos{Phase: queueQueues, Key: k, Seq: seq} }
	badAt := func(p checker.Pos, c *checker.Call, what string) {
		part.malformed.Add(p, fmt.Sprintf("op %d (%s %s): %s", c.Inv.Index, c.Inv.F, c.Inv.Key, what))
	}
	bad := func(c *checker.Call, what string) { badAt(scanAt(c), c, what) }
	read := checker.DecodeJSON[Value]
	counts := part.counts
	queues := map[string]*queueState{}
	byMsg := map[string]*checker.Call{} // enqueue of each message
	// enqueueOf is the enqueue Check takes msg's to be: this partition's,
	// or another's (a call of its index and queue only: every use of one
	// compares its queue first, and it is another).
	enqueueOf := func(msg string) *checker.Call {
		if e := byMsg[msg]; e != nil {
			return e
		}
		if o := names.owners[msg]; o != nil {
			return &checker.Call{Inv: &history.Op{Index: o.index, Key: o.key}}
		}
		return nil
	}
	indexes := map[int64]bool{}
	for i := range calls {
		c := &calls[i]
		if why := c.Misordered(indexes); why != "" {
			bad(c, why)
			continue
		}
		v, ok := read(c.Inv.Value)
		if !ok || (v.Kind != List && v.Kind != Stream) {
			bad(c, "no queue kind (list or stream) in its invocation")
			continue
		}
		s := queues[c.Inv.Key]
		if s == nil {
			s = &queueState{kind: v.Kind}
			queues[c.Inv.Key] = s
		}
		if s.kind != v.Kind {
			bad(c, fmt.Sprintf("a %s op on a %s queue", v.Kind, s.kind))
			continue
		}
		counts[c.Inv.F+"s"]++
		counts[c.Inv.F+"s_"+c.Outcome().String()]++
		if c.Inv.Name() != Drain {
			s.ops = append(s.ops, c)
		}
		switch c.Inv.Name() {
		case Enqueue:
			if v.Msg == "" {
				bad(c, "an enqueue without a message")
				continue
			}
			part.defined[v.Msg] = true
			if e := byMsg[v.Msg]; e != nil {
				bad(c, fmt.Sprintf("message %q was enqueued by op %d too: messages are unique per run", v.Msg, e.Inv.Index))
				continue
			}
			if o := names.owners[v.Msg]; o != nil && o.index != c.Inv.Index {
				// Another partition's enqueue sent it first.
				bad(c, fmt.Sprintf("message %q was enqueued by op %d too: messages are unique per run", v.Msg, o.index))
				continue
			}
			if names.shared[checker.NameHash(v.Msg)] {
				part.owners[v.Msg] = &queueOwner{c.Inv.Index, c.Inv.Key}
			}
			byMsg[v.Msg] = c
			s.enqueues = append(s.enqueues, c)
			if c.OK() && s.kind == Stream {
				if out, ok := read(c.Comp.Value); !ok || !streamID(out.ID) {
					an.Garbage(scanAt(c), c, "an acknowledged XADD must carry the entry id it got")
				}
			}
		case Dequeue, Claim:
			if c.Inv.Name() == Claim && s.kind != Stream {
				bad(c, "a claim on a list queue")
				continue
			}
			if c.Indeterminate() {
				s.indeterminate++
			}
			if !c.OK() {
				continue
			}
			out, ok := read(c.Comp.Value)
			if !ok || !validMsgs(out.Msgs, s.kind) {
				an.Garbage(scanAt(c), c, "a delivery must be a list of messages (with their entry ids on a stream)")
				s.indeterminate++ // it delivered something unreadable
				continue
			}
			for _, m := range out.Msgs {
				s.deliveries = append(s.deliveries, queueDelivery{c: c, msg: m})
			}
			counts["delivered"] += len(out.Msgs)
		case Ack:
			if len(v.Msgs) != 1 || v.Consumer == "" {
				bad(c, "an ack must name its consumer and one message")
				continue
			}
			s.acks = append(s.acks, c)
		case Drain:
			if !c.OK() {
				continue
			}
			out, ok := read(c.Comp.Value)
			if !ok || out.Kind != s.kind || s.kind == Stream && (!validMsgs(out.Entries, s.kind) || !streamID(out.LastDelivered)) {
				an.Garbage(scanAt(c), c, "a drain must read the whole queue (the lists, or the stream's entries and its group's state)")
				continue
			}
			if s.drain == nil || c.Start > s.drain.Start {
				s.drain, s.drainValue = c, out // the last drain
			}
		default:
			bad(c, "not an op of the queue workload")
		}
	}
	windows := in.Windows()
	addrs := in.NodeAddrs()
	keys := make([]string, 0, len(queues))
	for k := range queues {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var undrained []string
	lost, lostAfterLoss, lostUnexplained, lostWaitSat := 0, 0, 0, 0
	duplicates, recovered, pendingEnd, acksLost, acksNothing, idRegressions := 0, 0, 0, 0, 0, 0
	var notDrained []string
	for _, k := range keys {
		s := queues[k]
		if s.drain == nil {
			notDrained = append(notDrained, k)
		}
		// Ops after the drain: the drain would not be the end.
		if s.drain != nil {
			for _, c := range s.ops {
				if c.Start > s.drain.Start {
					badAt(queueAt(k), c, fmt.Sprintf("invoked after the queue's final drain (op %d)", s.drain.Inv.Index))
				}
			}
		}
		delivered := map[string]int{} // message -> deliveries
		givenTo := map[string]map[string]bool{}
		for _, d := range s.deliveries {
			e := enqueueOf(d.msg.Msg)
			if byMsg[d.msg.Msg] == nil {
				part.wanted[d.msg.Msg] = true
			}
			ex := map[string]any{"index": d.c.Inv.Index, "key": k, "msg": d.msg.Msg}
			switch {
			case e == nil:
				ex["why"] = "no enqueue sent this message"
				an.Add(queueAt(k), "unexpected", ex)
				continue
			case e.Inv.Key != k:
				ex["why"] = fmt.Sprintf("it was enqueued on %s (op %d)", e.Inv.Key, e.Inv.Index)
				an.Add(queueAt(k), "unexpected", ex)
				continue
			case e.Failed():
				ex["why"] = fmt.Sprintf("its enqueue (op %d) certainly failed", e.Inv.Index)
				an.Add(queueAt(k), "unexpected", ex)
				continue
			case d.c.End < e.Start:
				ex["enqueue"] = e.Inv.Index
				an.Add(queueAt(k), "delivered-before-enqueued", ex)
				continue
			}
			if s.kind == Stream && e.OK() {
				if out, ok := read(e.Comp.Value); ok && streamID(out.ID) && out.ID != d.msg.ID {
					ex["enqueued_id"], ex["delivered_id"] = out.ID, d.msg.ID
					an.Add(queueAt(k), "id-mismatch", ex)
				}
			}
			delivered[d.msg.Msg]++
			v, _ := read(d.c.Inv.Value)
			if givenTo[d.msg.Msg] == nil {
				givenTo[d.msg.Msg] = map[string]bool{}
			}
			givenTo[d.msg.Msg][v.Consumer] = true
		}
		// Acks: of a message given to their consumer before they began.
		ackedOK := map[string]*checker.Call{}
		for _, a := range s.acks {
			v, _ := read(a.Inv.Value)
			m := v.Msgs[0].Msg
			if !givenTo[m][v.Consumer] {
				badAt(queueAt(k), a, fmt.Sprintf("acknowledges %q, which was never delivered to consumer %s", m, v.Consumer))
				continue
			}
			if !a.OK() {
				continue
			}
			out, ok := read(a.Comp.Value)
			switch {
			case !ok || out.Acked == nil || *out.Acked < 0 || *out.Acked > 1:
				an.Garbage(queueAt(k), a, "an ack's count must be 1 (removed) or 0 (not there)")
			case *out.Acked == 1:
				ackedOK[m] = a
			default:
				acksNothing++
			}
		}
		// What the drain found: still queued (to be delivered again) or
		// pending (delivered, not acknowledged).
		queued, pending := map[string]int{}, map[string]bool{}
		if s.drain != nil {
			dv := s.drainValue
			found := func(m string, where string) bool {
				e := enqueueOf(m)
				if byMsg[m] == nil {
					part.wanted[m] = true
				}
				ex := map[string]any{"index": s.drain.Inv.Index, "key": k, "msg": m, "found_in": where}
				switch {
				case e == nil:
					ex["why"] = "no enqueue sent this message"
				case e.Inv.Key != k:
					ex["why"] = fmt.Sprintf("it was enqueued on %s (op %d)", e.Inv.Key, e.Inv.Index)
				case e.Failed():
					ex["why"] = fmt.Sprintf("its enqueue (op %d) certainly failed", e.Inv.Index)
				default:
					return true
				}
				an.Add(queueAt(k), "unexpected", ex)
				return false
			}
			if s.kind == List {
				for _, m := range dv.Queue {
					if found(m, "queue") {
						queued[m]++
					}
				}
				for _, m := range dv.Processing {
					if found(m, "processing") {
						pending[m] = true
					}
				}
			} else {
				inPEL := map[string]bool{}
				for _, p := range dv.Pending {
					inPEL[p.ID] = true
				}
				for _, e := range dv.Entries {
					if !found(e.Msg, "stream") {
						continue
					}
					switch {
					case inPEL[e.ID]:
						pending[e.Msg] = true
					case streamIDAfter(e.ID, dv.LastDelivered):
						queued[e.Msg]++
					}
				}
			}
			// In the messages' order: the examples are the same every time.
			for _, m := range slices.Sorted(maps.Keys(pending)) {
				pendingEnd++
				if a := ackedOK[m]; a != nil {
					acksLost++
				}
				if delivered[m] == 0 && s.indeterminate == 0 {
					an.Add(queueAt(k), "pending-never-delivered", map[string]any{"index": s.drain.Inv.Index, "key": k, "msg": m,
						"why": "it is pending at the end, but no dequeue or claim on this queue delivered it or was indeterminate"})
				}
			}
		}
		for m, n := range delivered {
			if n+queued[m] > 1 {
				duplicates++
			}
		}
		for m, n := range queued {
			if n > 1 && delivered[m] == 0 {
				duplicates++
			}
		}
		// Stream ids rise in real time among acknowledged XADDs.
		if s.kind == Stream {
			var acked []*checker.Call
			for _, e := range s.enqueues {
				if e.OK() {
					acked = append(acked, e)
				}
			}
			slices.SortStableFunc(acked, func(a, b *checker.Call) int { return cmp.Compare(a.End, b.End) })
			var top string
			p := 0
			byStart := slices.Clone(acked)
			slices.SortStableFunc(byStart, func(a, b *checker.Call) int { return cmp.Compare(a.Start, b.Start) })
			for _, b := range byStart {
				for p < len(acked) && acked[p].End < b.Start {
					if out, ok := read(acked[p].Comp.Value); ok && streamIDAfter(out.ID, top) {
						top = out.ID
					}
					p++
				}
				if out, ok := read(b.Comp.Value); ok && top != "" && streamID(out.ID) && !streamIDAfter(out.ID, top) {
					idRegressions++
				}
			}
		}
		// Total queue: every acknowledged enqueue delivered or still there.
		for _, e := range s.enqueues {
			v, _ := read(e.Inv.Value)
			there := delivered[v.Msg] > 0 || queued[v.Msg] > 0 || pending[v.Msg]
			if there && e.Indeterminate() {
				recovered++
			}
			if there || !e.OK() {
				continue
			}
			if s.drain == nil {
				undrained = append(undrained, k)
				break
			}
			lost++
			w := checker.ClassifyWait(e.Wait())
			if w == checker.WaitSatisfied {
				lostWaitSat++
			}
			ex := map[string]any{"index": e.Inv.Index, "key": k, "msg": v.Msg, "node": e.Comp.Node, "wait": w.String()}
			struck := checker.FaultOnNode(windows, addrs, e.Comp.Node, e.End, s.drain.Start)
			if w != checker.WaitSatisfied && struck != "" {
				lostAfterLoss++
				ex["classification"], ex["fault"] = "after-failover-loss", struck
			} else {
				lostUnexplained++
				ex["classification"] = "unexplained"
			}
			p := queueAt(k)
			an.Add(p, "lost", ex)
			part.lostSamples.Add(p, maps.Clone(ex))
		}
	}
	part.undrained, part.notDrained, part.queues, part.faults = undrained, notDrained, len(keys), len(windows)
	part.lost, part.lostAfterLoss, part.lostUnexplained, part.lostWaitSat = lost, lostAfterLoss, lostUnexplained, lostWaitSat
	part.duplicates, part.recovered, part.pendingEnd, part.acksLost, part.acksNothing, part.idRegressions = duplicates, recovered, pendingEnd, acksLost, acksNothing, idRegressions
	return part, nil
}

// verdict is the result of the queue checker on what it found, of the
// whole history or merged from its partitions.
func (q queueChecker) verdict(p *queuePartial) checker.Result {
	an := p.an.Recorder()
	fig := &Figures{SkippedMalformed: p.malformed.Count()}
	malformed := p.malformed.Items()
	counts, undrained, notDrained := p.counts, p.undrained, p.notDrained
	lost, lostAfterLoss, lostUnexplained, lostWaitSat := p.lost, p.lostAfterLoss, p.lostUnexplained, p.lostWaitSat
	duplicates, recovered, pendingEnd, acksLost, acksNothing, idRegressions := p.duplicates, p.recovered, p.pendingEnd, p.acksLost, p.acksNothing, p.idRegressions
	nqueues := p.queues
	fig.Enqueues = counts["enqueues"]
	fig.EnqueuesOK = counts["enqueues_ok"]
	fig.EnqueuesFail = counts["enqueues_fail"]
	fig.EnqueuesInfo = counts["enqueues_info"]
	fig.Dequeues = counts["dequeues"]
	fig.DequeuesOK = counts["dequeues_ok"]
	fig.Claims = counts["claims"]
	fig.ClaimsOK = counts["claims_ok"]
	fig.Acks = counts["acks"]
	fig.AcksOK = counts["acks_ok"]
	fig.Drains = counts["drains"]
	fig.DrainsOK = counts["drains_ok"]
	fig.Delivered = counts["delivered"]
	fig.Queues = nqueues
	fig.Lost = lost
	fig.LostAfterFailoverLoss = lostAfterLoss
	fig.LostUnexplained = lostUnexplained
	fig.LostWaitSatisfied = lostWaitSat
	fig.Unexpected = an.Count("unexpected")
	fig.Duplicates = duplicates
	fig.Recovered = recovered
	fig.PendingAtEnd = pendingEnd
	fig.AcksLost = acksLost
	fig.AcksFoundNothing = acksNothing
	fig.IDRegressions = idRegressions
	fig.Faults = p.faults
	fig.UndrainedQueues = len(notDrained)
	fig.Anomalies = an.Figure()
	if n := an.Total(); n > 0 {
		fig.AnomalyTypes = slices.Clone(an.Classes())
		w := an.Describe()
		if lost > 0 {
			w = fmt.Sprintf("the queue lost %d acknowledged messages (%d after-failover-loss: acknowledged by a primary a fault then struck, "+
				"WAIT not satisfied, as Redis Cluster's asynchronous replication allows; %d unexplained; %d with a satisfied WAIT); ",
				lost, lostAfterLoss, lostUnexplained, lostWaitSat) + w
		}
		if len(malformed) > 0 {
			fig.Malformed = malformed
		}
		fig.Reason = w
		return checker.Result{Valid: checker.Invalid, Figures: fig}
	}
	if len(malformed) > 0 {
		fig.Malformed = malformed
		w := fmt.Sprintf("%d queue ops cannot be judged (first: %s): what they delivered is unknown", fig.SkippedMalformed, malformed[0])
		fig.Reason, fig.Error = w, w
		return checker.Result{Valid: checker.Unknown, Figures: fig}
	}
	if len(undrained) > 0 {
		w := fmt.Sprintf("%d queues with acknowledged enqueues that were never delivered have no successful final drain (%s): whether those messages are still there is unknown",
			len(undrained), checker.FirstKeys(undrained))
		fig.Reason, fig.Error = w, w
		return checker.Result{Valid: checker.Unknown, Figures: fig}
	}
	if counts["enqueues_ok"] == 0 {
		w := "no enqueue was acknowledged: no message to account for"
		fig.Reason, fig.Error = w, w
		return checker.Result{Valid: checker.Unknown, Figures: fig}
	}
	fig.Reason = fmt.Sprintf("every one of %d acknowledged messages on %d queues was delivered or is still queued or pending; nothing was delivered that was not sent; %d delivered more than once (at least once is the promise)",
		counts["enqueues_ok"], nqueues, duplicates)
	if len(notDrained) > 0 {
		fig.Reason = fmt.Sprintf("%s; %d queues had no successful final drain (%s): what they still held at the end, and their pending entries, are not known",
			fig.Reason, len(notDrained), checker.FirstKeys(notDrained))
	}
	if acksLost > 0 || idRegressions > 0 {
		fig.Reason = fmt.Sprintf("%s; %d acks were lost (their message is pending again), %d stream ids went backwards (a stream's tail lost in a failover; reported, not judged)",
			fig.Reason, acksLost, idRegressions)
	}
	return checker.Result{Valid: checker.Valid, Figures: fig}
}

// validMsgs: every message has a body, and on a stream an entry id.
func validMsgs(ms []Msg, kind string) bool {
	for _, m := range ms {
		if m.Msg == "" || kind == Stream && !streamID(m.ID) {
			return false
		}
	}
	return true
}

// streamID reports whether s is a stream entry id (ms-seq).
func streamID(s string) bool {
	_, _, ok := parseStreamID(s)
	return ok
}

func parseStreamID(s string) (ms, seq uint64, ok bool) {
	a, b, found := strings.Cut(s, "-")
	if !found {
		return 0, 0, false
	}
	ms, err1 := strconv.ParseUint(a, 10, 64)
	seq, err2 := strconv.ParseUint(b, 10, 64)
	return ms, seq, err1 == nil && err2 == nil
}

// streamIDAfter reports whether id a is above b; any id is above "" (no
// id yet) and "0-0".
func streamIDAfter(a, b string) bool {
	am, as, ok := parseStreamID(a)
	if !ok {
		return false
	}
	bm, bs, ok := parseStreamID(b)
	if !ok {
		return true
	}
	return am > bm || am == bm && as > bs
}
