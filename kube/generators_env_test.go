package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/redline-dev/redline/harness/bench"
)

// TestBenchGeneratorsOnKubernetes runs `redline bench --runtime kubernetes
// --generators 3` against the real API server as the manifests'
// ServiceAccount (so the Role is exactly enough), the fake node acting
// out the cluster's pods and the generators' Indexed Job: the three
// generator pods' reports, read through pods/log, merge into one report
// whose totals are the sum of theirs; nothing is left behind.
func TestBenchGeneratorsOnKubernetes(t *testing.T) {
	s := needAPIServer(t)
	admin := kubernetes.NewForConfigOrDie(s.admin)
	ctx := context.Background()
	ns := "redline-gen"
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	applyManifests(t, admin, ns)
	bin := redlineBinary(t)
	fake := startFakeNode(t, s.admin, ns, map[string]string{"/redline": bin})
	user, err := s.userConfig("system:serviceaccount:"+ns+":redline", "system:serviceaccounts", "system:serviceaccounts:"+ns)
	if err != nil {
		t.Fatal(err)
	}
	results := t.TempDir()
	cmd := exec.Command(bin, "bench", "--runtime", "kubernetes", "--namespace", ns, "--kubeconfig", kubeconfigFile(t, user),
		"--nodes", "6", "--replicas", "1", "--generators", "3", "--rate", "1500", "--concurrency", "2", "--time-limit", "4s",
		"--keys", "300", "--node-timeout", "1s", "--seed", "5", "--results", results)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	t.Logf("redline bench:\n%s", out.String())
	if err != nil {
		t.Fatalf("redline bench: %v", err)
	}
	matches, _ := filepath.Glob(filepath.Join(results, "*", "*", "bench.json"))
	if len(matches) != 1 {
		t.Fatalf("bench.json: %v", matches)
	}
	b, _ := os.ReadFile(matches[0])
	var r bench.Result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Generators) != 3 || r.GeneratorsFailed != 0 {
		t.Fatalf("generators %+v", r.Generators)
	}
	var ok, failed int64
	for i, g := range r.Generators {
		if !strings.HasPrefix(g.Name, "pod ") || !strings.Contains(g.Name, "-gen-") {
			t.Errorf("generator %d ran as %q, not a Job's pod", i+1, g.Name)
		}
		ok += g.OK
		failed += g.Failed
	}
	if r.Counts.TotalOK() != ok || r.Counts.Failed() != failed || ok == 0 {
		t.Errorf("merged ok %d failed %d, the generators %d and %d", r.Counts.TotalOK(), r.Counts.Failed(), ok, failed)
	}
	if !strings.Contains(strings.Join(fake.Events(), "\n"), "started job pod") {
		t.Errorf("the fake never ran a job pod: %v", fake.Events())
	}
	lo := metav1.ListOptions{}
	if ps, _ := admin.CoreV1().Pods(ns).List(ctx, lo); len(ps.Items) > 0 {
		t.Errorf("%d pods left", len(ps.Items))
	}
	if js, _ := admin.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{LabelSelector: LabelManagedBy + "=" + managedBy}); len(js.Items) > 0 {
		t.Errorf("%d generator Jobs left", len(js.Items))
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(fake.Running()) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
}
