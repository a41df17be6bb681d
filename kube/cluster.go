package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/redline-dev/redline/cluster"
)

// Cluster is a StatefulSet's pods formed into one Redis Cluster. It
// implements cluster.Cluster and Describer; ChaosCluster adds the faults.
type Cluster struct {
	rt   *Runtime
	plan plan
	logf func(string, ...any)

	mu     sync.Mutex
	nodes  []cluster.Node // sorted by name
	closed bool
	seq    int // numbers the chaos objects
}

// Start creates the Service and StatefulSet, waits for every pod to be
// Ready and forms a cluster of them. With Chaos Mesh installed the
// cluster.Cluster it returns is a *ChaosCluster, else a *Cluster. After a
// failed start nothing it created is left behind.
func (r *Runtime) Start(ctx context.Context, spec cluster.Spec) (cluster.Cluster, error) {
	c, err := r.StartCluster(ctx, spec)
	if err != nil {
		return nil, err
	}
	if len(r.chaos) > 0 {
		return &ChaosCluster{Cluster: c}, nil
	}
	return c, nil
}

// StartCluster is Start returning the cluster without its faults.
func (r *Runtime) StartCluster(ctx context.Context, spec cluster.Spec) (*Cluster, error) {
	if r.opts.Form == nil {
		return nil, errors.New("kube: Options.Form is nil: pass clusteradmin.Form to kube.New")
	}
	if spec.Target == "" {
		spec.Target = "reference"
	}
	if spec.Target != "reference" && spec.Target != "redis" {
		return nil, fmt.Errorf("kube: unknown target %q (want redis or reference)", spec.Target)
	}
	if spec.Nodes < 1 || spec.Replicas < 0 || spec.Nodes/(spec.Replicas+1) < 1 {
		return nil, fmt.Errorf("kube: %d nodes cannot hold a primary with %d replicas each", spec.Nodes, spec.Replicas)
	}
	if spec.ServerBinary != "" {
		return nil, errors.New("kube: --server-binary packs a binary into a local image; on Kubernetes push an image and pass --image")
	}
	if spec.NodeTimeout <= 0 {
		spec.NodeTimeout = 2 * time.Second
	}
	logf := spec.Log
	if logf == nil {
		logf = r.opts.Log
	}
	image := spec.Image
	if image == "" {
		image = r.opts.Image
	}
	if image == "" {
		image = DefaultImage(spec.Target)
	}
	name := clusterName(spec.Name)
	p := plan{name: name, namespace: r.opts.Namespace, spec: spec, image: image, hostnames: r.opts.AnnounceHostname, owner: r.ownerAnnotations(), labels: map[string]string{
		LabelManagedBy: managedBy, LabelCluster: name, LabelOwner: r.opts.Owner, LabelTarget: spec.Target,
	}}
	c := &Cluster{rt: r, plan: p, logf: logf}
	if err := c.start(ctx); err != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		if cerr := c.Close(cctx); cerr != nil {
			err = fmt.Errorf("%w (and cleaning up failed: %v; run `redline kube down --namespace %s`)", err, cerr, p.namespace)
		}
		return nil, err
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context) error {
	p := c.plan
	ns := p.namespace
	c.logf("kubernetes: creating Service and StatefulSet %s/%s (%d pods of %s)", ns, p.name, p.spec.Nodes, p.image)
	if _, err := c.rt.cs.CoreV1().Services(ns).Create(ctx, p.service(), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("kube: creating Service %s/%s: %w", ns, p.name, err)
	}
	if _, err := c.rt.cs.AppsV1().StatefulSets(ns).Create(ctx, p.statefulSet(), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("kube: creating StatefulSet %s/%s: %w", ns, p.name, err)
	}
	t0 := time.Now()
	nodes, err := c.waitPods(ctx, p.spec.Nodes, c.rt.opts.ReadyTimeout)
	if err != nil {
		return err
	}
	c.logf("kubernetes: %d pods Ready after %s", len(nodes), since(t0))
	c.mu.Lock()
	c.nodes = nodes
	c.mu.Unlock()
	addrs := make([]string, len(nodes))
	for i, n := range nodes {
		addrs[i] = n.Addr
		if err := waitPing(ctx, p.spec.RunUser, n.Addr, 30*time.Second); err != nil {
			return fmt.Errorf("kube: node %s (%s) is Ready but does not answer PING: %w", n.Name, n.Addr, err)
		}
		if err := c.authorizeReplication(ctx, n); err != nil {
			return err
		}
	}
	if err := c.rt.opts.Form(ctx, p.spec.RunUser, addrs, p.spec.Replicas, c.logf); err != nil {
		return fmt.Errorf("kube: forming the cluster: %w", err)
	}
	return nil
}

// waitPods polls until want pods of the cluster are Ready and returns
// them as nodes. Polling (every 250 ms) rather than a watch keeps the
// Role to get and list, and a pod's readiness is seconds anyway.
func (c *Cluster) waitPods(ctx context.Context, want int, timeout time.Duration) ([]cluster.Node, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	sel := LabelCluster + "=" + c.plan.name
	var last string
	for {
		pods, err := c.rt.cs.CoreV1().Pods(c.plan.namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err == nil {
			ready := 0
			for i := range pods.Items {
				if podReady(&pods.Items[i]) {
					ready++
				}
			}
			last = fmt.Sprintf("%d of %d pods Ready", ready, want)
			if ready >= want {
				return c.rt.podNodes(ctx, sel)
			}
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("kube: StatefulSet %s/%s: %s after %s (kubectl -n %s describe pods -l %s)", c.plan.namespace, c.plan.name, last, timeout, c.plan.namespace, sel)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// podNodes lists the Ready pods matching sel as nodes: the StatefulSet's
// ordinal names them (pod -0 is n1), the pod IP addresses them.
func (r *Runtime) podNodes(ctx context.Context, sel string) ([]cluster.Node, error) {
	pods, err := r.cs.CoreV1().Pods(r.opts.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("kube: listing pods %s: %w", sel, err)
	}
	var out []cluster.Node
	for i := range pods.Items {
		p := &pods.Items[i]
		if !podReady(p) {
			continue
		}
		name, ok := nodeName(p.Labels[LabelCluster], p.Name)
		if !ok {
			name = p.Name
		}
		out = append(out, cluster.Node{Name: name, Addr: net.JoinHostPort(p.Status.PodIP, strconv.Itoa(Port)), Host: p.Status.PodIP})
	}
	return cluster.SortedNodes(out), nil
}

// Nodes lists the members, n1 first.
func (c *Cluster) Nodes() []cluster.Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]cluster.Node(nil), c.nodes...)
}

// Name is the StatefulSet's name.
func (c *Cluster) Name() string { return c.plan.name }

// Namespace is where the cluster lives.
func (c *Cluster) Namespace() string { return c.plan.namespace }

// Describe reports the runtime, image and place for config.json.
func (c *Cluster) Describe() map[string]string {
	chaos := "none"
	if len(c.rt.chaos) > 0 {
		chaos = fmt.Sprint(c.rt.chaos)
	}
	return map[string]string{
		"runtime":    "kubernetes",
		"target":     c.plan.spec.Target,
		"image":      c.plan.image,
		"namespace":  c.plan.namespace,
		"kubernetes": c.plan.name,
		"chaos-mesh": chaos,
		"announce":   map[bool]string{false: "ip", true: "hostname"}[c.plan.hostnames],
	}
}

func (c *Cluster) node(name string) (cluster.Node, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.nodes {
		if n.Name == name {
			return n, nil
		}
	}
	return cluster.Node{}, fmt.Errorf("kube: no node %q in cluster %s", name, c.plan.name)
}

// Close removes everything the cluster's label selects: its chaos
// objects first (Chaos Mesh recovers the pods as it deletes them), then
// the StatefulSet, its pods and the Service, and waits until they are gone.
func (c *Cluster) Close(ctx context.Context) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	n, err := c.rt.removeAll(ctx, LabelCluster+"="+c.plan.name)
	c.logf("kubernetes: removed %d objects of %s/%s", n, c.plan.namespace, c.plan.name)
	return err
}

// removeAll deletes the chaos objects, StatefulSets, pods and Services
// matching sel in the namespace and waits until none is left. The pods are
// deleted by name as well as by their StatefulSet's garbage collection, so
// that none outlives the call.
func (r *Runtime) removeAll(ctx context.Context, sel string) (int, error) {
	ns := r.opts.Namespace
	lo := metav1.ListOptions{LabelSelector: sel}
	removed := 0
	var errs []error
	n, err := r.deleteChaos(ctx, sel)
	removed += n
	if err != nil {
		errs = append(errs, err)
	}
	bg := metav1.DeletePropagationBackground
	del := metav1.DeleteOptions{PropagationPolicy: &bg}
	if ss, err := r.cs.AppsV1().StatefulSets(ns).List(ctx, lo); err != nil {
		errs = append(errs, fmt.Errorf("listing StatefulSets: %w", err))
	} else {
		for _, s := range ss.Items {
			if err := r.cs.AppsV1().StatefulSets(ns).Delete(ctx, s.Name, del); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("deleting StatefulSet %s: %w", s.Name, err))
				continue
			}
			removed++
		}
	}
	if js, err := r.cs.BatchV1().Jobs(ns).List(ctx, lo); err != nil {
		errs = append(errs, fmt.Errorf("listing Jobs: %w", err))
	} else {
		// A distributed bench's generators (generators.go); their pods
		// carry LabelGeneratorsOf, deleted below by that label.
		for _, j := range js.Items {
			if err := r.cs.BatchV1().Jobs(ns).Delete(ctx, j.Name, del); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("deleting Job %s: %w", j.Name, err))
				continue
			}
			removed++
		}
	}
	if gs, err := r.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: generatorSelector(sel)}); err == nil {
		for _, p := range gs.Items {
			if err := r.cs.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{}); err == nil {
				removed++
			}
		}
	}
	if ps, err := r.cs.CoreV1().Pods(ns).List(ctx, lo); err != nil {
		errs = append(errs, fmt.Errorf("listing pods: %w", err))
	} else {
		for _, p := range ps.Items {
			if err := r.cs.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("deleting pod %s: %w", p.Name, err))
				continue
			}
			removed++
		}
	}
	if svcs, err := r.cs.CoreV1().Services(ns).List(ctx, lo); err != nil {
		errs = append(errs, fmt.Errorf("listing Services: %w", err))
	} else {
		for _, s := range svcs.Items {
			if err := r.cs.CoreV1().Services(ns).Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("deleting Service %s: %w", s.Name, err))
				continue
			}
			removed++
		}
	}
	if err := r.waitGone(ctx, sel); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return removed, fmt.Errorf("kube: removing %s in %s: %w", sel, ns, errors.Join(errs...))
	}
	return removed, nil
}

// waitGone polls until no pod, StatefulSet or chaos object matches sel:
// a pod lives on through its grace period, a chaos object until Chaos
// Mesh has recovered its targets and dropped its finalizer.
func (r *Runtime) waitGone(ctx context.Context, sel string) error {
	ctx, cancel := context.WithTimeout(ctx, r.opts.ChaosTimeout+30*time.Second)
	defer cancel()
	lo := metav1.ListOptions{LabelSelector: sel}
	for {
		var left []string
		if ps, err := r.cs.CoreV1().Pods(r.opts.Namespace).List(ctx, lo); err == nil {
			for _, p := range ps.Items {
				left = append(left, "pod "+p.Name)
			}
		}
		if ss, err := r.cs.AppsV1().StatefulSets(r.opts.Namespace).List(ctx, lo); err == nil {
			for _, s := range ss.Items {
				left = append(left, "statefulset "+s.Name)
			}
		}
		left = append(left, r.listChaos(ctx, sel)...)
		if len(left) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("still there: %v", left)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// authorizeReplication makes the node's replica link authenticate as the
// run's user (CONFIG SET over the admin connection, again after every
// restart: the setting is not on the command line, where the password
// would be in clear), as the docker runtime does.
func (c *Cluster) authorizeReplication(ctx context.Context, n cluster.Node) error {
	u := c.plan.spec.RunUser
	if u.User == "" {
		return nil
	}
	cl := u.AdminClient(n.Addr)
	defer cl.Close()
	if err := cl.Do(ctx, "CONFIG", "SET", "masteruser", u.User, "masterauth", u.Password).Err(); err != nil {
		return fmt.Errorf("kube: node %s: replicas authenticating as %s: %w", n.Name, u.User, err)
	}
	return nil
}

// waitPing waits until the server at addr answers PING.
func waitPing(ctx context.Context, creds cluster.Credentials, addr string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		cl := creds.AdminClient(addr)
		err := cl.Ping(ctx).Err()
		cl.Close()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Logs returns the node's server log as the kubelet keeps it (pods/log):
// after a kill, the log of the container before the restart and then the
// current one's, each under a line that says which.
func (c *Cluster) Logs(ctx context.Context, node string) (io.ReadCloser, error) {
	if _, err := c.node(node); err != nil {
		return nil, err
	}
	pod := podName(c.plan.name, node)
	p, err := c.rt.cs.CoreV1().Pods(c.plan.namespace).Get(ctx, pod, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("kube: logs of %s: %w", node, err)
	}
	var b bytes.Buffer
	if n := restarts(p); n > 0 {
		fmt.Fprintf(&b, "--- pod %s, container %s before its restart %d (kubectl logs --previous)\n", pod, ContainerName, n)
		if err := c.podLog(ctx, pod, true, &b); err != nil {
			fmt.Fprintf(&b, "(not kept: %v)\n", err)
		}
		fmt.Fprintf(&b, "--- pod %s, container %s now\n", pod, ContainerName)
	}
	if err := c.podLog(ctx, pod, false, &b); err != nil {
		return nil, fmt.Errorf("kube: logs of %s (pod %s; the Role needs pods/log): %w", node, pod, err)
	}
	return io.NopCloser(&b), nil
}

// podLog appends the server container's log (its previous instance's
// with previous) to w.
func (c *Cluster) podLog(ctx context.Context, pod string, previous bool, w io.Writer) error {
	rc, err := c.rt.cs.CoreV1().Pods(c.plan.namespace).GetLogs(pod, &corev1.PodLogOptions{Container: ContainerName, Previous: previous}).Stream(ctx)
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = io.Copy(w, io.LimitReader(rc, 64<<20))
	return err
}

var _ cluster.LogSource = (*Cluster)(nil)
