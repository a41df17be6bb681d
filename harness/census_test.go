package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin/localcluster"
	"github.com/redline-dev/redline/history"
)

// The census finds the set-aside copies of the run's keys and lists them
// under their key: a key without a hash tag has its copy named
// "{key}:redline-conflict-from-<node>", which SCAN MATCH prefix* does not
// match (the census before missed it), and a key with one has its copy
// under the prefix (the census before listed it as a key of its own). On
// three redis-server processes.
func TestCensusListsSetAsideCopiesUnderTheirKey(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lc, err := localcluster.Start(ctx, t.TempDir(), 3, 0, time.Second, "")
	if err != nil {
		t.Fatalf("no local cluster of redis-server processes (apt-get install redis-server): %v", err)
	}
	defer lc.Stop()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: lc.Addrs, DisableIdentity: true})
	defer cc.Close()
	prefix := "redline:c3ns:"
	bare, tagged := prefix+"reg:7", prefix+"set:0:1{s0.1}"
	writes := []struct{ key, value string }{
		{bare, "1"}, {history.AsideName(bare, "n2"), "2"},
		{history.AsideName(tagged, "n3"), ""},                               // a set, below
		{"other:reg:7", "9"}, {history.AsideName("other:reg:7", "n2"), "9"}, // not the run's
	}
	for _, w := range writes {
		if w.value == "" {
			continue
		}
		if err := cc.Set(ctx, w.key, w.value, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := cc.SAdd(ctx, tagged, 3).Err(); err != nil {
		t.Fatal(err)
	}
	if err := cc.SAdd(ctx, history.AsideName(tagged, "n3"), 4, 5).Err(); err != nil {
		t.Fatal(err)
	}
	var nodes []cluster.Node
	for i, a := range lc.Addrs {
		nodes = append(nodes, cluster.Node{Name: fmt.Sprintf("n%d", i+1), Addr: a})
	}
	c := TakeCensus(ctx, cluster.Credentials{}, nodes, prefix, time.Now())
	keys := map[string]int{}
	var asides []history.CensusAside
	asideOf := map[string]string{}
	for _, n := range c.Nodes {
		if n.Error != "" {
			t.Fatalf("%s: %s", n.Name, n.Error)
		}
		for k := range n.Keys {
			keys[k]++
		}
		for k, as := range n.Asides {
			for _, a := range as {
				asides = append(asides, a)
				asideOf[a.Name] = k
			}
		}
	}
	if len(keys) != 2 || keys[bare] != 1 || keys[tagged] != 1 {
		t.Fatalf("keys %v: want %s and %s once each, and no set-aside copy among them", keys, bare, tagged)
	}
	if len(asides) != 2 || asideOf[history.AsideName(bare, "n2")] != bare || asideOf[history.AsideName(tagged, "n3")] != tagged {
		t.Fatalf("set-aside copies %+v: want %s's and %s's, each under its key", asides, bare, tagged)
	}
	for _, a := range asides {
		switch a.Name {
		case history.AsideName(bare, "n2"):
			if a.From != "n2" || a.Value == nil || *a.Value != "2" {
				t.Fatalf("%s: %+v, want the value 2 from n2", a.Name, a)
			}
		default:
			if a.From != "n3" || a.Type != "set" || len(a.Members) != 2 {
				t.Fatalf("%s: %+v, want the set {4 5} from n3", a.Name, a)
			}
		}
	}
}

// The end phase's wait for sync and the replica census on six
// redis-server processes (three primaries, one replica each): once the
// wait says in sync, the census carries every node's replication state
// and the replica census holds each replica to its primary: valid (the
// divergences and lies are the checker's own tests, on hand-made
// censuses).
func TestCensusHoldsReplicasToTheirPrimaries(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lc, err := localcluster.Start(ctx, t.TempDir(), 6, 1, time.Second, "")
	if err != nil {
		t.Fatalf("no local cluster of redis-server processes (apt-get install redis-server): %v", err)
	}
	defer lc.Stop()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: lc.Addrs, DisableIdentity: true})
	defer cc.Close()
	prefix := "redline:rc:"
	for i := range 50 {
		if err := cc.Set(ctx, fmt.Sprintf("%sreg:%d", prefix, i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
		if err := cc.SAdd(ctx, fmt.Sprintf("%sset:%d", prefix, i), i, i+1).Err(); err != nil {
			t.Fatal(err)
		}
	}
	var nodes []cluster.Node
	for i, a := range lc.Addrs {
		nodes = append(nodes, cluster.Node{Name: fmt.Sprintf("n%d", i+1), Addr: a})
	}
	rs := WaitReplicasInSync(ctx, cluster.Credentials{}, nodes, 30*time.Second)
	if !rs.InSync {
		t.Fatalf("replicas not in sync: %s", rs.Why)
	}
	judge := func() checker.Result {
		c := TakeCensus(ctx, cluster.Credentials{}, nodes, prefix, time.Now())
		c.ReplicaSync = &rs
		b, _ := json.Marshal(c)
		ops := []history.Op{{Process: history.Nemesis, Type: history.Info, F: history.CensusEvent, Ext: history.NewExt(history.Ext{Detail: b})}}
		return checker.ReplicaCensus().Check(ctx, checker.NewHistory(ops))
	}
	r := judge()
	if f, ok := checker.FiguresAs[*checker.ReplicaCensusFigures](r); r.Valid != checker.Valid || !ok || f.ReplicasJudged != 3 {
		t.Fatalf("in sync: %v %v", r.Valid, r.Figures)
	}
	for _, n := range nodes {
		c := TakeCensus(ctx, cluster.Credentials{}, []cluster.Node{n}, prefix, time.Now())
		if c.Nodes[0].Repl == nil || c.Nodes[0].Repl.Error != "" || c.Nodes[0].Repl.Replid == "" {
			t.Fatalf("%s: no replication state in the census: %+v", n.Name, c.Nodes[0].Repl)
		}
	}
}
