package docker

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
)

func TestProcessStart(t *testing.T) {
	if cluster.ProcessStart(os.Getpid()) == "" {
		t.Fatal("no start time for this process")
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if cluster.ProcessStart(cmd.Process.Pid) != "" {
		t.Fatal("a finished process has a start time")
	}
	me := ownerLabels()
	if orphaned(me) {
		t.Fatal("this process counts as gone")
	}
	other := map[string]string{labelOwnerPID: me[labelOwnerPID], labelOwnerHost: me[labelOwnerHost], labelOwnerBoot: "1"}
	if !orphaned(other) {
		t.Fatal("same pid, another start time (pid reuse) must count as gone")
	}
	other[labelOwnerHost] = "another-machine"
	if orphaned(other) {
		t.Fatal("another host's process is not ours to judge")
	}
	if orphaned(map[string]string{}) {
		t.Fatal("a cluster without owner (cluster up) is never an orphan")
	}
}

// A cluster whose owning process died (SIGKILL) is reaped by the next
// runtime; one whose owner lives is left alone.
func TestReapOrphans(t *testing.T) {
	ctx := context.Background()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	rtDead, err := New(Options{Log: t.Logf, Owned: true, Form: clusteradmin.Form})
	if err != nil {
		t.Fatalf("these tests need Docker: %v", err)
	}
	defer rtDead.Close()
	rtDead.owner[labelOwnerPID] = strconv.Itoa(dead.Process.Pid)
	orphan, err := rtDead.StartCluster(ctx, cluster.Spec{Target: "reference", Nodes: 3, NodeTimeout: time.Second, Name: "reap-orphan"})
	if err != nil {
		t.Fatal(err)
	}
	defer orphan.Close(context.Background())
	live, err := New(Options{Log: t.Logf, Owned: true, Form: clusteradmin.Form})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	kept, err := live.StartCluster(ctx, cluster.Spec{Target: "reference", Nodes: 3, NodeTimeout: time.Second, Name: "reap-live"})
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Close(context.Background())

	reaped, err := live.ReapOrphans(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(reaped) != 1 || !strings.Contains(reaped[0], orphan.Name()) || !strings.Contains(reaped[0], "is gone") {
		t.Fatalf("reaped %v, want only %s", reaped, orphan.Name())
	}
	if l := leftovers(t, "reap-orphan"); len(l) != 0 {
		t.Fatalf("orphan not removed: %v", l)
	}
	if l := leftovers(t, "reap-live"); len(l) == 0 {
		t.Fatal("the live process's cluster was removed")
	}
}
