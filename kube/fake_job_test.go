package kube

// The fake's Job controller and the kubelet's part for a distributed
// bench's generators: an Indexed Job's pods <job>-<index>, each with
// JOB_COMPLETION_INDEX, run as local processes of the container's
// command; when a process exits its pod is Succeeded or Failed with the
// container's exit code, and its output stays served as the pod's log.

import (
	"context"
	"fmt"
	"os"

	"path/filepath"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// syncJobs creates the pods of Indexed Jobs, once per index: a pod that
// ended or was deleted is not made again (backoffLimitPerIndex 0).
func (f *fakeNode) syncJobs(ctx context.Context, have map[string]*corev1.Pod) error {
	js, err := f.cs.BatchV1().Jobs(f.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, j := range js.Items {
		if j.DeletionTimestamp != nil || j.Spec.CompletionMode == nil || *j.Spec.CompletionMode != batchv1.IndexedCompletion {
			continue
		}
		for i := 0; i < int(*j.Spec.Completions); i++ {
			name := j.Name + "-" + strconv.Itoa(i)
			f.mu.Lock()
			made := f.jobPods[name]
			f.jobPods[name] = true
			f.mu.Unlock()
			if made || have[name] != nil {
				continue
			}
			labels := map[string]string{labelJobName: j.Name}
			for k, v := range j.Spec.Template.Labels {
				labels[k] = v
			}
			yes := true
			p := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns, Labels: labels,
					Annotations:     map[string]string{annotationJobIndex: strconv.Itoa(i)},
					OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: j.Name, UID: j.UID, Controller: &yes}}},
				Spec: *j.Spec.Template.Spec.DeepCopy(),
			}
			for c := range p.Spec.Containers {
				p.Spec.Containers[c].Env = append(p.Spec.Containers[c].Env, corev1.EnvVar{Name: "JOB_COMPLETION_INDEX", Value: strconv.Itoa(i)})
			}
			p.Spec.NodeName = f.nodeName
			if _, err := f.cs.CoreV1().Pods(f.ns).Create(ctx, p, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("creating pod %s: %w", name, err)
			}
		}
	}
	return nil
}

// startJobPod runs a Job pod's container as a local process and reports
// the pod Running, then Succeeded or Failed with its exit code.
func (f *fakeNode) startJobPod(pod *corev1.Pod) error {
	c := pod.Spec.Containers[0]
	prog, ok := f.binary[c.Command[0]]
	if !ok {
		return fmt.Errorf("no local program for %q", c.Command[0])
	}
	p := &fakePod{name: pod.Name, dir: filepath.Join(f.dir, pod.Name), container: c.Name}
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return err
	}
	p.argv = append(append([]string{prog}, c.Command[1:]...), c.Args...)
	for _, e := range c.Env {
		p.env = append(p.env, e.Name+"="+e.Value)
	}
	if err := f.run(p); err != nil {
		return err
	}
	f.mu.Lock()
	f.pods[p.name] = p
	f.mu.Unlock()
	f.logf("started job pod %s", p.name)
	f.setJobPodStatus(p, corev1.PodRunning, nil)
	go func() {
		<-p.exited
		f.mu.Lock()
		code := p.cmd.ProcessState.ExitCode()
		f.mu.Unlock()
		phase := corev1.PodSucceeded
		if code != 0 {
			phase = corev1.PodFailed
		}
		reason := "Completed"
		if code != 0 {
			reason = "Error"
		}
		f.logf("job pod %s exited %d", p.name, code)
		f.setJobPodStatus(p, phase, &corev1.ContainerStateTerminated{ExitCode: int32(code), Reason: reason})
	}()
	return nil
}

func (f *fakeNode) setJobPodStatus(p *fakePod, phase corev1.PodPhase, end *corev1.ContainerStateTerminated) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for try := 0; try < 5; try++ {
		pod, err := f.cs.CoreV1().Pods(f.ns).Get(ctx, p.name, metav1.GetOptions{})
		if err != nil {
			return
		}
		now := metav1.Now()
		st := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}
		if end != nil {
			st = corev1.ContainerState{Terminated: end}
		}
		pod.Status = corev1.PodStatus{Phase: phase, HostIP: "127.0.0.1", StartTime: &now,
			ContainerStatuses: []corev1.ContainerStatus{{Name: p.container, Image: pod.Spec.Containers[0].Image, State: st}}}
		if _, err := f.cs.CoreV1().Pods(f.ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err == nil || !apierrors.IsConflict(err) {
			return
		}
	}
}

// envOf is the process environment of a pod's container.
func envOf(p *fakePod) []string {
	if len(p.env) == 0 {
		return nil
	}
	return append(os.Environ(), p.env...)
}
