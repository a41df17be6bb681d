package cluster

import (
	"reflect"
	"strings"
	"testing"
)

func TestExec(t *testing.T) {
	nw := newNetwork(t, 6, 1)
	nw.form(3)
	n := nw.nodes[0].n
	keys := map[int]int{0: 2}
	env := Env{
		CountKeysInSlot: func(s int) int { return keys[s] },
		GetKeysInSlot: func(s, c int) []string {
			if s == 0 && c > 0 {
				return []string{"a"}
			}
			return nil
		},
		DBEmpty: func() bool { return false },
	}
	run := func(args ...string) any { return Exec(n, append([]string{"CLUSTER"}, args...), env) }
	errText := func(v any) string {
		if e, ok := v.(error); ok {
			return e.Error()
		}
		return ""
	}
	for _, c := range []struct {
		args []string
		want any
	}{
		{[]string{"KEYSLOT", "foo"}, int64(12182)},
		{[]string{"MYID"}, n.ID()},
		{[]string{"COUNTKEYSINSLOT", "0"}, int64(2)},
		{[]string{"GETKEYSINSLOT", "0", "10"}, []any{"a"}},
		{[]string{"BUMPEPOCH"}, Status("BUMPED 7")},
		{[]string{"BUMPEPOCH"}, Status("STILL 7")},
		{[]string{"COUNT-FAILURE-REPORTS", nw.nodes[1].n.ID()}, int64(0)},
		{[]string{"SETSLOT", "0", "STABLE"}, Status("OK")},
		{[]string{"SAVECONFIG"}, Status("OK")},
	} {
		if got := run(c.args...); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%v: got %#v want %#v", c.args, got, c.want)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"NOPE"}, "ERR unknown subcommand 'NOPE'. Try CLUSTER HELP."},
		{[]string{"MEET", "1.2.3.4"}, "ERR wrong number of arguments for 'cluster|meet' command"},
		{[]string{"MEET", "1.2.3.4", "x"}, "ERR Invalid TCP base port specified: x"},
		{[]string{"MEET", "nohost", "7000"}, "ERR Invalid node address specified: nohost:7000"},
		{[]string{"ADDSLOTS", "0"}, "ERR Slot 0 is already busy"},
		{[]string{"ADDSLOTS", "x"}, "ERR Invalid or out of range slot"},
		{[]string{"ADDSLOTSRANGE", "5", "1"}, "ERR start slot number 5 is greater than end slot number 1"},
		{[]string{"ADDSLOTSRANGE", "1", "2", "3"}, "ERR wrong number of arguments for 'cluster|addslotsrange' command"},
		{[]string{"DELSLOTS", "16384"}, "ERR Invalid or out of range slot"},
		{[]string{"SETSLOT", "0", "BOGUS", "x"}, "ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP"},
		{[]string{"SETSLOT", "0", "NODE", nw.nodes[1].n.ID()}, "ERR Can't assign hashslot 0 to a different node while I still hold keys for this hash slot."},
		{[]string{"SETSLOT", "6000", "MIGRATING", nw.nodes[2].n.ID()}, "ERR I'm not the owner of hash slot 6000"},
		{[]string{"SETSLOT", "0", "MIGRATING", nw.nodes[3].n.ID()}, "ERR Target node is not a master"},
		{[]string{"COUNTKEYSINSLOT", "99999"}, "ERR Invalid slot"},
		{[]string{"GETKEYSINSLOT", "0", "-1"}, "ERR Invalid slot or number of keys"},
		{[]string{"FAILOVER"}, "ERR You should send CLUSTER FAILOVER to a replica"},
		{[]string{"FAILOVER", "SOON"}, "ERR syntax error"},
		{[]string{"REPLICATE", nw.nodes[1].n.ID()}, "ERR To set a master the node must be empty and without assigned slots."},
		{[]string{"REPLICAS", nw.nodes[3].n.ID()}, "ERR The specified node is not a master"},
		{[]string{"RESET"}, "ERR CLUSTER RESET can't be called with master nodes containing keys"},
		{[]string{"FLUSHSLOTS"}, "ERR DB must be empty to perform CLUSTER FLUSHSLOTS."},
		{[]string{"SET-CONFIG-EPOCH", "5"}, "ERR The user can assign a config epoch only when the node does not know any other node."},
		{[]string{"FORGET", n.ID()}, "ERR I tried hard but I can't forget myself..."},
	} {
		if got := errText(run(c.args...)); got != c.want {
			t.Errorf("%v: got %q want %q", c.args, got, c.want)
		}
	}
	slots := run("SLOTS").([]any)
	if len(slots) != 3 || !reflect.DeepEqual(slots[0].([]any)[:3], []any{int64(0), int64(5460), []any{"127.0.0.1", int64(7000), n.ID(), Map{}}}) {
		t.Fatalf("SLOTS: %#v", slots[0])
	}
	shards := run("SHARDS").([]any)
	if len(shards) != 3 || shards[0].(Map)[0] != "slots" {
		t.Fatalf("SHARDS: %#v", shards)
	}
	if r := run("REPLICAS", n.ID()).([]any); len(r) != 1 || !strings.Contains(r[0].(string), " slave "+n.ID()+" ") {
		t.Fatalf("REPLICAS: %#v", r)
	}
	if v, ok := run("NODES").(Verbatim); !ok || !strings.HasPrefix(string(v), n.ID()+" ") {
		t.Fatalf("NODES: %#v", v)
	}
	if v, ok := run("INFO").(Verbatim); !ok || !strings.HasPrefix(string(v), "cluster_state:ok\r\n") {
		t.Fatalf("INFO: %#v", v)
	}
	if l := run("LINKS").([]any); len(l) != 10 { // to and from each of the 5 peers
		t.Fatalf("LINKS: %d links", len(l))
	}
}
