package checker

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/redline-dev/redline/history"
)

// Three shards n1..n3 with replicas n4..n6; n1 serves slots 0-5460.
const (
	addr1, addr2, addr4 = "10.0.0.1:6379", "10.0.0.2:6379", "10.0.0.4:6379"
	id1, id2, id4       = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa2", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa4"
)

// keyIn returns a key of the run whose slot lies in [lo, hi].
func keyIn(t *testing.T, prefix string, lo, hi int) string {
	for i := 0; i < 100000; i++ {
		k := prefix + "k" + itoa(i)
		if s := history.Keyslot(k); s >= lo && s <= hi {
			return k
		}
	}
	t.Fatal("no key in range")
	return ""
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func (h *hist) event(t int64, typ history.Type, f string, nodes []string, detail any) {
	op := history.Op{Time: t * msec, Process: history.Nemesis, Type: typ, F: f}
	op.SetNodes(nodes)
	if detail != nil {
		b, _ := json.Marshal(detail)
		op.SetDetail(b)
	}
	h.ops = append(h.ops, op)
}

// served marks the last completion as served by addr.
func (h *hist) servedBy(addr string) { h.ops[len(h.ops)-1].Node = addr }

// view is every node's CLUSTER NODES at the end: owner serves 0-5460,
// id2 the rest, and replica is owner's replica.
func view(owner, ownerAddr, replica, replicaAddr string) []history.CensusPeer {
	return []history.CensusPeer{
		{ID: owner, Addr: ownerAddr, Primary: true, Ranges: [][2]int{{0, 5460}}},
		{ID: id2, Addr: addr2, Primary: true, Ranges: [][2]int{{5461, 16383}}},
		{ID: replica, Addr: replicaAddr, Master: owner},
	}
}

func attribute(t *testing.T, h *hist, checkers ...Checker) []Attribution {
	t.Helper()
	ops := h.done()
	s := Run(context.Background(), ops, checkers, nil)
	if s.Valid != Invalid {
		t.Fatalf("the hand-made history must be invalid, got %v: %v", s.Valid, s.Checkers)
	}
	return Attribute(ops, s, nil)
}

func start(h *hist) {
	h.event(0, history.Info, history.NodesEvent, nil, map[string]any{"addrs": map[string]string{"n1": addr1, "n2": addr2, "n4": addr4}})
}

// A write acknowledged by n1, then n1 is killed and its replica n4 takes
// over; the final read finds nothing and the census finds the key on no
// node, n1 a replica of n4: the server lost it.
func TestAttributeServerLost(t *testing.T) {
	key := keyIn(t, "r:", 0, 5460)
	h := &hist{}
	start(h)
	h.call(0, "write", key, 3, 100, history.OK, nil, 110)
	h.servedBy(addr1)
	h.event(200, history.Invoke, "start-kill", []string{"n1"}, map[string]any{"mode": "primary"})
	h.event(210, history.Info, "start-kill", []string{"n1"}, map[string]any{"mode": "primary"})
	h.event(3000, history.Invoke, "stop-kill", []string{"n1"}, nil)
	h.event(3010, history.Info, "stop-kill", []string{"n1"}, nil)
	h.event(4000, history.Info, "final-reads", nil, nil)
	h.call(1<<21, "read", key, nil, 4100, history.OK, nil, 4110)
	h.servedBy(addr4)
	h.event(4200, history.Info, history.CensusEvent, nil, history.Census{Prefix: "r:", Nodes: []history.CensusNode{
		{Name: "n1", Addr: addr1, ID: id1, Role: "replica", Primary: id4, View: view(id4, addr4, id1, addr1)},
		{Name: "n2", Addr: addr2, ID: id2, Role: "primary", View: view(id4, addr4, id1, addr1)},
		{Name: "n4", Addr: addr4, ID: id4, Role: "primary", View: view(id4, addr4, id1, addr1)},
	}})
	ops := h.done()
	s := Run(context.Background(), ops, []Checker{Linearizable(LinearizableOptions{Scope: Scope{KeyPrefix: "r:"}, NoVisualization: true})}, nil)
	at := Attribute(ops, s, []LogLine{
		{Node: "n4", Time: 1500 * msec, Text: "Failover election won: I'm the new master."},
		{Node: "n3", Time: 1500 * msec, Text: "Failover auth granted to aaaa for epoch 8"}, // not involved
		{Node: "n4", Time: 1600 * msec, Text: "Background saving started"},                 // not relevant
	})
	if len(at) != 1 {
		t.Fatalf("want one attribution, got %+v", at)
	}
	if len(at[0].Logs) != 1 || !strings.Contains(at[0].Logs[0], "n4 1.500s: Failover election won") {
		t.Fatalf("log lines %q: want n4's election only", at[0].Logs)
	}
	a := at[0]
	if a.Verdict != ServerLost {
		t.Fatalf("verdict %s (%s), want %s", a.Verdict, a.Why, ServerLost)
	}
	if a.Ack == nil || !strings.Contains(a.Ack.Node, "n1") || a.Ack.Value != "3" {
		t.Fatalf("the ack must name n1 and value 3: %+v", a.Ack)
	}
	if len(a.Faults) != 1 || !strings.Contains(a.Faults[0], "kill") || a.Owner == "" || !strings.Contains(a.Owner, "n4") {
		t.Fatalf("faults %v, owner %q: want the kill window and n4 as the owner", a.Faults, a.Owner)
	}
	if !strings.Contains(a.Why, "on no node") || !strings.Contains(a.Why, "demoted") {
		t.Fatalf("why must say the key is nowhere and n1 was demoted: %s", a.Why)
	}
}

// An add acknowledged by n1; redline's journalled migration of its slot
// to n2 fails half-way; the final read misses the element, and the census
// finds it on n2, which does not serve the slot: an admin step stranded it.
func TestAttributeStrandedByAdminStep(t *testing.T) {
	key := keyIn(t, "s:", 0, 5460)
	slot := history.Keyslot(key)
	h := &hist{}
	start(h)
	h.call(0, "add", key, 7, 100, history.OK, nil, 110)
	h.servedBy(addr1)
	h.call(1, "add", key, 8, 120, history.OK, nil, 130)
	h.servedBy(addr1)
	h.event(500, history.Info, "journal", nil, map[string]any{"seq": 3, "state": "begin", "kind": "migrate", "slots": []int{slot}, "from": id1, "to": id2})
	h.event(900, history.Info, "journal", nil, map[string]any{"seq": 3, "state": "failed", "kind": "migrate", "slots": []int{slot}, "from": id1, "to": id2, "error": "ERR Please use SETSLOT only with masters"})
	h.event(4000, history.Info, "final-reads", nil, nil)
	h.call(1<<21, "read", key, nil, 4100, history.OK, []int{8}, 4110)
	h.servedBy(addr1)
	setCensus(h, 4200, key, map[string][]string{"n1": {"8"}, "n2": {"7"}, "n4": {"8"}})
	at := attribute(t, h, Set(Scope{KeyPrefix: "s:"}))
	cs := SummarizeCensus(history.CensusOf(h.done()))
	if cs == nil || cs.Copies != 3 || cs.Stranded != 1 || len(cs.Examples) != 1 || !strings.Contains(cs.Examples[0], "on n2, served by n1") {
		t.Fatalf("census summary %+v: want 3 copies, 1 stranded on n2 (served by n1)", cs)
	}
	if len(at) != 1 {
		t.Fatalf("want one attribution (the lost add of 7), got %+v", at)
	}
	a := at[0]
	if a.Verdict != AdminStranded || a.Kind != "lost-write" {
		t.Fatalf("verdict %s kind %s (%s), want %s lost-write", a.Verdict, a.Kind, a.Why, AdminStranded)
	}
	if !strings.Contains(a.Why, "still on n2") || !strings.Contains(a.Why, "#3") {
		t.Fatalf("why must name n2 and step #3: %s", a.Why)
	}
	if len(a.Steps) != 1 || !a.Steps[0].Touches || a.Steps[0].Seq != 3 {
		t.Fatalf("steps %+v: want step 3 touching the slot", a.Steps)
	}
	stranded := false
	for _, c := range a.Copy {
		if c.Node == "n2" && !c.Owner && c.Holds == "yes" {
			stranded = true
		}
	}
	if !stranded {
		t.Fatalf("census copies %+v: want n2 holding 7 outside the owner's shard", a.Copy)
	}
}

// setCensus is the census entry of the set key on n1 (owner of slots
// 0-5460), n2 and n1's replica n4: members by node name, none for a node
// without the key.
func setCensus(h *hist, at int64, key string, members map[string][]string) {
	nodes := []history.CensusNode{
		{Name: "n1", Addr: addr1, ID: id1, Role: "primary"},
		{Name: "n2", Addr: addr2, ID: id2, Role: "primary"},
		{Name: "n4", Addr: addr4, ID: id4, Role: "replica", Primary: id1},
	}
	for i := range nodes {
		nodes[i].View = view(id1, addr1, id4, addr4)
		if m, ok := members[nodes[i].Name]; ok {
			nodes[i].Keys = map[string]history.CensusKey{key: {Type: "set", Len: int64(len(m)), Members: m}}
		}
	}
	h.event(at, history.Info, history.CensusEvent, nil, history.Census{Prefix: "s:", Nodes: nodes})
}

// Two adds acknowledged by n1; a journalled repair moves the slot's keys
// back onto n1; at the end n1 (the owner) and its replica hold the set
// without 7 and no other node has the key: an admin step overwrote it
// (the old attribution said "stranded", with no copy stranded anywhere).
func TestAttributeOverwrittenByAdminStep(t *testing.T) {
	key := keyIn(t, "s:", 0, 5460)
	slot := history.Keyslot(key)
	h := &hist{}
	start(h)
	h.call(0, "add", key, 7, 100, history.OK, nil, 110)
	h.servedBy(addr1)
	h.call(1, "add", key, 8, 120, history.OK, nil, 130)
	h.servedBy(addr1)
	h.event(500, history.Info, "journal", nil, map[string]any{"seq": 4, "state": "begin", "kind": "close", "slots": []int{slot}, "from": id2, "to": id1})
	h.event(900, history.Info, "journal", nil, map[string]any{"seq": 4, "state": "done", "kind": "close", "slots": []int{slot}, "from": id2, "to": id1})
	h.event(4000, history.Info, "final-reads", nil, nil)
	h.call(1<<21, "read", key, nil, 4100, history.OK, []int{8}, 4110)
	h.servedBy(addr1)
	setCensus(h, 4200, key, map[string][]string{"n1": {"8"}, "n4": {"8"}})
	at := attribute(t, h, Set(Scope{KeyPrefix: "s:"}))
	if len(at) != 1 {
		t.Fatalf("want one attribution (the lost add of 7), got %+v", at)
	}
	a := at[0]
	if a.Verdict != AdminOverwritten || VerdictWords(a.Verdict) != "an admin step overwrote it" {
		t.Fatalf("verdict %s (%s), want %s", a.Verdict, a.Why, AdminOverwritten)
	}
	if !strings.Contains(a.Why, "owner n1 holds another copy") || !strings.Contains(a.Why, "#4") || strings.Contains(a.Why, "still on") {
		t.Fatalf("why must name the owner's other copy and step #4, and no stranded copy: %s", a.Why)
	}
}

// Without a census the attribution says unknown and what is missing, and
// still names the ack and the fault in between.
func TestAttributeUnknownWithoutCensus(t *testing.T) {
	key := keyIn(t, "r:", 0, 5460)
	h := &hist{}
	start(h)
	h.call(0, "write", key, 3, 100, history.OK, nil, 110)
	h.servedBy(addr1)
	h.event(200, history.Info, "start-kill", []string{"n1"}, map[string]any{"mode": "primary"})
	h.event(3010, history.Info, "stop-kill", []string{"n1"}, nil)
	h.event(4000, history.Info, "final-reads", nil, nil)
	h.call(1<<21, "read", key, nil, 4100, history.OK, nil, 4110)
	at := attribute(t, h, Linearizable(LinearizableOptions{Scope: Scope{KeyPrefix: "r:"}, NoVisualization: true}))
	if len(at) != 1 || at[0].Verdict != AttrUnknown || !strings.Contains(at[0].Why, "no key census") {
		t.Fatalf("want one unknown attribution naming the missing census, got %+v", at)
	}
	if at[0].Ack == nil || len(at[0].Faults) != 1 {
		t.Fatalf("the ack and the fault must still be named: %+v", at[0])
	}
}

// A valid run has nothing to attribute.
func TestAttributeValidNothing(t *testing.T) {
	h := &hist{}
	start(h)
	h.call(0, "write", "r:a", 3, 100, history.OK, nil, 110)
	h.event(4000, history.Info, "final-reads", nil, nil)
	h.call(1<<21, "read", "r:a", nil, 4100, history.OK, 3, 4110)
	ops := h.done()
	s := Run(context.Background(), ops, []Checker{Linearizable(LinearizableOptions{Scope: Scope{KeyPrefix: "r:"}, NoVisualization: true})}, nil)
	if at := Attribute(ops, s, nil); at != nil {
		t.Fatalf("a valid run: want no attribution, got %+v", at)
	}
}

// Log lines of the span that mention the slot or a failover are kept,
// others and those outside the span left out.
func TestAttributeLogLines(t *testing.T) {
	a := &attributor{logs: []LogLine{
		{Node: "n1", Time: 1e9, Text: "Failover election won"},
		{Node: "n1", Time: 1e9, Text: "Background saving started"},
		{Node: "n2", Time: 30e9, Text: "Failover election won"},
		{Node: "n2", Time: 2e9, Text: "keys of slot 12 deleted"},
		{Node: "n2", Time: 2e9, Text: "keys of slot 123 deleted"},
	}}
	got := a.logLines(12, 0, 5e9, nil, []int64{1e9})
	if len(got) != 2 || !strings.Contains(got[0], "election") || !strings.Contains(got[1], "slot 12 ") {
		t.Fatalf("got %q", got)
	}
}

// A node that did not answer the census may hold the key: with the key
// found nowhere else, the verdict is unknown and names that node.
func TestAttributeUnknownWhenANodeDidNotAnswer(t *testing.T) {
	key := keyIn(t, "r:", 0, 5460)
	h := &hist{}
	start(h)
	h.call(0, "write", key, 3, 100, history.OK, nil, 110)
	h.servedBy(addr1)
	h.event(4000, history.Info, "final-reads", nil, nil)
	h.call(1<<21, "read", key, nil, 4100, history.OK, nil, 4110)
	h.event(4200, history.Info, history.CensusEvent, nil, history.Census{Prefix: "r:", Nodes: []history.CensusNode{
		{Name: "n1", Addr: addr1, Error: "CLUSTER NODES: i/o timeout"},
		{Name: "n2", Addr: addr2, ID: id2, Role: "primary", View: view(id1, addr1, id4, addr4)},
		{Name: "n4", Addr: addr4, ID: id4, Role: "replica", Primary: id1, View: view(id1, addr1, id4, addr4)},
	}})
	at := attribute(t, h, Linearizable(LinearizableOptions{Scope: Scope{KeyPrefix: "r:"}, NoVisualization: true}))
	if len(at) != 1 || at[0].Verdict != AttrUnknown || !strings.Contains(at[0].Why, "n1 did not answer") {
		t.Fatalf("want unknown naming n1, got %+v", at)
	}
}

// A copy outside its slot's shard on a node that has the slot IMPORTING
// (or whose primary has: a replicated state) is counted apart from the
// stranded ones: a migration left half-way.
func TestCensusSummaryOpenSlots(t *testing.T) {
	key := keyIn(t, "s:", 0, 5460)
	slot := history.Keyslot(key)
	held := map[string]history.CensusKey{key: {Type: "set", Len: 1, Members: []string{"7"}}}
	c := &history.Census{Nodes: []history.CensusNode{
		{Name: "n1", Addr: addr1, ID: id1, Role: "primary", View: view(id1, addr1, id4, addr4), Keys: held},
		{Name: "n2", Addr: addr2, ID: id2, Role: "primary", View: view(id1, addr1, id4, addr4), Keys: held, Importing: []int{slot}},
		{Name: "n5", Addr: "10.0.0.5:6379", ID: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa5", Role: "replica", Primary: id2, View: view(id1, addr1, id4, addr4), Keys: held},
	}}
	s := SummarizeCensus(c)
	if s.Copies != 3 || s.Stranded != 0 || s.InOpenSlots != 2 {
		t.Fatalf("summary %+v: want 3 copies, none stranded, 2 in an open slot (n2 importing, n5 its replica)", s)
	}
	c.Nodes[1].Importing = nil
	if s := SummarizeCensus(c); s.Stranded != 2 || s.InOpenSlots != 0 {
		t.Fatalf("summary %+v: with the slot closed both copies are stranded", s)
	}
}

// A register write of 3 acknowledged by n1; redline's journalled repair
// of the key's slot is under way when a read on n1 returns the older 1;
// at the end n1 (the owner) holds 3. The step let n1 serve the slot
// without the write for a while: an admin step served it stale (the CI
// run of 2026-12-02 said "the server lost it ... no journalled step
// touched the slot" for this, while the undo step had the slot in hand).
func TestAttributeStaleReadDuringAdminStep(t *testing.T) {
	key := keyIn(t, "r:", 0, 5460)
	slot := history.Keyslot(key)
	h := &hist{}
	start(h)
	h.call(0, "write", key, 1, 100, history.OK, nil, 110)
	h.servedBy(addr1)
	h.call(1, "write", key, 3, 120, history.OK, nil, 130)
	h.servedBy(addr1)
	h.event(150, history.Info, "journal", nil, map[string]any{"seq": 5, "state": "begin", "kind": "close", "slots": []int{slot}, "from": id1, "to": id1})
	h.call(2, "read", key, nil, 200, history.OK, 1, 210)
	h.servedBy(addr1)
	h.event(300, history.Info, "journal", nil, map[string]any{"seq": 5, "state": "done", "kind": "close", "slots": []int{slot}, "from": id1, "to": id1})
	h.event(4000, history.Info, "final-reads", nil, nil)
	h.call(1<<21, "read", key, nil, 4100, history.OK, 3, 4110)
	h.servedBy(addr1)
	three := "3"
	nodes := []history.CensusNode{
		{Name: "n1", Addr: addr1, ID: id1, Role: "primary", Keys: map[string]history.CensusKey{key: {Type: "string", Value: &three}}},
		{Name: "n2", Addr: addr2, ID: id2, Role: "primary"},
		{Name: "n4", Addr: addr4, ID: id4, Role: "replica", Primary: id1, Keys: map[string]history.CensusKey{key: {Type: "string", Value: &three}}},
	}
	for i := range nodes {
		nodes[i].View = view(id1, addr1, id4, addr4)
	}
	h.event(4200, history.Info, history.CensusEvent, nil, history.Census{Prefix: "r:", Nodes: nodes})
	at := attribute(t, h, Linearizable(LinearizableOptions{Scope: Scope{KeyPrefix: "r:"}, NoVisualization: true}))
	var stale *Attribution
	for i := range at {
		if at[i].Kind == "stale-read" {
			stale = &at[i]
		}
	}
	if stale == nil {
		t.Fatalf("want a stale-read attribution, got %+v", at)
	}
	if stale.Verdict != AdminStaleRead || VerdictWords(stale.Verdict) != "an admin step served it stale" {
		t.Fatalf("verdict %s (%s), want %s", stale.Verdict, stale.Why, AdminStaleRead)
	}
	if !strings.Contains(stale.Why, "#5") || !strings.Contains(stale.Why, "nothing was lost") {
		t.Fatalf("why must name step #5 and say nothing was lost: %s", stale.Why)
	}
}
