package kube

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/redline-dev/redline/cluster"
)

// noForm leaves the nodes unformed: a test of a runtime's faults on single
// nodes needs them to answer, not to be one cluster.
func noForm(context.Context, cluster.Credentials, []string, int, func(string, ...any)) error {
	return nil
}

// startTestCluster starts nodes reference nodes in a namespace of their
// own, with Chaos Mesh's CRDs and the fake node behind them.
func startTestCluster(t *testing.T, ns string, nodes int, opts ...func(*Options)) (*ChaosCluster, *fakeNode, *Runtime) {
	t.Helper()
	s := needAPIServer(t)
	s.installChaosCRDs(t)
	ctx := context.Background()
	admin := kubernetes.NewForConfigOrDie(s.admin)
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	fake := startFakeNode(t, s.admin, ns, map[string]string{"/redline": redlineBinary(t)})
	o := Options{Namespace: ns, Config: s.admin, Form: noForm, Log: t.Logf, ChaosTimeout: 20 * time.Second, ReadyTimeout: time.Minute}
	for _, f := range opts {
		f(&o)
	}
	rt, err := New(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	c, err := rt.Start(ctx, cluster.Spec{Nodes: nodes, Replicas: min(1, nodes-1), NodeTimeout: time.Second, Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	cc, ok := c.(*ChaosCluster)
	if !ok {
		t.Fatalf("Start returned %T with Chaos Mesh installed", c)
	}
	t.Cleanup(func() {
		if err := cc.Close(context.Background()); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return cc, fake, rt
}

// Delay and loss are NetworkChaos objects the real API server accepts
// (its CRD schema checks the duration pattern), that the fake acts out on
// the pods' traffic, and that are gone when removed; a delay the
// Chaos Mesh daemon claims but did not make is caught by PING.
func TestDelayAndLossOnKubernetes(t *testing.T) {
	c, fake, rt := startTestCluster(t, "redline-shape", 2)
	ctx := context.Background()
	n1, _ := c.node("n1")
	if err := c.Delay(ctx, "n1", 300*time.Millisecond, 30*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	objs := rt.listChaos(ctx, LabelCluster+"="+c.Name())
	if len(objs) != 1 || !strings.Contains(objs[0], "-delay-n1-") {
		t.Fatalf("chaos objects after Delay: %v", objs)
	}
	// The node's replies come back late: a lower bound, which a slow
	// machine cannot break.
	if rtt, err := pingRTT(ctx, cluster.Credentials{}, n1.Addr, 5*time.Second); err != nil || rtt < 270*time.Millisecond {
		t.Fatalf("PING n1 under a 300ms delay: %s, %v", rtt, err)
	}
	// A second figure replaces the first.
	if err := c.Delay(ctx, "n1", 100*time.Millisecond, 0); err != nil {
		t.Fatal(err)
	}
	if objs := rt.listChaos(ctx, LabelCluster+"="+c.Name()); len(objs) != 1 {
		t.Fatalf("chaos objects after a second Delay: %v", objs)
	}
	if err := c.Delay(ctx, "n1", 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := c.Loss(ctx, "n2", 30); err != nil {
		t.Fatal(err)
	}
	if err := c.Loss(ctx, "n2", 0); err != nil {
		t.Fatal(err)
	}
	if objs := rt.listChaos(ctx, LabelCluster+"="+c.Name()); len(objs) != 0 {
		t.Fatalf("chaos objects left after removing delay and loss: %v", objs)
	}
	events := strings.Join(fake.Events(), "\n")
	for _, want := range []string{
		"injected networkchaos delay 300ms jitter 30ms on " + c.Name() + "-0",
		"recovered networkchaos delay on " + c.Name() + "-0",
		"injected networkchaos loss 30% on " + c.Name() + "-1",
		"recovered networkchaos loss on " + c.Name() + "-1",
	} {
		if !strings.Contains(events, want) {
			t.Errorf("the fake never %q; it did:\n%s", want, events)
		}
	}
	fake.Pretend("delay", true)
	err := c.Delay(ctx, "n2", 400*time.Millisecond, 0)
	if err == nil || !strings.Contains(err.Error(), "under half") {
		t.Errorf("a delay reported injected and not made: %v, want the PING evidence against it", err)
	}
	fake.Pretend("delay", false)
	if err := c.Delay(ctx, "n2", 0, 0); err != nil {
		t.Fatal(err)
	}
}

// A pause is an exec through the API server (pods/exec, upgraded to
// streams by the fake's kubelet) that stops the server process; the node
// then answers no PING until the resume. An exec that claims success
// without stopping anything is caught.
func TestPauseOnKubernetes(t *testing.T) {
	c, fake, _ := startTestCluster(t, "redline-pause", 2)
	ctx := context.Background()
	n1, _ := c.node("n1")
	if err := c.Pause(ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	if !frozen(ctx, cluster.Credentials{}, n1.Addr) {
		t.Error("n1 answers PING while paused")
	}
	if err := c.Resume(ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	events := strings.Join(fake.Events(), "\n")
	for _, want := range []string{"paused pod " + c.Name() + "-0 (SIGSTOP by exec)", "resumed pod " + c.Name() + "-0 (SIGCONT by exec)"} {
		if !strings.Contains(events, want) {
			t.Errorf("the fake never %q; it did:\n%s", want, events)
		}
	}
	fake.Pretend("signal", true)
	if err := c.Pause(ctx, "n2"); err == nil || !strings.Contains(err.Error(), "still answers PING") {
		t.Errorf("a pause whose exec stopped nothing: %v, want the PING evidence against it", err)
	}
	fake.Pretend("signal", false)
}

// With AnnounceHostname each node announces its DNS name under the
// headless Service, and says so in its own CLUSTER NODES line; it still
// announces its pod IP, which redline's admin connections dial.
func TestAnnounceHostnameOnKubernetes(t *testing.T) {
	c, _, _ := startTestCluster(t, "redline-hostname", 1, func(o *Options) { o.AnnounceHostname = true })
	ctx := context.Background()
	n1, _ := c.node("n1")
	cl := cluster.AdminClient(n1.Addr)
	defer cl.Close()
	text, err := cl.ClusterNodes(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	want := n1.Addr + "@16379," + c.Name() + "-0." + c.Name() + ".redline-hostname.svc "
	if !strings.Contains(text, want) {
		t.Errorf("CLUSTER NODES of n1 lacks %q:\n%s", want, text)
	}
	got, err := cl.ConfigGet(ctx, "cluster-preferred-endpoint-type").Result()
	if err != nil || got["cluster-preferred-endpoint-type"] != "hostname" {
		t.Errorf("cluster-preferred-endpoint-type = %v, %v; want hostname", got, err)
	}
	if d := c.Describe(); d["announce"] != "hostname" {
		t.Errorf("Describe says announce %q", d["announce"])
	}
}
