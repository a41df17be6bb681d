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

// docRun is a run whose history says how one write was lost: the
// partition, the ack, the views of the cluster and the census; each field
// can be made to lie or go missing.
type docRun struct {
	minority    []string // the partition entry's minority
	snapRole    string   // n2 in the view before the partition: master, slave, "" for no view
	ackAt       time.Duration
	ackType     history.Type
	censusRole  string // n2's role in the census; "" for no census
	wait        *history.Wait
	cfgWait     string
	attrAckNode string
	verdict     string
	extraLosses int // more losses of the same cause
	endViewRole string
	startErr    string // the start's completion recorded this error
	// samples are topology.jsonl's views of n2: time and role.
	samples []sample
	kind    string // the attribution's kind ("" lost-write)
}

type sample struct {
	at   time.Duration
	role string
}

func baseDoc() docRun {
	return docRun{minority: []string{"n2"}, snapRole: "master", ackAt: 3700 * time.Millisecond, ackType: history.OK,
		censusRole: "replica", attrAckNode: "n2 (10.0.0.3:6379)", verdict: checker.ServerLost}
}

func clusterView(n2role string) string {
	n2 := "e2 10.0.0.3:6379@16379 " + n2role + " - 0 0 2 connected 5461-10922\n"
	if n2role == "slave" {
		n2 = "e2 10.0.0.3:6379@16379 slave e1 0 0 2 connected\n"
	}
	return "e1 10.0.0.2:6379@16379 myself,master - 0 0 1 connected 0-5460\n" + n2
}

func (c docRun) write(t *testing.T) string {
	t.Helper()
	r, err := (&results.Store{Root: t.TempDir()}).NewRun("t", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	var idx int64
	emit := func(op history.Op) {
		op.Index = idx
		idx++
		if err := history.Encode(&buf, &op); err != nil {
			t.Fatal(err)
		}
	}
	det := map[string]any{"mode": "halves", "minority": c.minority}
	if c.snapRole != "" {
		det["cluster_nodes_before"] = clusterView(c.snapRole)
	}
	b, _ := json.Marshal(det)
	emit(history.Op{Time: int64(time.Second), Process: history.Nemesis, Type: history.Invoke, F: "start-partition", Ext: history.NewExt(history.Ext{Nodes: c.minority, Detail: b})})
	done := map[string]any{"mode": "halves", "took_ms": 20}
	if c.startErr != "" {
		done["error"] = c.startErr
	}
	b, _ = json.Marshal(done)
	emit(history.Op{Time: int64(time.Second + 20*time.Millisecond), Process: history.Nemesis, Type: history.Info, F: "start-partition", Ext: history.NewExt(history.Ext{Nodes: c.minority, Detail: b})})
	var attrs []checker.Attribution
	for i := 0; i <= c.extraLosses; i++ {
		at := c.ackAt + time.Duration(i)*time.Millisecond
		inv := history.Op{Time: int64(at - time.Millisecond), Process: history.Process(i), Type: history.Invoke, F: "add", Key: "s:1"}
		inv.SetValue(5 + i)
		kind := c.kind
		if kind == "" {
			kind = "lost-write"
		}
		attrs = append(attrs, checker.Attribution{Checker: "set", Kind: kind, Key: "s:1", Slot: 42, Verdict: c.verdict, Why: "gone",
			Ack: &checker.AttrOp{Index: idx, F: "add", TimeS: at.Seconds(), Node: c.attrAckNode, Value: "5"}})
		emit(inv)
		comp := inv
		comp.Type, comp.Time, comp.Node = c.ackType, int64(at), "10.0.0.3:6379"
		if c.wait != nil {
			comp.SetWait(c.wait)
		}
		emit(comp)
	}
	stop := map[string]any{}
	if c.endViewRole != "" {
		stop["cluster_nodes_after"] = clusterView(c.endViewRole)
	}
	b, _ = json.Marshal(stop)
	emit(history.Op{Time: int64(5 * time.Second), Process: history.Nemesis, Type: history.Info, F: "stop-partition", Ext: history.NewExt(history.Ext{Nodes: c.minority, Detail: b})})
	if c.censusRole != "" {
		cen, _ := json.Marshal(history.Census{Nodes: []history.CensusNode{
			{Name: "n1", Addr: "10.0.0.2:6379", ID: "e1", Role: "primary"},
			{Name: "n2", Addr: "10.0.0.3:6379", ID: "e2", Role: c.censusRole, Primary: "e1"}}})
		emit(history.Op{Time: int64(6 * time.Second), Process: history.Nemesis, Type: history.Info, F: history.CensusEvent, Ext: history.NewExt(history.Ext{Detail: cen})})
	}
	var topo []byte
	for _, smp := range c.samples {
		line, _ := json.Marshal(map[string]any{"time": int64(smp.at), "cluster_nodes": clusterView(smp.role)})
		topo = append(append(topo, line...), '\n')
	}
	if len(topo) > 0 {
		if err := r.WriteFile("topology.jsonl", topo); err != nil {
			t.Fatal(err)
		}
	}
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
	s := checker.Summary{Valid: checker.Invalid, Checkers: map[string]checker.Result{"set": {Valid: checker.Invalid, Figures: checker.Map{"lost": 1 + c.extraLosses}}},
		Attribution: attrs}
	if err := r.WriteJSON("results.json", s); err != nil {
		t.Fatal(err)
	}
	if err := results.WriteReport(r); err != nil {
		t.Fatal(err)
	}
	return r.Dir
}

// A loss acknowledged by a primary that a partition cut off, demoted
// after it, with no WAIT, is Redis Cluster's documented behaviour and
// says so in words with an amber badge, on the report and the terminal.
func TestDocumentedLoss(t *testing.T) {
	c := baseDoc()
	c.extraLosses = 5
	dir := c.write(t)
	defer sameBounded(t, dir) // the report of a big history says the same
	b, _ := os.ReadFile(dir + "/report.html")
	html := string(b)
	want := "documented asynchronous replication: the isolated primary n2 acknowledged for ~2.7 s after the partition began"
	if !strings.Contains(html, want) || !strings.Contains(html, `class="badge v-documented"`) {
		t.Errorf("report lacks %q with an amber badge", want)
	}
	section := html[strings.Index(html, `<section id="attribution">`):]
	section = section[:strings.Index(section, "</section>")]
	if strings.Contains(section, `badge v-invalid`) {
		t.Error("a documented loss carries the badge of an unexplained one")
	}
	if !strings.Contains(html, `data-cause="documented" data-count="6"`) || !strings.Contains(html, "and 3 more") {
		t.Error("the six losses are not one group of 6 with three examples and 3 more")
	}
	if !strings.Contains(html, "<li>Attributed anomalies (the first instances, by cause): 6 lost writes of set: documented asynchronous replication (acknowledged by n2, partition 1–5 s on n2).</li>") {
		t.Error("the headline does not say the losses are documented")
	}
	lines := results.GroupLines(dir, summaryOf(t, dir))
	if len(lines) != 1 || !strings.Contains(lines[0], "set lost-write ×6, acknowledged by n2") || !strings.Contains(lines[0], want) {
		t.Errorf("terminal lines %q", lines)
	}
}

// Missing or contradicting evidence never makes a loss documented: each
// lie or gap leaves it "the server lost it" (or its own verdict).
func TestDocumentedNeedsEvidence(t *testing.T) {
	for name, lie := range map[string]func(*docRun){
		"no census":                          func(c *docRun) { c.censusRole = "" },
		"still a primary in the census":      func(c *docRun) { c.censusRole = "primary" },
		"no view of the cluster before":      func(c *docRun) { c.snapRole = "" },
		"a replica before the ack":           func(c *docRun) { c.snapRole = "slave" },
		"a primary in the view at the end":   func(c *docRun) { c.endViewRole = "master" },
		"acked after the partition healed":   func(c *docRun) { c.ackAt = 5500 * time.Millisecond },
		"acked before the partition began":   func(c *docRun) { c.ackAt = 500 * time.Millisecond },
		"the attribution names another node": func(c *docRun) { c.attrAckNode = "n3 (10.0.0.4:6379)" },
		"the history says the write failed":  func(c *docRun) { c.ackType = history.Fail },
		"the history says outcome unknown":   func(c *docRun) { c.ackType = history.Info },
		"WAIT satisfied":                     func(c *docRun) { c.wait = &history.Wait{Want: 1, Acked: 1} },
		"--wait without a WAIT record":       func(c *docRun) { c.cfgWait = "1" },
		"another node cut off":               func(c *docRun) { c.minority = []string{"n3"} },
		"no minority named":                  func(c *docRun) { c.minority = nil },
		"the cut failed":                     func(c *docRun) { c.startErr = "cut n2 from [n1]: exit status 1" },
		"a replica in the sampled view before the partition": func(c *docRun) {
			c.snapRole, c.samples = "", []sample{{500 * time.Millisecond, "slave"}}
		},
	} {
		t.Run(name, func(t *testing.T) {
			c := baseDoc()
			lie(&c)
			dir := c.write(t)
			defer sameBounded(t, dir) // the report of a big history says the same
			b, _ := os.ReadFile(dir + "/report.html")
			html := string(b)
			if strings.Contains(html, `data-cause="documented"`) || strings.Contains(html, `badge v-documented`) {
				t.Error("called documented")
			}
			if !strings.Contains(html, `data-cause="server-lost"`) || !strings.Contains(html, `class="badge v-invalid">the server lost it`) {
				t.Error("the loss is not shown as unexplained (the server lost it, red)")
			}
			for _, l := range results.GroupLines(dir, summaryOf(t, dir)) {
				if strings.Contains(l, "documented") {
					t.Errorf("terminal calls it documented: %s", l)
				}
			}
		})
	}
	// A counter's lost increment: its attribution names the last
	// acknowledged increment, not a lost one.
	c0 := baseDoc()
	c0.kind = "lost-increment"
	if b, _ := os.ReadFile(c0.write(t) + "/report.html"); strings.Contains(string(b), `data-cause="documented"`) {
		t.Error("a counter's lost increment called documented")
	}
	// A loss an admin step explains keeps its own verdict.
	c := baseDoc()
	c.verdict = checker.AdminStranded
	b, _ := os.ReadFile(c.write(t) + "/report.html")
	if strings.Contains(string(b), `data-cause="documented"`) {
		t.Error("an admin-stranded loss called documented")
	}
}

// With a wanted WAIT that was not satisfied, the loss is still documented.
func TestDocumentedWithUnsatisfiedWait(t *testing.T) {
	c := baseDoc()
	c.cfgWait, c.wait = "1", &history.Wait{Want: 1, Acked: 0}
	b, _ := os.ReadFile(c.write(t) + "/report.html")
	if !strings.Contains(string(b), `data-cause="documented"`) {
		t.Error("a loss whose WAIT reached no replica is not documented")
	}
}

// The faults table says a partition's detail in words, not its field
// names; failed ops stand out in the latency scatter (red squares).
func TestFaultsInWordsAndFailedOpsPlotted(t *testing.T) {
	c := baseDoc()
	c.ackType = history.Fail
	b, _ := os.ReadFile(c.write(t) + "/report.html")
	html := string(b)
	if !strings.Contains(html, "n2 cut off (the minority side)") {
		t.Error("the partition's minority is not said in words")
	}
	for _, field := range []string{"minority n2", "took_ms", "cluster_nodes"} {
		if strings.Contains(html, `<td class="effect">`+field) || strings.Contains(html, "; "+field) {
			t.Errorf("the faults table dumps the field %s", field)
		}
	}
	if !strings.Contains(html, `data-series="add fail" data-points="1"`) || !strings.Contains(html, `stroke="#d50000"`) {
		t.Error("the failed op is not drawn in red in the latency scatter")
	}
}

func summaryOf(t *testing.T, dir string) checker.Summary {
	t.Helper()
	s, err := (&results.Run{Dir: dir}).Summary()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The terminal prints the report's groups only for the summary they
// group: another summary (a check not written back) is grouped afresh.
func TestGroupLinesOfAnotherSummary(t *testing.T) {
	c := baseDoc()
	dir := c.write(t)
	s := summaryOf(t, dir)
	s.Attribution[0].Key = "s:other"
	lines := results.GroupLines(dir, s)
	if len(lines) != 1 || strings.Contains(lines[0], "documented") || !strings.Contains(lines[0], "s:other") {
		t.Errorf("lines %q, want the other summary's loss, not the file's", lines)
	}
}

// The majority's view of the isolated primary during the partition
// (failed, then replaced) is the documented behaviour, no contradiction:
// the loss stays documented.
func TestDocumentedWithTheMajoritysView(t *testing.T) {
	c := baseDoc()
	c.samples = []sample{{2 * time.Second, "master,fail"}, {3 * time.Second, "slave"}}
	b, _ := os.ReadFile(c.write(t) + "/report.html")
	if !strings.Contains(string(b), `data-cause="documented"`) {
		t.Error("a view of n2 failed or demoted during the partition made the loss unexplained")
	}
}

// A primary cut off, demoted (a view after the start shows it a replica)
// and promoted again later (its new primary cut off in turn) is a primary
// in the census at the end: its losses of the first partition are still
// documented. Without the view of it as a replica they are not.
func TestDocumentedDemotedThenPromotedAgain(t *testing.T) {
	c := baseDoc()
	c.censusRole = "primary"
	c.samples = []sample{{2 * time.Second, "master,fail"}, {4500 * time.Millisecond, "slave"}}
	b, _ := os.ReadFile(c.write(t) + "/report.html")
	if !strings.Contains(string(b), `data-cause="documented"`) {
		t.Error("a primary demoted during the partition and promoted again later: its losses are not documented")
	}
	c.samples = c.samples[:1] // failed, never shown a replica
	b, _ = os.ReadFile(c.write(t) + "/report.html")
	if strings.Contains(string(b), `data-cause="documented"`) {
		t.Error("a primary never shown demoted: its losses are called documented")
	}
}
