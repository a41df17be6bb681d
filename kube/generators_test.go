package kube

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/redline-dev/redline/cluster"
)

// RunGenerators makes one Indexed Job whose failed index neither retries
// nor fails the others, reads each index's pod's end (an OOMKilled one
// among them), and deletes the Job and its pods. The Job controller and
// the kubelet are acted out on the fake clientset: it creates the pods as
// the controller would and ends them.
func TestRunGeneratorsAsAnIndexedJob(t *testing.T) {
	cs := fake.NewSimpleClientset()
	c := &Cluster{rt: &Runtime{cs: cs}, logf: t.Logf, plan: plan{name: "rl-t-1", namespace: "ns", image: "redline:test",
		spec: cluster.Spec{Target: "reference"}, labels: map[string]string{LabelCluster: "rl-t-1", LabelManagedBy: managedBy}}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var job *batchv1.Job
	go func() {
		for ctx.Err() == nil {
			l, _ := cs.BatchV1().Jobs("ns").List(ctx, metav1.ListOptions{})
			if len(l.Items) == 1 {
				job = &l.Items[0]
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		for i := 0; i < 3; i++ {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: job.Name + "-" + strconv.Itoa(i) + "-x", Namespace: "ns",
				Labels:      map[string]string{labelJobName: job.Name, LabelGeneratorsOf: "rl-t-1"},
				Annotations: map[string]string{annotationJobIndex: strconv.Itoa(i)}},
				Status: corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: []corev1.ContainerStatus{{Name: GeneratorContainer,
					State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}}}}}
			if i == 1 {
				p.Status.Phase = corev1.PodFailed
				p.Status.ContainerStatuses[0].State.Terminated = &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}
			}
			if _, err := cs.CoreV1().Pods("ns").Create(ctx, p, metav1.CreateOptions{}); err != nil {
				t.Error(err)
			}
		}
	}()
	args := []string{"bench-generator", "--config", "{}"}
	outs := c.RunGenerators(ctx, []cluster.GeneratorRun{{Index: 1, Args: args}, {Index: 2, Args: args}, {Index: 3, Args: args}})
	if job == nil {
		t.Fatal("no Job was created")
	}
	s := job.Spec
	if *s.Completions != 3 || *s.Parallelism != 3 || *s.CompletionMode != batchv1.IndexedCompletion || *s.BackoffLimitPerIndex != 0 || *s.MaxFailedIndexes != 3 {
		t.Errorf("Job spec: completions %d parallelism %d mode %s backoffLimitPerIndex %d maxFailedIndexes %d",
			*s.Completions, *s.Parallelism, *s.CompletionMode, *s.BackoffLimitPerIndex, *s.MaxFailedIndexes)
	}
	ct := s.Template.Spec.Containers[0]
	if ct.Image != "redline:test" || strings.Join(ct.Command, " ") != "/redline" || strings.Join(ct.Args, " ") != strings.Join(args, " ") ||
		s.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("generator container %+v", ct)
	}
	if _, ok := s.Template.Labels[LabelCluster]; ok {
		t.Error("generator pods carry the cluster's label: they would be taken for its nodes")
	}
	if job.Labels[LabelCluster] != "rl-t-1" {
		t.Error("the Job lacks the cluster's label: Close would not remove it")
	}
	for i, o := range outs {
		if o.Index != i+1 || !o.Exited || !strings.HasPrefix(o.Name, "pod "+job.Name+"-"+strconv.Itoa(i)) {
			t.Errorf("outcome %d: %+v", i+1, o)
		}
	}
	if outs[1].ExitCode != 137 || outs[1].Reason != "OOMKilled" || outs[0].ExitCode != 0 || outs[0].Reason != "" {
		t.Errorf("exits: %+v / %+v", outs[0], outs[1])
	}
	if jl, _ := cs.BatchV1().Jobs("ns").List(ctx, metav1.ListOptions{}); len(jl.Items) != 0 {
		t.Errorf("the Job is left: %d", len(jl.Items))
	}
	if pl, _ := cs.CoreV1().Pods("ns").List(ctx, metav1.ListOptions{}); len(pl.Items) != 0 {
		t.Errorf("%d generator pods are left", len(pl.Items))
	}
}

// The redis target's generators run redline's image, not the nodes'.
func TestGeneratorJobImage(t *testing.T) {
	p := plan{name: "x", namespace: "ns", image: "redis:7.0", spec: cluster.Spec{Target: "redis"}}
	if got := p.generatorJob("x-gen-1", 2, nil).Spec.Template.Spec.Containers[0].Image; got != DefaultImage("reference") {
		t.Errorf("image %q, want %q", got, DefaultImage("reference"))
	}
}
