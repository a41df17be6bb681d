package kube

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/redline-dev/redline/cluster"
)

// setOwner rewrites the owner annotations of a cluster's StatefulSet and
// Service, as another run would have written them.
func setOwner(t *testing.T, cs kubernetes.Interface, ns, name string, ann map[string]string) {
	t.Helper()
	ctx := context.Background()
	s, err := cs.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Annotations = ann
	if _, err := cs.AppsV1().StatefulSets(ns).Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc, err := cs.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc.Annotations = ann
	if _, err := cs.CoreV1().Services(ns).Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// Reap removes the clusters whose run is gone (a process that exited, a
// Job pod deleted or ended) and leaves those in use or not its to judge.
func TestReapRemovesOnlyDeadRunsClusters(t *testing.T) {
	live, _, rt := startTestCluster(t, "redline-reap", 1)
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(env.admin)
	ns := "redline-reap"
	start := func() string {
		t.Helper()
		c, err := rt.StartCluster(ctx, cluster.Spec{Nodes: 1, Name: "t"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close(context.Background()) })
		return c.Name()
	}
	// A process of this host that has exited.
	ended := exec.Command("true")
	if err := ended.Run(); err != nil {
		t.Fatal(err)
	}
	me := cluster.ThisProcess()
	deadProc := start()
	setOwner(t, cs, ns, deadProc, map[string]string{annOwnerHost: me.Host, annOwnerPID: strconv.Itoa(ended.Process.Pid), annOwnerStart: "1"})
	otherHost := start()
	setOwner(t, cs, ns, otherHost, map[string]string{annOwnerHost: "another-machine", annOwnerPID: "1", annOwnerStart: "1"})
	deletedPod := start()
	setOwner(t, cs, ns, deletedPod, map[string]string{annOwnerPod: "redline-job-gone", annOwnerUID: "0000"})
	// A Job pod that is running, then has ended.
	job, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "redline-job"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "redline", Image: "redline:latest", Command: []string{"/not-run-by-the-fake"}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	job.Status.Phase = corev1.PodRunning
	if job, err = cs.CoreV1().Pods(ns).UpdateStatus(ctx, job, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	ofJob := start()
	setOwner(t, cs, ns, ofJob, map[string]string{annOwnerPod: "redline-job", annOwnerUID: string(job.UID)})

	reaped, err := rt.Reap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Reaped{}
	for _, r := range reaped {
		got[r.Cluster] = r
	}
	for name, want := range map[string]string{live.Name(): "is running", otherHost: "cannot be judged", ofJob: "is running", deadProc: "", deletedPod: ""} {
		r, ok := got[name]
		switch {
		case !ok:
			t.Errorf("Reap did not look at cluster %s: %+v", name, reaped)
		case want == "" && (r.Left != "" || r.Removed == 0):
			t.Errorf("cluster %s of a dead run was left: %+v", name, r)
		case want != "" && !strings.Contains(r.Left, want):
			t.Errorf("cluster %s: %+v, want it left as %q", name, r, want)
		}
	}
	for _, name := range []string{deadProc, deletedPod} {
		if _, err := cs.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
			t.Errorf("StatefulSet %s of a dead run is still there", name)
		}
	}
	// The Job's pod ends: its cluster goes with the next reap.
	job.Status.Phase = corev1.PodSucceeded
	if _, err := cs.CoreV1().Pods(ns).UpdateStatus(ctx, job, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	reaped, err = rt.Reap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reaped {
		if r.Cluster == ofJob && (r.Left != "" || r.Removed == 0) {
			t.Errorf("the cluster of a Job pod that ended was left: %+v", r)
		}
		if r.Cluster == live.Name() && r.Left == "" {
			t.Errorf("the live cluster was reaped: %+v", r)
		}
	}
	_ = cs.CoreV1().Pods(ns).Delete(ctx, "redline-job", metav1.DeleteOptions{})
}
