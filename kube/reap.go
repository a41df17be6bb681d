package kube

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/redline-dev/redline/cluster"
)

// Who made a cluster, on its StatefulSet and Service, so that a later
// redline can tell a cluster whose run died (a SIGKILLed process, a Job
// pod deleted or evicted mid-run: nothing tears it down) from one in use.
// A run in a pod (the Job of `redline kube manifests`) is its pod: gone
// once the pod is gone, is another pod of the same name (its UID), or has
// ended (its one container exited). A run elsewhere is its process, as the
// docker runtime judges one: gone once no process of its pid and start
// time is left on its host; another host's is not judged.
const (
	annOwnerPod   = "redline.dev/owner-pod"     // the pod's name, in the namespace
	annOwnerUID   = "redline.dev/owner-pod-uid" // and its UID
	annOwnerHost  = "redline.dev/owner-host"    // outside a pod: the process's host,
	annOwnerPID   = "redline.dev/owner-pid"     // pid
	annOwnerStart = "redline.dev/owner-start"   // its start time, against the pid's reuse
)

// The environment the Job's pod gives redline (the downward API), by which
// it knows itself as the owner of what it creates.
const (
	EnvPodName      = "REDLINE_POD_NAME"
	EnvPodNamespace = "REDLINE_POD_NAMESPACE"
	EnvPodUID       = "REDLINE_POD_UID"
)

// ownerAnnotations identify this run: its pod when it runs in one of the
// namespace (the Job), else its process.
func (r *Runtime) ownerAnnotations() map[string]string {
	if name, uid := os.Getenv(EnvPodName), os.Getenv(EnvPodUID); name != "" && uid != "" && os.Getenv(EnvPodNamespace) == r.opts.Namespace {
		return map[string]string{annOwnerPod: name, annOwnerUID: uid}
	}
	p := cluster.ThisProcess()
	return map[string]string{annOwnerHost: p.Host, annOwnerPID: strconv.Itoa(p.PID), annOwnerStart: p.Start}
}

// ownerGone judges the owner that annotations name: gone, and whether it
// could be judged at all (false: no owner named, another host's process,
// or the API server did not say).
func (r *Runtime) ownerGone(ctx context.Context, ann map[string]string) (gone, known bool, who string) {
	if pod := ann[annOwnerPod]; pod != "" {
		who = "pod " + pod
		p, err := r.cs.CoreV1().Pods(r.opts.Namespace).Get(ctx, pod, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return true, true, who + " (deleted)"
		case err != nil:
			return false, false, who
		case string(p.UID) != ann[annOwnerUID]:
			return true, true, who + " (another pod of that name now)"
		case p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed:
			return true, true, who + " (" + string(p.Status.Phase) + ")"
		}
		return false, true, who
	}
	pid, err := strconv.Atoi(ann[annOwnerPID])
	if err != nil {
		return false, false, ""
	}
	who = fmt.Sprintf("pid %d on %s", pid, ann[annOwnerHost])
	gone, known = cluster.Process{Host: ann[annOwnerHost], PID: pid, Start: ann[annOwnerStart]}.Gone()
	return gone, known, who
}

// Reaped is what Reap did or left for one cluster.
type Reaped struct {
	Cluster string
	Owner   string // who made it, as ownerGone says
	Removed int    // objects removed (0: left)
	Left    string // why it was left, when it was
}

// Reap removes the objects of every redline cluster in the namespace
// whose run is gone (its StatefulSet's or Service's owner annotations),
// and reports each cluster it looked at. A run in use, or one it cannot
// judge, is left and said so.
func (r *Runtime) Reap(ctx context.Context) ([]Reaped, error) {
	lo := metav1.ListOptions{LabelSelector: labels.Set{LabelManagedBy: managedBy}.String()}
	owners := map[string]map[string]string{} // cluster -> annotations
	ss, err := r.cs.AppsV1().StatefulSets(r.opts.Namespace).List(ctx, lo)
	if err != nil {
		return nil, fmt.Errorf("kube: listing StatefulSets: %w", err)
	}
	for _, s := range ss.Items {
		owners[s.Labels[LabelCluster]] = s.Annotations
	}
	// A Service outlives a StatefulSet whose removal was cut short.
	svcs, err := r.cs.CoreV1().Services(r.opts.Namespace).List(ctx, lo)
	if err != nil {
		return nil, fmt.Errorf("kube: listing Services: %w", err)
	}
	for _, s := range svcs.Items {
		if _, ok := owners[s.Labels[LabelCluster]]; !ok {
			owners[s.Labels[LabelCluster]] = s.Annotations
		}
	}
	names := make([]string, 0, len(owners))
	for name := range owners {
		if name != "" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	var out []Reaped
	for _, name := range names {
		gone, known, who := r.ownerGone(ctx, owners[name])
		rp := Reaped{Cluster: name, Owner: who}
		switch {
		case who == "":
			rp.Left = "it names no owner"
		case !known:
			rp.Left = "its owner, " + who + ", cannot be judged from here"
		case !gone:
			rp.Left = "its owner, " + who + ", is running"
		default:
			n, err := r.removeAll(ctx, LabelCluster+"="+name)
			rp.Removed = n
			if err != nil {
				return append(out, rp), err
			}
		}
		out = append(out, rp)
	}
	return out, nil
}
