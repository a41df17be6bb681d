package nemesis

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
	"github.com/redline-dev/redline/history"
)

// bare is a cluster that can do nothing but list its nodes (an external target).
type bare struct{ nodes []cluster.Node }

func (b bare) Nodes() []cluster.Node       { return b.nodes }
func (b bare) Close(context.Context) error { return nil }
func (b bare) Describe() map[string]string { return map[string]string{"runtime": "external"} }
func newBare() bare                        { return bare{nodes: []cluster.Node{{Name: "n1", Addr: "127.0.0.1:1"}}} }
func opts() Options                        { return Options{Interval: time.Second, Seed: 1} }
func errHas(err error, parts ...string) bool {
	if err == nil {
		return false
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			return false
		}
	}
	return true
}

func TestNewChecksNamesAgainstTheTarget(t *testing.T) {
	if _, err := New([]string{"kill"}, newBare(), opts()); !errHas(err, "kill", "external", "--nemesis-hook") {
		t.Fatalf("kill on an external target: %v", err)
	}
	if _, err := New([]string{"member"}, newBare(), opts()); !errHas(err, "member", "external") {
		t.Fatalf("member on an external target: %v", err)
	}
	for _, f := range []string{"power", "disk:eio"} {
		if _, err := New([]string{f}, newBare(), opts()); !errHas(err, strings.Split(f, ":")[0], "external", "FUSE") {
			t.Fatalf("%s on an external target: %v", f, err)
		}
	}
	if _, err := New([]string{"chaos"}, newBare(), opts()); !errHas(err, "chaos", "partition", "failover") {
		t.Fatalf("unknown name: %v", err)
	}
	if _, err := New([]string{"none", "kill"}, newBare(), opts()); err == nil {
		t.Fatal("none combined with kill must be an error")
	}
	if _, err := New([]string{"migrate"}, newBare(), Options{}); !errHas(err, "interval") {
		t.Fatalf("zero interval: %v", err)
	}
	if _, err := New([]string{"kill"}, newBare(), Options{Interval: time.Second, Hooks: map[string]string{"explode": "true"}}); !errHas(err, "explode") {
		t.Fatalf("unknown hook: %v", err)
	}
	n, err := New([]string{"all"}, newBare(), opts())
	if err != nil || !slices.Equal(n.Faults(), []string{"migrate", "failover"}) {
		t.Fatalf("all on an external target = %v, %v; want migrate, failover", n.Faults(), err)
	}
	n, err = New([]string{"all"}, newBare(), Options{Interval: time.Second, Hooks: map[string]string{"kill": "true", "clock": "true"}})
	if err != nil || !slices.Equal(n.Faults(), []string{"kill", "clock", "migrate", "failover"}) {
		t.Fatalf("all with kill and clock hooks = %v, %v", n.Faults(), err)
	}
	n, err = New([]string{"none"}, newBare(), opts())
	if err != nil || len(n.Faults()) != 0 {
		t.Fatalf("none = %v, %v", n.Faults(), err)
	}
	if err := n.Heal(context.Background(), &memRecorder{}); err != nil {
		t.Fatalf("heal of none: %v", err)
	}
	// Run with no faults returns when ctx ends.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := n.Run(ctx, &memRecorder{}); err != nil {
		t.Fatal(err)
	}
}

func TestHooksGetTheirEnvironment(t *testing.T) {
	out := t.TempDir() + "/hook.log"
	cmd := `echo "$REDLINE_FAULT $REDLINE_ACTION $REDLINE_NODE $REDLINE_ADDR $REDLINE_PEERS $REDLINE_CLIENTS $REDLINE_OFFSET_MS" >> ` + out
	b := bare{nodes: []cluster.Node{{Name: "n1", Addr: "127.0.0.1:1", Host: "127.0.0.1"}, {Name: "n2", Addr: "127.0.0.1:2"}}}
	n, err := New([]string{"kill", "partition", "clock"}, b, Options{Interval: time.Second,
		Hooks: map[string]string{"kill": cmd, "partition": cmd, "clock": cmd}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(n.bound["kill"].(*killFault).killer.Kill(ctx, "n1"))
	must(n.bound["partition"].(*partitionFault).parter.Cut(ctx, "n2", []string{"n1"}, true))
	must(n.bound["clock"].(*clockFault).clock.SetClockOffset(ctx, "n1", -1500*time.Millisecond))
	must(n.bound["partition"].(*partitionFault).parter.Heal(ctx))
	got := readFile(t, out)
	want := "kill kill n1 127.0.0.1:1   \npartition cut n2 127.0.0.1:2 n1 true \nclock clock n1 127.0.0.1:1   -1500\npartition heal     \n"
	if got != want {
		t.Fatalf("hook saw\n%q\nwant\n%q", got, want)
	}
	fail, _ := New([]string{"kill"}, b, Options{Interval: time.Second, Hooks: map[string]string{"kill": "echo boom; exit 3"}})
	if err := fail.bound["kill"].(*killFault).killer.Kill(ctx, "n1"); !errHas(err, "boom", "kill") {
		t.Fatalf("failing hook: %v", err)
	}
}

func TestFailoverSwapsRoles(t *testing.T) {
	c := startLocal(t, 6, 1)
	nem := newTestNemesis(t, []string{"failover"}, c)
	rec := &memRecorder{}
	ctx := context.Background()
	primaries := map[string]bool{}
	before, _ := views(c)
	for name, ls := range before {
		self, _ := cluster.Self(ls)
		primaries[name] = self.IsPrimary()
	}
	for i, mode := range Modes("failover") {
		if err := nem.waitConverged(ctx, 30*time.Second); err != nil {
			t.Fatal(err)
		}
		nem.fire(ctx, rec, Step{Fault: "failover", Mode: mode, Seed: uint64(i)})
		ops := rec.all()
		inv, done := ops[len(ops)-2], ops[len(ops)-1]
		if inv.Type != history.Invoke || inv.F != "start-failover" {
			t.Fatalf("%s: recorded %+v", mode, inv)
		}
		d := detailOf(t, done)
		if d["promoted"] != true {
			t.Fatalf("%s: %s", mode, done.DetailRaw())
		}
		replica, primary := inv.NodeList()[0], inv.NodeList()[1]
		// The replica is a primary and the old primary replicates it, on every node.
		eventually(t, 20*time.Second, func() string {
			vs, err := views(c)
			if err != nil {
				return err.Error()
			}
			var rid, pid string
			for _, nd := range c.Nodes() {
				self, _ := cluster.Self(vs[nd.Name])
				if nd.Name == replica {
					rid = self.ID
				}
				if nd.Name == primary {
					pid = self.ID
				}
			}
			for name, ls := range vs {
				for _, l := range ls {
					if l.ID == rid && !l.IsPrimary() {
						return fmt.Sprintf("%s: %s (old replica) is not a primary", name, replica)
					}
					if l.ID == pid && l.Master != rid {
						return fmt.Sprintf("%s: %s (old primary) does not replicate %s", name, primary, replica)
					}
				}
			}
			return ""
		})
	}

	// With RestoreRoles the end phase switches every failover back.
	nem.opts.RestoreRoles = true
	if err := nem.Heal(ctx, rec); err != nil {
		t.Fatalf("heal: %v", err)
	}
	if back := detailOf(t, rec.Last("heal", history.Info))["promoted_back"]; back == nil {
		t.Fatalf("heal promoted nobody back: %s", rec.Last("heal", history.Info).DetailRaw())
	}
	eventually(t, 20*time.Second, func() string {
		vs, err := views(c)
		if err != nil {
			return err.Error()
		}
		for name, ls := range vs {
			if self, _ := cluster.Self(ls); self.IsPrimary() != primaries[name] {
				return fmt.Sprintf("%s: primary %v, was %v before the failovers", name, self.IsPrimary(), primaries[name])
			}
		}
		return ""
	})
}

func TestMemberAddsAndRemovesAPrimary(t *testing.T) {
	c := startLocal(t, 6, 1)
	pc := procCluster{c}
	want := fillKeys(t, c, 2000)
	nem := newTestNemesis(t, []string{"member"}, pc)
	rec := &memRecorder{}
	ctx := context.Background()

	nem.fire(ctx, rec, Step{Fault: "member", Mode: "add", Seed: 3})
	done := rec.all()[len(rec.all())-1]
	d := detailOf(t, done)
	if e, ok := d["error"]; ok {
		t.Fatalf("add: %v", e)
	}
	added, id := d["added"].(string), d["id"].(string)
	if moved := d["slots_moved"].(float64); moved < 4000 || moved > 4200 {
		t.Fatalf("add moved %v slots, want about 16384/4", moved)
	}
	eventually(t, 20*time.Second, func() string {
		vs, err := views(c)
		if err != nil {
			return err.Error()
		}
		if len(vs) != 7 {
			return fmt.Sprintf("%d nodes", len(vs))
		}
		for name, ls := range vs {
			ok := false
			for _, l := range ls {
				if l.ID == id && l.IsPrimary() && l.NumSlots() > 4000 {
					ok = true
				}
			}
			if !ok {
				return fmt.Sprintf("%s does not see %s (%s) owning slots", name, added, id)
			}
		}
		return ""
	})
	if err := nem.waitConverged(ctx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	checkKeys(t, c, want)

	nem.fire(ctx, rec, Step{Fault: "member", Mode: "remove", Seed: 4})
	done = rec.all()[len(rec.all())-1]
	d = detailOf(t, done)
	if e, ok := d["error"]; ok {
		t.Fatalf("remove: %v", e)
	}
	removed, rid := d["removed"].(string), d["id"].(string)
	if _, err := c.node(removed); err == nil {
		t.Fatalf("%s is still a node of the cluster", removed)
	}
	if err := nem.waitConverged(ctx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	vs, err := views(c)
	if err != nil {
		t.Fatal(err)
	}
	for name, ls := range vs {
		for _, l := range ls {
			if l.ID == rid {
				t.Fatalf("%s still knows removed %s", name, removed)
			}
		}
		if cluster.Covered(ls) != cluster.SlotCount {
			t.Fatalf("%s sees %d slots covered", name, cluster.Covered(ls))
		}
	}
	checkKeys(t, c, want)
}

// TestKillAndPauseLocalProcesses drives kill and pause through the nemesis
// against redis-server processes: a killed node stops answering and comes
// back with its id and data; a paused one answers nothing until resumed.
func TestKillAndPauseLocalProcesses(t *testing.T) {
	c := startLocal(t, 6, 1)
	pc := procCluster{c}
	want := fillKeys(t, c, 500)
	nem := newTestNemesis(t, []string{"kill", "pause"}, pc)
	rec := &memRecorder{}
	ctx := context.Background()
	ping := func(addr string) error {
		cl := cluster.AdminClient(addr)
		defer cl.Close()
		pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer cancel()
		return cl.Ping(pctx).Err()
	}
	idOf := func(addr string) string {
		text, err := clusteradmin.ClusterNodesText(ctx, cluster.Credentials{}, addr)
		if err != nil {
			t.Fatal(err)
		}
		ls, _ := cluster.ParseNodes(text)
		self, _ := cluster.Self(ls)
		return self.ID
	}
	ids := map[string]string{}
	for _, nd := range c.Nodes() {
		ids[nd.Name] = idOf(nd.Addr)
	}
	for _, st := range []Step{{Fault: "kill", Mode: "primary", Seed: 1}, {Fault: "pause", Mode: "one", Seed: 2}} {
		a := nem.fire(ctx, rec, st)
		if a == nil || len(a.nodes) != 1 {
			t.Fatalf("%s: no action", st.Fault)
		}
		nd, _ := c.node(a.nodes[0])
		if err := ping(nd.addr()); err == nil {
			t.Fatalf("%s: %s still answers PING", st.Fault, nd.name)
		}
		if nem.Current() == "" {
			t.Fatal("Current is empty while a fault is in force")
		}
		if err := nem.finish(ctx, rec, a); err != nil {
			t.Fatal(err)
		}
		if err := ping(nd.addr()); err != nil {
			t.Fatalf("%s: %s does not answer after stop: %v", st.Fault, nd.name, err)
		}
		if nem.Current() != "" {
			t.Fatalf("Current = %q after stop", nem.Current())
		}
		if st.Fault == "kill" {
			if id := idOf(nd.addr()); id != ids[nd.name] {
				t.Fatalf("restarted %s has a new id %s", nd.name, id)
			}
		}
		// Let the restarted node finish its resync before the next fault:
		// a replica promoted mid-sync would lose data, as in Redis, and
		// this test is about each fault taking effect, not about that.
		if err := nem.waitConverged(ctx, 40*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if err := nem.waitConverged(ctx, 40*time.Second); err != nil {
		t.Fatal(err)
	}
	checkKeys(t, c, want)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestExternalClusterWithPauseHook drives an external cluster (no fault
// interfaces) through a --nemesis-hook that pauses redis-server processes.
func TestExternalClusterWithPauseHook(t *testing.T) {
	c := startLocal(t, 3, 0)
	nodes, err := cluster.ExternalNodes(c.addrs())
	if err != nil {
		t.Fatal(err)
	}
	ext := bare{nodes: nodes}
	if _, err := New([]string{"pause"}, ext, opts()); !errHas(err, "pause", "external", "--nemesis-hook pause") {
		t.Fatalf("pause without a hook: %v", err)
	}
	dir := t.TempDir()
	c.mu.Lock()
	for _, n := range c.nodes {
		if err := os.WriteFile(fmt.Sprintf("%s/%d.pid", dir, n.port), []byte(strconv.Itoa(n.cmd.Process.Pid)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c.mu.Unlock()
	hook := `pid=$(cat ` + dir + `/${REDLINE_ADDR##*:}.pid); case $REDLINE_ACTION in pause) kill -STOP $pid;; resume) kill -CONT $pid;; *) exit 1;; esac`
	nem, err := New([]string{"pause"}, ext, Options{Interval: time.Second, Seed: 1, NodeTimeout: testNodeTimeout,
		Hooks: map[string]string{"pause": hook}, Log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	rec := &memRecorder{}
	ctx := context.Background()
	a := nem.fire(ctx, rec, Step{Fault: "pause", Mode: "one", Seed: 1})
	if a == nil {
		t.Fatalf("pause did not start: %s", rec.all()[len(rec.all())-1].DetailRaw())
	}
	var target string
	for _, n := range ext.Nodes() {
		if n.Name == a.nodes[0] {
			target = n.Addr
		}
	}
	ping := func() error {
		cl := cluster.AdminClient(target)
		defer cl.Close()
		pctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		return cl.Ping(pctx).Err()
	}
	if ping() == nil {
		t.Fatalf("%s answers PING while paused by the hook", target)
	}
	if err := nem.Heal(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if err := ping(); err != nil {
		t.Fatalf("%s does not answer after heal: %v", target, err)
	}
}
