package cluster

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

func readFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func byID(t *testing.T, nodes []NodeInfo, prefix string) NodeInfo {
	t.Helper()
	for _, n := range nodes {
		if strings.HasPrefix(n.ID, prefix) {
			return n
		}
	}
	t.Fatalf("no node %s…", prefix)
	return NodeInfo{}
}

// Captured from Redis 7.0.15: slot 100 migrating 27001 -> 27002, 27003 killed
// and its replica 27006 promoted.
func TestParseNodesMigratingAndFail(t *testing.T) {
	nodes, err := ParseNodes(readFixture(t, "nodes_migrating_fail.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 6 {
		t.Fatalf("got %d nodes, want 6", len(nodes))
	}
	self, ok := Self(nodes)
	if !ok || !strings.HasPrefix(self.ID, "6b02e119") {
		t.Fatalf("myself = %+v", self)
	}
	want := NodeInfo{
		ID: "6b02e119e5e128c7ccc2de3feb5abc043f7c3ea7", Addr: "127.0.0.1:27001", BusPort: 37001,
		Flags: []string{"myself", "master"}, PongRecv: 1795963458000, ConfigEpoch: 1, Connected: true,
		Ranges: []SlotRange{{0, 5460}},
		Open:   []OpenSlot{{Slot: 100, Migrating: true, Peer: "9f9952de98a7bf9c398acfd4656c43a23720b78f"}},
	}
	if !reflect.DeepEqual(self, want) {
		t.Fatalf("myself\n got %+v\nwant %+v", self, want)
	}
	if !self.IsPrimary() || self.IsReplica() || self.Failed() || self.NumSlots() != 5461 || self.Host() != "127.0.0.1" {
		t.Fatalf("helpers wrong for %+v", self)
	}
	dead := byID(t, nodes, "f4f97fd7")
	if !dead.Failed() || dead.Connected || dead.PingSent != 1795963455582 || len(dead.Ranges) != 0 {
		t.Fatalf("failed node parsed as %+v", dead)
	}
	repl := byID(t, nodes, "48619b68")
	if !repl.IsReplica() || repl.IsPrimary() || repl.Master != self.ID || repl.ConfigEpoch != 1 {
		t.Fatalf("replica parsed as %+v", repl)
	}
	promoted := byID(t, nodes, "ea3820e8")
	if promoted.ConfigEpoch != 7 || promoted.NumSlots() != 16384-10922 || promoted.Master != "" {
		t.Fatalf("promoted node parsed as %+v", promoted)
	}
	if c := Covered(nodes); c != SlotCount {
		t.Fatalf("covered %d", c)
	}
}

func TestParseNodesImportingSameSlotMap(t *testing.T) {
	a, err := ParseNodes(readFixture(t, "nodes_migrating_fail.txt"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseNodes(readFixture(t, "nodes_importing.txt"))
	if err != nil {
		t.Fatal(err)
	}
	self, _ := Self(b)
	if len(self.Open) != 1 || self.Open[0] != (OpenSlot{100, false, "6b02e119e5e128c7ccc2de3feb5abc043f7c3ea7"}) {
		t.Fatalf("importing slot parsed as %+v", self.Open)
	}
	if SlotMap(a) != SlotMap(b) {
		t.Fatalf("slot maps differ:\n%s\n%s", SlotMap(a), SlotMap(b))
	}
	if !strings.Contains(SlotMap(a), "9f9952de98a7bf9c398acfd4656c43a23720b78f:5461-10921") {
		t.Fatalf("slot map %s", SlotMap(a))
	}
}

func TestParseNodesConfAndHostnames(t *testing.T) {
	nodes, err := ParseNodes(readFixture(t, "nodes_conf.txt"))
	if err != nil || len(nodes) != 6 {
		t.Fatalf("nodes.conf: %d nodes, %v", len(nodes), err)
	}
	nodes, err = ParseNodes(readFixture(t, "nodes_hostnames.txt"))
	if err != nil {
		t.Fatal(err)
	}
	self, _ := Self(nodes)
	if self.Hostname != "hostname1" || self.Addr != "127.0.0.1:30001" || self.BusPort != 31001 {
		t.Fatalf("hostname line parsed as %+v", self)
	}
	if got := self.RangesString(); got != "0-5460 5462 5464-5470" {
		t.Fatalf("ranges %q", got)
	}
	if s := self.Slots(); len(s) != 5461+1+7 || s[5461] != 5462 || s[len(s)-1] != 5470 {
		t.Fatalf("slots %d", len(s))
	}
	hs := byID(t, nodes, "824fe116")
	if !hs.HasFlag("handshake") || !hs.HasFlag("noaddr") || hs.Host() != "" {
		t.Fatalf("handshake node parsed as %+v", hs)
	}
}

func TestParseNodesErrors(t *testing.T) {
	good := "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30001@31001 myself,master - 0 0 1 connected 0-5460"
	bad := map[string]string{
		"short":      "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30001@31001 master - 0 0 1",
		"id":         strings.Replace(good, "e7d1", "", 1),
		"link":       strings.Replace(good, "connected", "maybe", 1),
		"epoch":      strings.Replace(good, " 1 connected", " x connected", 1),
		"slot":       strings.Replace(good, "0-5460", "0-16384", 1),
		"range":      strings.Replace(good, "0-5460", "10-5", 1),
		"open":       good + " [12-x-abc]",
		"port":       strings.Replace(good, "127.0.0.1:30001@31001", "127.0.0.1", 1),
		"bus":        strings.Replace(good, "@31001", "@x", 1),
		"ping_sent":  strings.Replace(good, "- 0 0", "- a 0", 1),
		"empty slot": strings.Replace(good, "0-5460", "-", 1),
	}
	if _, err := ParseNodes(good); err != nil {
		t.Fatalf("good line: %v", err)
	}
	for name, line := range bad {
		if _, err := ParseNodes(good + "\n" + line + "\n"); err == nil {
			t.Errorf("%s: no error for %q", name, line)
		} else if !strings.Contains(err.Error(), "line 2") {
			t.Errorf("%s: error does not name the line: %v", name, err)
		}
	}
}

func TestExternalNodes(t *testing.T) {
	ns, err := ExternalNodes([]string{"10.0.0.1:6379", " redis-a.example:7000", "[::1]:6380"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ns) != 3 || ns[1] != (Node{Name: "n2", Addr: "redis-a.example:7000", Host: "redis-a.example"}) || ns[2].Host != "::1" {
		t.Fatalf("nodes %+v", ns)
	}
	for _, bad := range [][]string{nil, {"10.0.0.1"}, {":6379"}, {"h:0"}, {"h:70000"}, {"h:x"}, {"a:1", "a:1"}} {
		if _, err := ExternalNodes(bad); err == nil {
			t.Errorf("ExternalNodes(%q) accepted", bad)
		}
	}
}
