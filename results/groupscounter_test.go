package results_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/results"
)

// ctrRun is a counter run whose history shows a key losing increments the
// way an isolated primary loses them: 10 acknowledged by n2 and read back
// before the partition, 3 more acknowledged by n2 cut off from 1 s to 5 s,
// a read after it that shows 10 (3 short), and a later unrelated
// increment on n1 (the attribution's Ack: the key's last acknowledged
// increment before its final read). Each field can be made to lie.
type ctrRun struct {
	minority   []string
	censusRole string // n2's role at the end
	revealRead string // the value the revealing read returned
	revealF    string // the revealing entry's f
	wait       *history.Wait
	cfgWait    string
	noReveal   bool   // figures without revealed_index (an older results.json)
	isolated   int    // increments n2 acknowledged cut off
	startErr   string // the partition's start recorded an error
	negative   bool   // one increment has a negative delta
	lateWhole  bool   // whole_before_index names a read after the revealing one
	otherKey   bool   // revealed_index names another key's read
}

func baseCtr() ctrRun {
	return ctrRun{minority: []string{"n2"}, censusRole: "replica", revealRead: "10", revealF: "read", isolated: 3}
}

func (c ctrRun) write(t *testing.T) string {
	t.Helper()
	r, err := (&results.Store{Root: t.TempDir()}).NewRun("t", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	var idx int64
	emit := func(op history.Op) int64 {
		op.Index = idx
		idx++
		if err := history.Encode(&buf, &op); err != nil {
			t.Fatal(err)
		}
		return op.Index
	}
	const key = "c:1"
	n1, n2 := "10.0.0.2:6379", "10.0.0.3:6379"
	call := func(at time.Duration, f, in, out, node string, w *history.Wait) (inv int64) {
		op := history.Op{Time: int64(at - 5*time.Millisecond), Process: 0, Type: history.Invoke, F: f, Key: key}
		if in != "" {
			op.Value = json.RawMessage(in)
		}
		inv = emit(op)
		comp := op
		comp.Type, comp.Time, comp.Node, comp.Value = history.OK, int64(at), node, nil
		if out != "" {
			comp.Value = json.RawMessage(out)
		}
		if w != nil {
			comp.SetWait(w)
		}
		emit(comp)
		return inv
	}
	call(300*time.Millisecond, "add", "10", "", n2, nil)
	whole := call(800*time.Millisecond, "read", "", "10", n2, nil)
	det := map[string]any{"mode": "halves", "minority": c.minority, "cluster_nodes_before": clusterView("master")}
	b, _ := json.Marshal(det)
	emit(history.Op{Time: int64(time.Second), Process: history.Nemesis, Type: history.Invoke, F: "start-partition", Ext: history.NewExt(history.Ext{Nodes: c.minority, Detail: b})})
	done := map[string]any{"mode": "halves", "took_ms": 20}
	if c.startErr != "" {
		done["error"] = c.startErr
	}
	b, _ = json.Marshal(done)
	emit(history.Op{Time: int64(time.Second + 20*time.Millisecond), Process: history.Nemesis, Type: history.Info, F: "start-partition", Ext: history.NewExt(history.Ext{Nodes: c.minority, Detail: b})})
	for i := range c.isolated {
		d := "1"
		if c.negative && i == 0 {
			d = "-1"
		}
		call(1500*time.Millisecond+time.Duration(i)*500*time.Millisecond, "add", d, "", n2, c.wait)
	}
	emit(history.Op{Time: int64(5 * time.Second), Process: history.Nemesis, Type: history.Info, F: "stop-partition", Ext: history.NewExt(history.Ext{Nodes: c.minority, Detail: []byte("{}")})})
	// A kill of n1, later: the window the last increment (Ack) was in.
	emit(history.Op{Time: int64(7 * time.Second), Process: history.Nemesis, Type: history.Invoke, F: "start-kill", Ext: history.NewExt(history.Ext{Nodes: []string{"n1"}})})
	emit(history.Op{Time: int64(7*time.Second + 10*time.Millisecond), Process: history.Nemesis, Type: history.Info, F: "start-kill", Ext: history.NewExt(history.Ext{Nodes: []string{"n1"}})})
	in, out := "", c.revealRead
	if c.revealF != "read" {
		in, out = "1", ""
	}
	reveal := call(6*time.Second, c.revealF, in, out, n1, nil)
	last := call(7500*time.Millisecond, "add", "1", "", n1, nil)
	emit(history.Op{Time: int64(9 * time.Second), Process: history.Nemesis, Type: history.Info, F: "stop-kill", Ext: history.NewExt(history.Ext{Nodes: []string{"n1"}})})
	final := call(9500*time.Millisecond, "read", "", "11", n1, nil)
	otherOp := history.Op{Time: int64(9600 * time.Millisecond), Process: 1, Type: history.Invoke, F: "read", Key: "c:2"}
	other := emit(otherOp)
	otherOp.Type, otherOp.Time, otherOp.Value, otherOp.Node = history.OK, int64(9700*time.Millisecond), json.RawMessage("0"), n1
	emit(otherOp)
	cen, _ := json.Marshal(history.Census{Nodes: []history.CensusNode{
		{Name: "n1", Addr: n1, ID: "e1", Role: "primary"},
		{Name: "n2", Addr: n2, ID: "e2", Role: c.censusRole, Primary: "e1"}}})
	emit(history.Op{Time: int64(10 * time.Second), Process: history.Nemesis, Type: history.Info, F: history.CensusEvent, Ext: history.NewExt(history.Ext{Detail: cen})})
	if err := r.WriteFile("history.jsonl", buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	cfg := map[string]any{"target": "reference"}
	if c.cfgWait != "" {
		cfg["wait"] = c.cfgWait
	}
	if err := r.WriteJSON("config.json", cfg); err != nil {
		t.Fatal(err)
	}
	lostKey := map[string]any{"key": key, "acked": 14, "final": 11, "final_index": final, "lower": 14, "upper": 14, "lost": 3}
	if !c.noReveal {
		lostKey["revealed_index"], lostKey["whole_before_index"] = reveal, whole
	}
	if c.lateWhole {
		lostKey["whole_before_index"] = final
	}
	if c.otherKey {
		lostKey["revealed_index"] = other
	}
	s := checker.Summary{Valid: checker.Invalid,
		Checkers: map[string]checker.Result{"counter": {Valid: checker.Invalid, Figures: checker.Map{"lost": 3, "lost_keys": []any{lostKey}}}},
		Attribution: []checker.Attribution{{Checker: "counter", Kind: "lost-increment", Key: key, Slot: 42, Verdict: checker.ServerLost,
			Why:    "the loss first showed at op " + itoa(reveal),
			Ack:    &checker.AttrOp{Index: last, F: "add", TimeS: 7.5, Node: "n1 (" + n1 + ")", Value: "1"},
			Miss:   &checker.AttrOp{Index: final, F: "read", TimeS: 9.5, Node: "n1 (" + n1 + ")", Value: "11"},
			Faults: []string{"partition 1-5s on n2"}}}}
	if err := r.WriteJSON("results.json", s); err != nil {
		t.Fatal(err)
	}
	if err := results.WriteReport(r); err != nil {
		t.Fatal(err)
	}
	return r.Dir
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

// A counter's loss that first showed after an isolate-primary partition,
// no larger than the increments the cut-off primary acknowledged, is
// documented as far as the amounts show, placed at that partition and
// node, not at the last increment's node and window (the kill of n1).
func TestDocumentedCounterLoss(t *testing.T) {
	dir := baseCtr().write(t)
	defer sameBounded(t, dir) // the report of a big history says the same
	lines := results.GroupLines(dir, summaryOf(t, dir))
	if len(lines) != 1 {
		t.Fatalf("lines %q", lines)
	}
	l := lines[0]
	t.Log(l)
	for _, want := range []string{"counter lost-increment ×1, acknowledged by n2, partition 1–5 s on n2",
		"documented asynchronous replication, as far as the amounts show: the isolated primary n2 acknowledged increments",
		"a counter cannot name the increments lost", "final read op"} {
		if !strings.Contains(l, want) {
			t.Errorf("line lacks %q: %s", want, l)
		}
	}
	if strings.Contains(l, "kill") || strings.Contains(l, "n1") {
		t.Errorf("line names the last increment's node or window: %s", l)
	}
	b, _ := os.ReadFile(dir + "/report.html")
	if !strings.Contains(string(b), `data-cause="documented"`) {
		t.Error("the report does not show it documented")
	}
}

// Missing or lying evidence never makes a counter's loss documented: it
// stays "the server lost it", placed where the loss first showed when the
// figures say where.
func TestDocumentedCounterNeedsEvidence(t *testing.T) {
	for name, lie := range map[string]func(*ctrRun){
		"the loss is larger than the isolated increments":   func(c *ctrRun) { c.revealRead = "9" },
		"the revealing read shows no loss":                  func(c *ctrRun) { c.revealRead = "13" },
		"the revealing read is garbage":                     func(c *ctrRun) { c.revealRead = `"x"` },
		"the revealing entry is no read":                    func(c *ctrRun) { c.revealF = "add" },
		"no revealed read in the figures":                   func(c *ctrRun) { c.noReveal = true },
		"still a primary at the end":                        func(c *ctrRun) { c.censusRole = "primary" },
		"no census answer":                                  func(c *ctrRun) { c.censusRole = "unknown" },
		"another node cut off":                              func(c *ctrRun) { c.minority = []string{"n3"} },
		"the cut failed":                                    func(c *ctrRun) { c.startErr = "cut n2 from [n1]: exit status 1" },
		"WAIT satisfied":                                    func(c *ctrRun) { c.wait = &history.Wait{Want: 1, Acked: 1} },
		"--wait without a WAIT record":                      func(c *ctrRun) { c.cfgWait = "1" },
		"nothing acknowledged cut off":                      func(c *ctrRun) { c.isolated = 0 },
		"a negative delta (the bound needs the full rules)": func(c *ctrRun) { c.negative = true },
		"the read that held every increment came after":     func(c *ctrRun) { c.lateWhole = true },
		"the revealing read is another key's":               func(c *ctrRun) { c.otherKey = true },
	} {
		t.Run(name, func(t *testing.T) {
			c := baseCtr()
			lie(&c)
			dir := c.write(t)
			defer sameBounded(t, dir) // the report of a big history says the same
			b, _ := os.ReadFile(dir + "/report.html")
			if strings.Contains(string(b), `data-cause="documented"`) {
				t.Error("the report calls it documented")
			}
			lines := results.GroupLines(dir, summaryOf(t, dir))
			if len(lines) != 1 {
				t.Fatalf("lines %q", lines)
			}
			l := lines[0]
			t.Log(l)
			if strings.Contains(l, "documented") || !strings.Contains(l, "the server lost it") {
				t.Errorf("not unexplained: %s", l)
			}
			if strings.Contains(l, "acknowledged by") || strings.Contains(l, "kill") {
				t.Errorf("placed at the last increment: %s", l)
			}
			if !c.noReveal && !strings.Contains(l, "loss first shown after partition 1-5s on n2") {
				t.Errorf("not placed where the loss first showed: %s", l)
			}
		})
	}
}
