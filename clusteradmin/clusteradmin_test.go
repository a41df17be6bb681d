package clusteradmin

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redline-dev/redline/cluster"
)

// snap builds a snapshot by hand: three primaries a, b, c (replicas ra,
// rb, rc) serving thirds of the slots, foreign keys in a few slots.
func snap() *Snapshot {
	s := &Snapshot{Foreign: map[int]int64{10: 3, 6000: 1, 16000: 7}, ShardOf: map[string]string{
		"a": "a", "b": "b", "c": "c", "ra": "a", "rb": "b", "rc": "c"}}
	for slot := range cluster.SlotCount {
		s.Owner[slot] = []string{"a", "b", "c"}[slot*3/cluster.SlotCount]
	}
	s.Served, s.ForeignKeys = cluster.SlotCount, 11
	return s
}

func TestCompareFindsWhatChanged(t *testing.T) {
	mem, _ := OpenJournal("")
	if r := Compare(snap(), snap(), mem); !r.Clean || !strings.HasPrefix(r.Summary, "no foreign data touched") {
		t.Fatalf("identical snapshots: %+v", r)
	}

	after := snap()
	after.Foreign[10], after.ForeignKeys = 2, 10
	r := Compare(snap(), after, mem)
	if r.Clean || len(r.ChangedSlots) != 1 || r.ChangedSlots[0] != (SlotCountChange{10, 3, 2}) ||
		!strings.Contains(r.Summary, "slot 10: 3 -> 2 keys") {
		t.Fatalf("a deleted key: %+v", r)
	}

	// A slot that moved with its keys is fine when redline journalled the
	// move, and a failover inside a shard is fine without a journal entry.
	after = snap()
	after.Owner[6000] = "c"
	after.Owner[100] = "ra"
	r = Compare(snap(), after, mem)
	if r.Clean || len(r.UnaccountedOwners) != 1 || r.UnaccountedOwners[0] != (OwnerChange{6000, "b", "c"}) {
		t.Fatalf("an unjournalled move: %+v", r)
	}
	j, _ := OpenJournal("")
	seq, _ := j.Begin(Step{Kind: "migrate", Slots: []int{6000}, From: "b", To: "c"})
	j.End(seq, nil)
	if r := Compare(snap(), after, j); !r.Clean {
		t.Fatalf("a journalled move and a failover: %+v", r)
	}

	// Unserved and open slots, conflicts and unfinished steps all count.
	after = snap()
	after.Owner[5], after.Owner[6], after.Served = "", "", cluster.SlotCount-2
	after.Open = []string{"slot 7 MIGRATING to x on y"}
	j.Begin(Step{Kind: "migrate", Slots: []int{7}, From: "a", To: "b"})
	r = Compare(snap(), after, j)
	if r.Clean || strings.Join(r.UnservedSlots, ",") != "5-6" || len(r.OpenSlots) != 1 || len(r.UnfinishedJournal) != 1 {
		t.Fatalf("unserved, open, unfinished: %+v", r)
	}
	for _, want := range []string{"FOREIGN DATA CHANGED", "slots no longer served: 5-6", "slots left open", "never finished"} {
		if !strings.Contains(r.Summary, want) {
			t.Errorf("summary lacks %q: %s", want, r.Summary)
		}
	}

	// A slot open before the run and still open is not the run's doing.
	before := snap()
	before.Open = []string{"slot 9 IMPORTING from a on b"}
	after = snap()
	after.Open = before.Open
	if r := Compare(before, after, mem); !r.Clean {
		t.Fatalf("a slot open before and after: %+v", r)
	}
}

func TestJournalIsWrittenBeforeTheChange(t *testing.T) {
	path := filepath.Join(t.TempDir(), JournalFile)
	j, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	var seen []Step
	j.OnEntry(func(s Step) { seen = append(seen, s) })
	seq, err := j.Begin(Step{Kind: "migrate", Slots: []int{1, 2}, From: "a", To: "b"})
	if err != nil {
		t.Fatal(err)
	}
	// Before End: the file already says what is about to happen.
	lines := readLines(t, path)
	if len(lines) != 1 || lines[0].State != "begin" || lines[0].Kind != "migrate" || lines[0].Seq != seq {
		t.Fatalf("journal before the change: %+v", lines)
	}
	j.End(seq, fmt.Errorf("MIGRATE timed out"))
	s2, _ := j.Begin(Step{Kind: "failover", From: "a", To: "ra"})
	j.End(s2, nil)
	lines = readLines(t, path)
	if len(lines) != 4 || lines[1].State != "failed" || lines[1].Error != "MIGRATE timed out" || lines[3].State != "done" {
		t.Fatalf("journal: %+v", lines)
	}
	if len(seen) != 4 {
		t.Fatalf("OnEntry saw %d entries, want 4", len(seen))
	}
	if fo := j.Failovers(); fo["ra"] != "a" {
		t.Fatalf("failovers %v", fo)
	}
	if d := j.Destinations(); strings.Join(d[2], ",") != "a,b" {
		t.Fatalf("destinations %v", d)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
}

func readLines(t *testing.T, path string) []Step {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []Step
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var s Step
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("journal line %q: %v", sc.Text(), err)
		}
		out = append(out, s)
	}
	return out
}

func TestFromNodesSkipsNodesWithoutAddress(t *testing.T) {
	id := func(c string) string { return strings.Repeat(c, 40) }
	text := strings.Join([]string{
		id("a") + " 10.0.0.1:6379@16379 myself,master - 0 0 1 connected 0-8191",
		id("b") + " 10.0.0.2:6379@16379 master - 0 0 2 connected 8192-16383",
		id("c") + " 10.0.0.3:6379@16379 slave " + id("a") + " 0 0 1 connected",
		id("d") + " :0@0 master,noaddr - 0 0 0 disconnected",
		id("e") + " 10.0.0.5:6379@16379 master,fail - 0 0 3 disconnected",
	}, "\n") + "\n"
	v, err := fromNodes("10.0.0.1:6379", text)
	if err != nil {
		t.Fatal(err)
	}
	short := func(id string) string { return id[:min(1, len(id))] } // ids are one letter repeated
	var got []string
	for _, m := range v.Members {
		got = append(got, fmt.Sprintf("%s/%s/%v/%d/%s/%s", short(m.ID), m.Addr, m.Primary, m.Slots, short(m.MasterID), m.Health))
	}
	want := "a/10.0.0.1:6379/true/8192//,b/10.0.0.2:6379/true/8192//,c/10.0.0.3:6379/false/0/a/,e/10.0.0.5:6379/true/0//failed"
	if strings.Join(got, ",") != want {
		t.Fatalf("members\n got %s\nwant %s", strings.Join(got, ","), want)
	}
	if len(v.Primaries()) != 2 || len(v.Members[0].SlotList()) != 8192 {
		t.Fatalf("primaries %v", v.Primaries())
	}
}

func TestSpans(t *testing.T) {
	got := fmt.Sprint(spans([]int{7, 3, 4, 5, 9, 10}))
	if got != "[3 5 7 7 9 10]" {
		t.Fatalf("spans: %s", got)
	}
}

func TestCmdStringHidesPasswords(t *testing.T) {
	for _, c := range []struct {
		args []any
		want string
	}{
		{[]any{"migrate", "10.0.0.1", 6379, "", 0, 5000, "replace", "auth2", "alice", "pw1", "keys", "k"}, `MIGRATE 10.0.0.1 6379 "" 0 5000 replace auth2 alice <password> keys k`},
		{[]any{"migrate", "10.0.0.1", 6379, "", 0, 5000, "auth", "pw2", "keys", "k"}, `MIGRATE 10.0.0.1 6379 "" 0 5000 auth <password> keys k`},
		{[]any{"cluster", "setslot", 5, "node", "id"}, "CLUSTER SETSLOT 5 node id"},
	} {
		if got := CommandString(c.args); got != c.want {
			t.Errorf("CommandString(%v) = %s, want %s", c.args, got, c.want)
		}
	}
}
