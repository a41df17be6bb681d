package queue

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/redline-dev/redline/checker"
)

// refCheck is the queue checker's Check as it was before it judged slot
// partitions (commit 414be9f), kept to show that Check's results did not
// change (asBefore). It goes over a queue's pending messages in the
// order of a map, as it did: the tests give it histories where that order
// does not show.
func (q queueChecker) refCheck(_ context.Context, in *checker.History) checker.Result {
	calls, err := q.o.Calls(in)
	if err != nil {
		return checker.InvalidHistory(err)
	}
	an := checker.NewAnomalyRecorder(q.o.MaxExamples)
	fig := &Figures{}
	var malformed []string
	bad := func(c *checker.Call, what string) {
		if len(malformed) < q.o.MaxExamples {
			malformed = append(malformed, fmt.Sprintf("op %d (%s %s): %s", c.Inv.Index, c.Inv.F, c.Inv.Key, what))
		}
		fig.SkippedMalformed = fig.SkippedMalformed + 1
	}
	read := checker.DecodeJSON[Value]
	counts := map[string]int{}
	queues := map[string]*queueState{}
	byMsg := map[string]*checker.Call{} // enqueue of each message
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
			if e := byMsg[v.Msg]; e != nil {
				bad(c, fmt.Sprintf("message %q was enqueued by op %d too: messages are unique per run", v.Msg, e.Inv.Index))
				continue
			}
			byMsg[v.Msg] = c
			s.enqueues = append(s.enqueues, c)
			if c.OK() && s.kind == Stream {
				if out, ok := read(c.Comp.Value); !ok || !streamID(out.ID) {
					an.Garbage(c, "an acknowledged XADD must carry the entry id it got")
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
				an.Garbage(c, "a delivery must be a list of messages (with their entry ids on a stream)")
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
				an.Garbage(c, "a drain must read the whole queue (the lists, or the stream's entries and its group's state)")
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
	var lostSamples []map[string]any
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
					bad(c, fmt.Sprintf("invoked after the queue's final drain (op %d)", s.drain.Inv.Index))
				}
			}
		}
		delivered := map[string]int{} // message -> deliveries
		givenTo := map[string]map[string]bool{}
		for _, d := range s.deliveries {
			e := byMsg[d.msg.Msg]
			ex := map[string]any{"index": d.c.Inv.Index, "key": k, "msg": d.msg.Msg}
			switch {
			case e == nil:
				ex["why"] = "no enqueue sent this message"
				an.Add("unexpected", ex)
				continue
			case e.Inv.Key != k:
				ex["why"] = fmt.Sprintf("it was enqueued on %s (op %d)", e.Inv.Key, e.Inv.Index)
				an.Add("unexpected", ex)
				continue
			case e.Failed():
				ex["why"] = fmt.Sprintf("its enqueue (op %d) certainly failed", e.Inv.Index)
				an.Add("unexpected", ex)
				continue
			case d.c.End < e.Start:
				ex["enqueue"] = e.Inv.Index
				an.Add("delivered-before-enqueued", ex)
				continue
			}
			if s.kind == Stream && e.OK() {
				if out, ok := read(e.Comp.Value); ok && streamID(out.ID) && out.ID != d.msg.ID {
					ex["enqueued_id"], ex["delivered_id"] = out.ID, d.msg.ID
					an.Add("id-mismatch", ex)
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
				bad(a, fmt.Sprintf("acknowledges %q, which was never delivered to consumer %s", m, v.Consumer))
				continue
			}
			if !a.OK() {
				continue
			}
			out, ok := read(a.Comp.Value)
			switch {
			case !ok || out.Acked == nil || *out.Acked < 0 || *out.Acked > 1:
				an.Garbage(a, "an ack's count must be 1 (removed) or 0 (not there)")
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
				e := byMsg[m]
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
				an.Add("unexpected", ex)
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
			for m := range pending {
				pendingEnd++
				if a := ackedOK[m]; a != nil {
					acksLost++
				}
				if delivered[m] == 0 && s.indeterminate == 0 {
					an.Add("pending-never-delivered", map[string]any{"index": s.drain.Inv.Index, "key": k, "msg": m,
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
			an.Add("lost", ex)
			if len(lostSamples) < q.o.MaxExamples {
				lostSamples = append(lostSamples, ex)
			}
		}
	}
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
	fig.Queues = len(keys)
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
	fig.Faults = len(windows)
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
		counts["enqueues_ok"], len(keys), duplicates)
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
