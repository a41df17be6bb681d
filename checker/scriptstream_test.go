package checker

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/redline-dev/redline/history"
)

// scriptRun is a generated history of the script workload: SCRIPT LOADs
// on three nodes at the start (one answered with a wrong SHA, one with
// none recorded), EVALSHAs of 6 workers that overlap, NOSCRIPTs from
// nodes that loaded the script and from one that never did, each followed
// by a load on that node, a kill window on n1, a composition's kill step
// on n2 and a failover in the journal.
func scriptRun(seed uint64) []history.Op {
	r := rand.New(rand.NewPCG(seed, 3))
	h := &hist{}
	h.nodesEvent(map[string]string{"n1": n1, "n2": n2, "n3": "10.0.0.3:6379"})
	nodes := []string{n1, n2, "10.0.0.3:6379", "10.0.0.4:6379"}
	for i, n := range nodes[:3] {
		sha := any(scriptSHA(scriptBody))
		switch {
		case i == 2 && seed%2 == 0:
			sha = "0badsha"
		case i == 2:
			sha = nil
		}
		h.call(100+i, "load", fmt.Sprintf("k%d", i), scriptBody, int64(1+i), history.OK, sha, int64(2+i)).Node = n
	}
	for w := range 6 {
		t := int64(10 + w)
		for n := range 40 {
			node := nodes[r.IntN(len(nodes))]
			t0, t1 := t, t+1+int64(r.IntN(8))
			key := fmt.Sprintf("k%d", r.IntN(5))
			if r.IntN(6) == 0 {
				h.call(w, "add", key, n, t0, history.Fail, n, t1).Node = node
				h.withErr("NOSCRIPT No matching script. Please use EVAL.")
				// The worker loads it again there.
				h.call(w, "load", key, scriptBody, t1+1, history.OK, scriptSHA(scriptBody), t1+2).Node = node
				t = t1 + 3
				continue
			}
			typ := []history.Type{history.OK, history.OK, history.Fail, history.Info}[r.IntN(4)]
			h.call(w, "add", key, n, t0, typ, n, t1).Node = node
			t = t1 + 1
		}
	}
	h.ops = append(h.ops, history.Op{Time: 120 * msec, Process: history.Nemesis, Type: history.Info, F: history.StartOf("kill"),
		Ext: history.NewExt(history.Ext{Nodes: []string{"n1"}})})
	h.ops = append(h.ops, history.Op{Time: 160 * msec, Process: history.Nemesis, Type: history.Info, F: history.StopOf("kill"),
		Ext: history.NewExt(history.Ext{Nodes: []string{"n1"}})})
	step, _ := json.Marshal(map[string]any{"step": "kill", "node": "n2"})
	h.ops = append(h.ops, history.Op{Time: 200 * msec, Process: history.Nemesis, Type: history.Info, F: history.Compose,
		Ext: history.NewExt(history.Ext{Detail: step})})
	journalFailover(h, 220)
	return h.done()
}

// The script checker's stream (the loads and the NOSCRIPTs, judged in
// the order of their invocations) gives its whole check's result, byte for
// byte, on every stored and generated history, on generated script runs
// and on lies told of them (a stream sees the calls as they complete); and
// Check gives what it gave before it streamed (refCheck).
func TestScriptStream(t *testing.T) {
	cases := streamCases(t)
	for seed := range uint64(4) {
		ops := scriptRun(seed)
		cases = append(cases, namedOps{fmt.Sprintf("script run %d", seed), ops})
		for _, l := range lies(ops, seed) {
			cases = append(cases, namedOps{fmt.Sprintf("script run %d: %s", seed, l.name), l.ops})
		}
	}
	// A load that completes after a NOSCRIPT invoked later: a stream sees
	// the NOSCRIPT first, the whole check the load first.
	h := &hist{}
	h.call(0, "load", "k1", scriptBody, 1, history.OK, scriptSHA(scriptBody), 50).Node = n1
	h.call(1, "add", "k1", 1, 2, history.Fail, 1, 3).Node = n1
	h.withErr("NOSCRIPT No matching script.")
	h.call(1, "add", "k1", 2, 60, history.Fail, 2, 61).Node = n1
	h.withErr("NOSCRIPT No matching script.")
	cases = append(cases, namedOps{"a load completing late", h.done()})
	verdicts := map[Validity]int{}
	for _, tc := range cases {
		for _, c := range []Checker{Script(), Script(Scope{MaxExamples: 1}), Script(Scope{KeyPrefix: "k1"})} {
			r := sameStreamed(t, tc.name, c, tc.ops)
			verdicts[r.Valid]++
			if was := guarded(func() Result { return c.(scriptCache).refCheck(context.Background(), NewHistory(tc.ops)) }); resultBytes(t, r) != resultBytes(t, was) {
				t.Fatalf("%s: Check changed:\nnow    %s\nbefore %s", tc.name, resultBytes(t, r), resultBytes(t, was))
			}
		}
	}
	// The generated runs reach every verdict.
	for _, v := range []Validity{Valid, Invalid, Unknown} {
		if verdicts[v] == 0 {
			t.Fatalf("no history was %v: %v", v, verdicts)
		}
	}
}
