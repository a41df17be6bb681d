package kube

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/history"
)

func TestNodeAndPodNames(t *testing.T) {
	if got := podName("rl-x-abc", "n1"); got != "rl-x-abc-0" {
		t.Errorf("podName n1 = %s", got)
	}
	if got, ok := nodeName("rl-x-abc", "rl-x-abc-11"); !ok || got != "n12" {
		t.Errorf("nodeName = %s %v", got, ok)
	}
	if _, ok := nodeName("rl-x-abc", "other-0"); ok {
		t.Error("nodeName took a pod of another StatefulSet")
	}
	name := clusterName("Reference-Register+Counter-partition:isolate-one-" + strings.Repeat("x", 80))
	if len(name) > 52 || strings.ContainsAny(name, "+:_.") || name != strings.ToLower(name) {
		t.Errorf("clusterName %q is no short DNS label", name)
	}
}

// A cluster without Chaos Mesh offers no fault that needs it: the nemesis
// then says the target cannot kill, partition, delay or skew, as for
// --addrs. A pause is an exec and needs no Chaos Mesh.
func TestWithoutChaosMeshNoFaults(t *testing.T) {
	var c cluster.Cluster = &Cluster{}
	if _, ok := c.(cluster.Killer); ok {
		t.Error("a Cluster without Chaos Mesh is a Killer")
	}
	if _, ok := c.(cluster.Partitioner); ok {
		t.Error("a Cluster without Chaos Mesh is a Partitioner")
	}
	if _, ok := c.(cluster.Pauser); !ok {
		t.Error("a Cluster without Chaos Mesh cannot pause: a pause needs only an exec")
	}
	if _, ok := c.(cluster.Shaper); ok {
		t.Error("a Cluster without Chaos Mesh is a Shaper")
	}
	var cc cluster.Cluster = &ChaosCluster{Cluster: &Cluster{}}
	for _, ok := range []bool{is[cluster.Killer](cc), is[cluster.Partitioner](cc), is[cluster.Shaper](cc), is[cluster.Clock](cc)} {
		if !ok {
			t.Error("a ChaosCluster lacks a fault")
		}
	}
}

func is[T any](v any) bool { _, ok := v.(T); return ok }

// The manifests are accepted by a real API server, and the Role is all a
// run needs: TestRunOnKubernetes runs as the ServiceAccount bound to it.
func applyManifests(t *testing.T, cs kubernetes.Interface, ns string) {
	t.Helper()
	ctx := context.Background()
	for _, obj := range Manifests(ManifestOptions{Namespace: ns, Args: []string{"--nemesis", "partition,kill"}}) {
		var err error
		switch o := obj.(type) {
		case *corev1.ServiceAccount:
			_, err = cs.CoreV1().ServiceAccounts(ns).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.Role:
			_, err = cs.RbacV1().Roles(ns).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.RoleBinding:
			_, err = cs.RbacV1().RoleBindings(ns).Create(ctx, o, metav1.CreateOptions{})
		case *corev1.PersistentVolumeClaim:
			_, err = cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, o, metav1.CreateOptions{})
		case *batchv1.Job:
			_, err = cs.BatchV1().Jobs(ns).Create(ctx, o, metav1.CreateOptions{})
		default:
			t.Fatalf("unexpected %T in the manifests", obj)
		}
		if err != nil {
			t.Fatalf("the API server refused %T of the manifests: %v", obj, err)
		}
	}
}

func redlineBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("REDLINE_BINARY"); p != "" {
		return p
	}
	out := filepath.Join(t.TempDir(), "redline")
	cmd := exec.Command("go", "build", "-o", out, "../cmd/redline")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building redline: %v\n%s", err, b)
	}
	return out
}

// TestRunOnKubernetes runs `redline run --runtime kubernetes` against the
// real API server with the fake node: a 6-node reference cluster formed
// from local processes behind its pods, a NetworkChaos partition, delay and
// loss, a PodChaos container kill and a pause (an exec of SIGSTOP) applied,
// acted out, and removed; every connection authenticated as the run's ACL
// user (--user); the servers' logs in the results; nothing of the run is
// left in the namespace.
func TestRunOnKubernetes(t *testing.T) {
	s := needAPIServer(t)
	admin := kubernetes.NewForConfigOrDie(s.admin)
	ctx := context.Background()
	// Before the CRDs: the runtime sees no Chaos Mesh.
	ns := "redline-run"
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rt, err := New(ctx, Options{Namespace: ns, Config: s.admin})
	if err != nil {
		t.Fatal(err)
	}
	if len(rt.Chaos()) != 0 {
		t.Fatalf("Chaos Mesh kinds served before their CRDs were installed: %v", rt.Chaos())
	}
	s.installChaosCRDs(t)
	applyManifests(t, admin, ns)

	bin := redlineBinary(t)
	fake := startFakeNode(t, s.admin, ns, map[string]string{"/redline": bin, "redis-server": "/usr/bin/redis-server"})
	user, err := s.userConfig("system:serviceaccount:"+ns+":redline", "system:serviceaccounts", "system:serviceaccounts:"+ns)
	if err != nil {
		t.Fatal(err)
	}
	kc := kubeconfigFile(t, user)
	results := t.TempDir()
	cmd := exec.Command(bin, "run", "--runtime", "kubernetes", "--namespace", ns, "--kubeconfig", kc,
		"--nodes", "6", "--replicas", "1", "--workload", "register",
		"--nemesis", "partition:isolate-one,kill:one,delay:one,loss:one,pause:one", "--nemesis-interval", "3s", "--time-limit", "15s",
		"--node-timeout", "1s", "--seed", "11", "--results", results, "--user", "redline-run")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	t0 := time.Now()
	err = cmd.Run()
	t.Logf("redline run took %s:\n%s", time.Since(t0).Round(time.Millisecond), out.String())
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	// 0, 1, 2 are verdicts (Redis Cluster may lose writes under a
	// partition); 253-255 are redline or its environment failing.
	if code > 2 {
		t.Fatalf("redline run exited %d", code)
	}
	events := strings.Join(fake.Events(), "\n")
	for _, want := range []string{"injected networkchaos partition", "recovered networkchaos partition", "killed the container of pod", "injected podchaos container-kill",
		"injected networkchaos delay", "recovered networkchaos delay", "injected networkchaos loss", "recovered networkchaos loss",
		"(SIGSTOP by exec)", "(SIGCONT by exec)"} {
		if !strings.Contains(events, want) {
			t.Errorf("the fake never %q; it did:\n%s", want, events)
		}
	}
	matches, _ := filepath.Glob(filepath.Join(results, "*", "*", history.FileName))
	if len(matches) == 0 {
		t.Fatalf("no history in %s", results)
	}
	runDir := filepath.Dir(matches[0])
	hist := historyText(t, matches[0])
	// Every node's server log came through pods/log; the killed one's
	// holds its container before the restart too.
	logs, _ := filepath.Glob(filepath.Join(runDir, "nodes", "*", "server.log"))
	restarted := 0
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		if len(b) == 0 {
			t.Errorf("%s is empty", l)
		}
		if bytes.Contains(b, []byte("before its restart 1")) {
			restarted++
		}
	}
	if len(logs) != 6 || restarted == 0 {
		t.Errorf("%d server logs in %s/nodes, %d with a killed container's log; want 6, 1 or more", len(logs), runDir, restarted)
	}
	for _, f := range []string{`"f":"start-partition"`, `"f":"start-kill"`, `"f":"start-delay"`, `"f":"start-loss"`, `"f":"start-pause"`} {
		if !bytes.Contains(hist, []byte(f)) {
			t.Errorf("history has no %s entry", f)
		}
	}
	// Nothing of the run is left: no pod, StatefulSet, Service or chaos
	// object, and no server process.
	lo := metav1.ListOptions{}
	if ps, _ := admin.CoreV1().Pods(ns).List(ctx, lo); len(ps.Items) > 0 {
		t.Errorf("%d pods left", len(ps.Items))
	}
	if ss, _ := admin.AppsV1().StatefulSets(ns).List(ctx, lo); len(ss.Items) > 0 {
		t.Errorf("%d StatefulSets left", len(ss.Items))
	}
	if svcs, _ := admin.CoreV1().Services(ns).List(ctx, lo); len(svcs.Items) > 0 {
		t.Errorf("%d Services left", len(svcs.Items))
	}
	rt, err = New(ctx, Options{Namespace: ns, Config: s.admin})
	if err != nil {
		t.Fatal(err)
	}
	if left := rt.listChaos(ctx, ""); len(left) > 0 {
		t.Errorf("chaos objects left: %v", left)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(fake.Running()) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if r := fake.Running(); len(r) > 0 {
		t.Errorf("server processes still run for pods %v", r)
	}
}

// historyText is the history file at path as JSON lines.
func historyText(t *testing.T, path string) []byte {
	t.Helper()
	l, err := history.OpenLines(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	b, err := io.ReadAll(l)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
