package kube

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/redline-dev/redline/cluster"
)

// A distributed bench's generators (cluster.Generators) are the pods of
// one Indexed Job per round: completions and parallelism N, each pod
// `/redline bench-generator --config ...` of redline's image, its index
// from JOB_COMPLETION_INDEX. A failed index is not retried
// (backoffLimitPerIndex 0) and does not fail the others (maxFailedIndexes
// N): a generator that dies is named, not replaced by one that would
// start late. Each pod's report is its log (pods/log), read once it
// ended; then the Job and its pods are deleted. The Job carries the
// cluster's label, so Close and `redline kube down` remove it with the
// cluster; its pods carry LabelGeneratorsOf instead, so that they are
// never taken for the cluster's nodes.

// LabelGeneratorsOf marks a generator pod with its cluster's name.
const LabelGeneratorsOf = "redline.dev/generators-of"

// GeneratorContainer is the generator pods' container.
const GeneratorContainer = "generator"

// Indexed Jobs' pod metadata, as the Job controller sets it.
const (
	labelJobName         = "batch.kubernetes.io/job-name"
	annotationJobIndex   = "batch.kubernetes.io/job-completion-index"
	generatorsEndTimeout = 2 * time.Minute
)

// GeneratorLead: a pod is scheduled, its image pulled and started; 30 s
// leaves room for a cold node.
func (c *Cluster) GeneratorLead() time.Duration { return 30 * time.Second }

// RunGenerators runs the generators as an Indexed Job's pods and returns
// each one's log and end, in order.
func (c *Cluster) RunGenerators(ctx context.Context, runs []cluster.GeneratorRun) []cluster.GeneratorOutcome {
	outs := make([]cluster.GeneratorOutcome, len(runs))
	for i, r := range runs {
		outs[i] = cluster.GeneratorOutcome{Index: r.Index, Name: "no pod"}
	}
	if len(runs) == 0 {
		return outs
	}
	c.mu.Lock()
	c.seq++
	job := fmt.Sprintf("%s-gen-%d", c.plan.name, c.seq)
	c.mu.Unlock()
	ns := c.plan.namespace
	jobs := c.rt.cs.BatchV1().Jobs(ns)
	c.logf("kubernetes: creating Job %s/%s (%d generator pods)", ns, job, len(runs))
	if _, err := jobs.Create(ctx, c.plan.generatorJob(job, len(runs), runs[0].Args), metav1.CreateOptions{}); err != nil {
		for i := range outs {
			outs[i].Err = fmt.Errorf("kube: creating Job %s/%s (the Role needs batch jobs create): %w", ns, job, err)
		}
		return outs
	}
	defer c.deleteJob(context.WithoutCancel(ctx), job)
	pods := c.waitGenerators(ctx, job, len(runs), runs[0].Due)
	for i := range outs {
		p, ok := pods[i]
		if !ok {
			outs[i].Err = fmt.Errorf("kube: Job %s made no pod for index %d", job, i)
			continue
		}
		c.generatorOutcome(ctx, p, &outs[i])
	}
	return outs
}

// generatorJob is the Job of one round of generators.
func (p plan) generatorJob(name string, n int, args []string) *batchv1.Job {
	image := p.image
	if p.spec.Target != "reference" {
		image = DefaultImage("reference") // the generators are redline's own binary
	}
	count := int32(n)
	indexed := batchv1.IndexedCompletion
	perIndex := int32(0)
	never := corev1.RestartPolicyNever
	meta := p.meta(name)
	return &batchv1.Job{
		ObjectMeta: meta,
		Spec: batchv1.JobSpec{
			Completions: &count, Parallelism: &count, CompletionMode: &indexed,
			BackoffLimitPerIndex: &perIndex, MaxFailedIndexes: &count,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{LabelManagedBy: managedBy, LabelGeneratorsOf: p.name}},
				Spec: corev1.PodSpec{
					RestartPolicy: never,
					Containers: []corev1.Container{{
						Name: GeneratorContainer, Image: image, Command: []string{"/redline"}, Args: args,
					}},
				},
			},
		},
	}
}

// waitGenerators waits until every index's pod has ended (or ctx ends, or
// the generators outlive their run by generatorsEndTimeout) and returns
// the last pod seen of each index (0-based).
func (c *Cluster) waitGenerators(ctx context.Context, job string, n int, due time.Time) map[int]*corev1.Pod {
	ns := c.plan.namespace
	seen := map[int]*corev1.Pod{}
	var deadline time.Time
	if !due.IsZero() {
		// A pod never scheduled, or hung, must not hang the run.
		deadline = due.Add(generatorsEndTimeout)
	}
	for {
		l, err := c.rt.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: labelJobName + "=" + job})
		if err == nil {
			for i := range l.Items {
				p := &l.Items[i]
				idx, err := strconv.Atoi(p.Annotations[annotationJobIndex])
				if err != nil || idx < 0 || idx >= n {
					continue
				}
				seen[idx] = p
			}
		}
		ended := 0
		for _, p := range seen {
			if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				ended++
			}
		}
		if ended == n || ctx.Err() != nil {
			return seen
		}
		// Once one generator ended, the others are due within moments:
		// they ran the same duration from the same start.
		if first := time.Now().Add(generatorsEndTimeout); ended > 0 && (deadline.IsZero() || first.Before(deadline)) {
			deadline = first
		}
		if !deadline.IsZero() && time.Now().After(deadline) {
			c.logf("kubernetes: %d of %d generator pods of Job %s have not ended by their due time", n-ended, n, job)
			return seen
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// generatorOutcome fills out from the pod: its log and how it ended.
func (c *Cluster) generatorOutcome(ctx context.Context, p *corev1.Pod, out *cluster.GeneratorOutcome) {
	out.Name = "pod " + p.Name
	switch p.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed:
		out.Exited = true
	default:
		out.Reason = "still " + string(p.Status.Phase)
		if p.Status.Reason != "" {
			out.Reason += " (" + p.Status.Reason + ")"
		}
	}
	for _, s := range p.Status.ContainerStatuses {
		if s.Name == GeneratorContainer && s.State.Terminated != nil {
			t := s.State.Terminated
			out.Exited, out.ExitCode = true, int(t.ExitCode)
			if t.Reason != "" && t.Reason != "Completed" {
				out.Reason = t.Reason
			}
		}
	}
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	rc, err := c.rt.cs.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: GeneratorContainer}).Stream(lctx)
	if err != nil {
		out.Err = fmt.Errorf("kube: the log of generator pod %s (the Role needs pods/log): %w", p.Name, err)
		return
	}
	defer rc.Close()
	var b bytes.Buffer
	// A pod's log holds its report and its log lines, told apart by the
	// report's marker; 256 MB is over an hour of the largest reports.
	if _, err := io.Copy(&b, io.LimitReader(rc, 256<<20)); err != nil {
		out.Err = fmt.Errorf("kube: reading the log of generator pod %s: %w", p.Name, err)
	}
	out.Output = b.Bytes()
}

// deleteJob deletes a round's Job and its pods (by name too: the
// garbage collector may be slow, or, in a test's API server, absent).
func (c *Cluster) deleteJob(ctx context.Context, job string) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	ns := c.plan.namespace
	bg := metav1.DeletePropagationBackground
	if err := c.rt.cs.BatchV1().Jobs(ns).Delete(ctx, job, metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil && !apierrors.IsNotFound(err) {
		c.logf("kubernetes: deleting Job %s: %v", job, err)
	}
	l, err := c.rt.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: labelJobName + "=" + job})
	if err != nil {
		return
	}
	for _, p := range l.Items {
		if err := c.rt.cs.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			c.logf("kubernetes: deleting generator pod %s: %v", p.Name, err)
		}
	}
}

var _ cluster.Generators = (*Cluster)(nil)

// generatorSelector turns a selector of clusters (LabelCluster=name, or
// every redline object) into one of their generator pods.
func generatorSelector(sel string) string {
	if name, ok := strings.CutPrefix(sel, LabelCluster+"="); ok {
		return LabelGeneratorsOf + "=" + name
	}
	return LabelGeneratorsOf + "," + sel
}
