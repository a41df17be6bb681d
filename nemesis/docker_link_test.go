package nemesis_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/nemesis"
)

// TestDockerOneWayLossSlowLinkAndSlowHealInTheEndPhase fires a one-way
// partition, a loss, a rate cap and a CPU starvation on a real Redis
// cluster in containers, each as a schedule would, and leaves them all in
// force: the one-way cut's node is flagged failing by its peers (they do
// not hear it) while it alone holds drop rules, one per peer, on its way
// out; each other fault leaves its mark in the kernel or the engine (a
// loss rule, tbf, a CFS quota); and the end phase removes every one (the
// last as its stop, the others by their heal) and the cluster converges.
func TestDockerOneWayLossSlowLinkAndSlowHealInTheEndPhase(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cl := startDocker(t, ctx)
	nem, err := nemesis.New([]string{"partition:one-way-unheard", "loss", "slow-link", "slow"}, cl,
		nemesis.Options{Interval: 2 * time.Second, Seed: 1, NodeTimeout: time.Second, Log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	rec := &nemesis.MemRecorder{}
	addr := map[string]string{}
	for _, n := range cl.Nodes() {
		addr[n.Name] = n.Addr
	}
	struck := func(f string) string {
		t.Helper()
		d := nemesis.DetailOf(t, rec.Last("start-"+f, history.Info))
		if d["error"] != nil {
			t.Fatalf("%s: %v", f, d["error"])
		}
		nodes := rec.Last("start-"+f, history.Invoke).NodeList()
		if len(nodes) != 1 {
			t.Fatalf("%s struck %v, want one node", f, nodes)
		}
		return nodes[0]
	}

	nem.FireForTest(ctx, rec, nemesis.Step{Fault: "partition", Mode: "one-way-unheard", Seed: 3, Evidence: true})
	x := struck("partition")
	for name := range addr {
		want := 0
		if name == x {
			want = len(addr) - 1
		}
		if k, err := cl.DropRules(ctx, name); err != nil || k != want {
			t.Errorf("%s has %d drop rules (%v) under one-way-unheard of %s, want %d", name, k, err, x, want)
		}
	}
	nemesis.Eventually(t, 30*time.Second, func() string {
		for name, a := range addr {
			if name == x {
				continue
			}
			ls, err := nodesOf(ctx, a)
			if err != nil {
				return err.Error()
			}
			for _, l := range ls {
				if l.Addr == addr[x] && !l.Failed() {
					return fmt.Sprintf("%s still sees %s, which it cannot hear, as %s", name, x, strings.Join(l.Flags, ","))
				}
			}
		}
		return ""
	})

	nem.FireForTest(ctx, rec, nemesis.Step{Fault: "loss", Mode: "one", Seed: 4})
	lossy := struck("loss")
	nem.FireForTest(ctx, rec, nemesis.Step{Fault: "slow-link", Mode: "one", Seed: 5})
	capped := struck("slow-link")
	nem.FireForTest(ctx, rec, nemesis.Step{Fault: "slow", Mode: "one", Seed: 6})
	slow := struck("slow")
	if d := nemesis.DetailOf(t, rec.Last("start-slow", history.Invoke)); d["how"] != "cpu-quota" {
		t.Errorf("slow on docker: %v, want the CPU quota", d)
	}
	loss, _ := cl.DropRules(ctx, lossy)
	if lossy == x {
		loss -= len(addr) - 1
	}
	q, _ := cl.RootQdiscs(ctx, capped)
	quota, _ := cl.CPUQuota(ctx, slow)
	t.Logf("in force: one-way %s, loss %s (%d rule), rate cap %s (%v), slow %s (quota %d µs per 100 ms)", x, lossy, loss, capped, q, slow, quota)
	if loss != 1 || len(q) != 1 || q[0] != "tbf" || quota < 2000 || quota > 20000 {
		t.Fatalf("loss rule %d on %s, root qdiscs %v on %s, quota %d on %s: want 1, tbf, 2000-20000", loss, lossy, q, capped, quota, slow)
	}

	if err := nem.Heal(ctx, rec); err != nil {
		t.Fatalf("heal: %v", err)
	}
	// The fault in force last (slow) is stopped as its step would be;
	// the end phase undoes what the others still hold.
	if stop := rec.Last("stop-slow", history.Info); stop.F == "" || nemesis.DetailOf(t, stop)["error"] != nil {
		t.Errorf("slow was not stopped cleanly: %+v", stop)
	}
	heal := nemesis.DetailOf(t, rec.Last("heal", history.Info))
	if heal["converged"] != true || heal["healed_partitions"] != true || heal["loss_removed"] == nil || heal["rate_cap_removed"] == nil {
		t.Fatalf("heal: %v", heal)
	}
	for name := range addr {
		k, err1 := cl.DropRules(ctx, name)
		q, err2 := cl.RootQdiscs(ctx, name)
		quota, err3 := cl.CPUQuota(ctx, name)
		if k != 0 || (len(q) > 0 && !(len(q) == 1 && q[0] == "noqueue")) || quota > 0 || err1 != nil || err2 != nil || err3 != nil {
			t.Errorf("%s after the end phase: %d drop rules, root qdiscs %v, quota %d (%v %v %v)", name, k, q, quota, err1, err2, err3)
		}
	}
}
