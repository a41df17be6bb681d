package results

import "testing"

func TestSlotChangeTellsAMigration(t *testing.T) {
	got := slotChange("0-5460", "0-100 102-5460 10000")
	want := "gained slots 10000 and gave up slots 101, now primary of 0-100 102-5460 10000"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := describeSlots(slotBits("1 3 5 7 9 11-20")); got != "15 slots in 6 ranges (1 3 5 …)" {
		t.Errorf("a long slot set: %q", got)
	}
}

func TestParseClusterNodes(t *testing.T) {
	nodes := parseClusterNodes("abc 10.0.0.2:6379@16379 myself,master - 0 0 1 connected 0-5460 [93->-def]\n" +
		"def 10.0.0.3:6379@16379,host master,fail - 0 0 2 connected\n" +
		"ghi 10.0.0.4:6379@16379 slave abc 0 0 1 connected\ngarbage\n")
	if len(nodes) != 3 {
		t.Fatalf("%d nodes: %+v", len(nodes), nodes)
	}
	if n := nodes[0]; !n.myself || !n.primary || n.addr != "10.0.0.2:6379" || len(n.slots) != 1 || n.slots[0] != "0-5460" {
		t.Errorf("first: %+v", n)
	}
	if n := nodes[1]; !n.failed || n.addr != "10.0.0.3:6379" {
		t.Errorf("second: %+v", n)
	}
	if n := nodes[2]; n.primary || n.master != "abc" {
		t.Errorf("third: %+v", n)
	}
}
