package main

import (
	"bytes"
	"strings"
	"testing"
)

// Bad combinations of the kubernetes flags fail before anything starts,
// each naming the flag to change.
func TestRunKubernetesBadFlags(t *testing.T) {
	cases := []struct {
		args []string
		says string
	}{
		{[]string{"run", "--runtime", "kubernetes"}, "--namespace"},
		{[]string{"run", "--runtime", "k8s", "--namespace", "x"}, "--runtime"},
		{[]string{"run", "--namespace", "x"}, "--runtime kubernetes"},
		{[]string{"run", "--selector", "app=redis"}, "--runtime kubernetes"},
		{[]string{"run", "--runtime", "kubernetes", "--namespace", "x", "--addrs", "127.0.0.1:7000"}, "--selector"},
		{[]string{"run", "--runtime", "kubernetes", "--namespace", "x", "--selector", "app=redis", "--target", "redis"}, "--target"},
		{[]string{"run", "--runtime", "kubernetes", "--namespace", "x", "--partition-clients"}, "--partition-clients"},
		{[]string{"kube", "manifests"}, "--namespace"},
		{[]string{"kube", "down"}, "--namespace"},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		args := c.args
		if args[0] == "run" {
			args = append(args, "--results", t.TempDir())
		}
		code := run(args, &out, &errb)
		if code != exitBadArgs || !strings.Contains(errb.String(), c.says) {
			t.Errorf("%v: exit %d (%q), want %d naming %s", c.args, code, errb.String(), exitBadArgs, c.says)
		}
	}
}

// The manifests name the namespace everywhere and give the Role nothing
// beyond pods (and an exec into them, for a pause), services,
// statefulsets and Chaos Mesh's kinds.
func TestKubeManifests(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"kube", "manifests", "--namespace", "redis-test", "--", "--nemesis", "kill"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	y := out.String()
	for _, want := range []string{"kind: ServiceAccount", "kind: Role\n", "kind: RoleBinding", "kind: PersistentVolumeClaim", "kind: Job",
		"- --runtime\n", "- kubernetes\n", "- redis-test\n", "- --nemesis\n", "namespace: redis-test", "- networkchaos", "- statefulsets", "- pods/exec"} {
		if !strings.Contains(y, want) {
			t.Errorf("manifests lack %q:\n%s", want, y)
		}
	}
	for _, never := range []string{"ClusterRole", "secrets", "pods/attach", "'*'"} {
		if strings.Contains(y, never) {
			t.Errorf("manifests hold %q:\n%s", never, y)
		}
	}
	// A load test from generator pods: the Job runs bench, the Role may make Jobs.
	out.Reset()
	if code := run([]string{"kube", "manifests", "--namespace", "redis-test", "--", "bench", "--generators", "4", "--rate", "1000"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if y := out.String(); !strings.Contains(y, "- args:\n        - bench\n        - --runtime\n") || !strings.Contains(y, "- jobs\n") || !strings.Contains(y, "- --generators\n") {
		t.Errorf("bench manifests:\n%s", y)
	}
}
