package clusteradmin

import (
	"strings"
	"testing"

	"github.com/redline-dev/redline/cluster"
)

func member(name, id string, primary bool, master string) NodeState {
	return NodeState{Node: cluster.Node{Name: name}, ID: id, Primary: primary, MasterID: master, Reachable: true}
}

// redis/redis#15472's end state: n4 replicates n1, which a manual failover
// made a replica of n5. Healthy shards, a replica of an unreachable
// primary and a replica of an unknown id are not judged.
func TestReplicasOfReplicas(t *testing.T) {
	healthy := &Topology{Members: []NodeState{
		member("n1", "id1", true, ""), member("n2", "id2", true, ""), member("n4", "id4", false, "id1"), member("n5", "id5", false, "id2"),
	}}
	if got := healthy.ReplicasOfReplicas(); len(got) != 0 {
		t.Fatalf("a healthy cluster: %v", got)
	}
	chained := &Topology{Members: []NodeState{
		member("n1", "id1", false, "id5"), member("n4", "id4", false, "id1"), member("n5", "id5", true, ""),
	}}
	got := chained.ReplicasOfReplicas()
	if len(got) != 1 || !strings.Contains(got[0], "n4 replicates n1") || !strings.Contains(got[0], "(of n5)") {
		t.Fatalf("chained: %v", got)
	}
	down := member("n1", "id1", false, "id5")
	down.Reachable = false
	unjudged := &Topology{Members: []NodeState{down, member("n4", "id4", false, "id1"), member("n6", "id6", false, "id-unknown")}}
	if got := unjudged.ReplicasOfReplicas(); len(got) != 0 {
		t.Fatalf("an unreachable or unknown primary is not judged: %v", got)
	}
}
