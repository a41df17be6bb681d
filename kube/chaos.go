package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/redline-dev/redline/cluster"
)

// ChaosGroupVersion is Chaos Mesh's API.
const ChaosGroupVersion = "chaos-mesh.org/v1alpha1"

// The Chaos Mesh kinds this package creates, by their resource names.
const (
	NetworkChaos = "networkchaos"
	PodChaos     = "podchaos"
	TimeChaos    = "timechaos"
)

var chaosKinds = map[string]string{NetworkChaos: "NetworkChaos", PodChaos: "PodChaos", TimeChaos: "TimeChaos"}

func chaosGVR(resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "chaos-mesh.org", Version: "v1alpha1", Resource: resource}
}

// servedChaosKinds asks discovery which of chaosKinds the API server serves
// (none: Chaos Mesh's CRDs are not installed).
func servedChaosKinds(cs kubernetes.Interface) ([]string, error) {
	list, err := cs.Discovery().ServerResourcesForGroupVersion(ChaosGroupVersion)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("kube: asking the API server whether Chaos Mesh is installed: %w", err)
	}
	var out []string
	for _, r := range list.APIResources {
		if _, ok := chaosKinds[r.Name]; ok {
			out = append(out, r.Name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// chaosObject is one Chaos Mesh resource of the cluster: kind's resource
// name and its spec. Every one selects pods by name in the namespace.
func (c *Cluster) chaosObject(resource, what string, spec map[string]any) *unstructured.Unstructured {
	c.mu.Lock()
	c.seq++
	seq := c.seq
	c.mu.Unlock()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": ChaosGroupVersion,
		"kind":       chaosKinds[resource],
		"spec":       spec,
	}}
	u.SetName(fmt.Sprintf("%s-%s-%d", c.plan.name, what, seq))
	u.SetNamespace(c.plan.namespace)
	labels := map[string]string{}
	for k, v := range c.plan.labels {
		labels[k] = v
	}
	u.SetLabels(labels)
	return u
}

// podSelector is Chaos Mesh's selector of the nodes' pods by name.
func (c *Cluster) podSelector(nodes ...string) map[string]any {
	pods := make([]any, len(nodes))
	for i, n := range nodes {
		pods[i] = podName(c.plan.name, n)
	}
	return map[string]any{"pods": map[string]any{c.plan.namespace: pods}}
}

// apply creates u and waits until Chaos Mesh reports every target
// injected (condition AllInjected True): the CR's own evidence that the
// fault took effect.
func (c *Cluster) apply(ctx context.Context, resource string, u *unstructured.Unstructured) error {
	ri := c.rt.dyn.Resource(chaosGVR(resource)).Namespace(c.plan.namespace)
	if _, err := ri.Create(ctx, u, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("kube: creating %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.rt.opts.ChaosTimeout)
	defer cancel()
	for {
		got, err := ri.Get(ctx, u.GetName(), metav1.GetOptions{})
		if err == nil {
			if ok, why := injected(got); ok {
				return nil
			} else if why != "" {
				return fmt.Errorf("kube: %s %s failed: %s", u.GetKind(), u.GetName(), why)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kube: %s %s not injected after %s: is Chaos Mesh's controller running in the cluster? (kubectl -n %s describe %s %s)",
				u.GetKind(), u.GetName(), c.rt.opts.ChaosTimeout, c.plan.namespace, resource, u.GetName())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// injected reads a chaos object's status: AllInjected True, or the
// message of a failed injection event.
func injected(u *unstructured.Unstructured) (bool, string) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "AllInjected" && m["status"] == "True" {
			return true, ""
		}
	}
	recs, _, _ := unstructured.NestedSlice(u.Object, "status", "experiment", "containerRecords")
	for _, r := range recs {
		m, _ := r.(map[string]any)
		evs, _ := m["events"].([]any)
		for _, e := range evs {
			em, _ := e.(map[string]any)
			if em["type"] == "Failed" {
				return false, fmt.Sprint(em["message"])
			}
		}
	}
	return false, ""
}

// remove deletes the named chaos objects of one kind and waits until
// they are gone (Chaos Mesh holds each with a finalizer until it has
// recovered its targets).
func (c *Cluster) remove(ctx context.Context, resource string, names []string) error {
	ri := c.rt.dyn.Resource(chaosGVR(resource)).Namespace(c.plan.namespace)
	var errs []error
	for _, name := range names {
		if err := ri.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting %s %s: %w", resource, name, err))
		}
	}
	ctx, cancel := context.WithTimeout(ctx, c.rt.opts.ChaosTimeout)
	defer cancel()
	for _, name := range names {
		if err := waitFor(ctx, func() bool {
			_, err := ri.Get(ctx, name, metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		}); err != nil {
			errs = append(errs, fmt.Errorf("%s %s not recovered (still there) after %s", resource, name, c.rt.opts.ChaosTimeout))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("kube: %w", errors.Join(errs...))
	}
	return nil
}

// listChaos names the chaos objects matching sel, of every served kind.
func (r *Runtime) listChaos(ctx context.Context, sel string) []string {
	var out []string
	for _, res := range r.chaos {
		l, err := r.dyn.Resource(chaosGVR(res)).Namespace(r.opts.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			continue
		}
		for _, u := range l.Items {
			out = append(out, res+" "+u.GetName())
		}
	}
	return out
}

// deleteChaos deletes the chaos objects matching sel.
func (r *Runtime) deleteChaos(ctx context.Context, sel string) (int, error) {
	n := 0
	var errs []error
	for _, res := range r.chaos {
		ri := r.dyn.Resource(chaosGVR(res)).Namespace(r.opts.Namespace)
		l, err := ri.List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			errs = append(errs, fmt.Errorf("listing %s: %w", res, err))
			continue
		}
		for _, u := range l.Items {
			if err := ri.Delete(ctx, u.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("deleting %s %s: %w", res, u.GetName(), err))
				continue
			}
			n++
		}
	}
	return n, errors.Join(errs...)
}

// Capabilities are the faults this runtime's clusters can cause at most,
// read off ChaosCluster's methods: with Chaos Mesh installed. Without it
// a cluster is a plain Cluster and can only pause, which the run says
// when it starts.
func Capabilities() []cluster.Capability { return cluster.CapabilitiesOf((*ChaosCluster)(nil)) }

// CapabilitiesWithoutChaos are the faults a cluster can suffer where Chaos
// Mesh is not installed, read off Cluster's methods.
func CapabilitiesWithoutChaos() []cluster.Capability { return cluster.CapabilitiesOf((*Cluster)(nil)) }

// ChaosCluster is a Cluster whose API server serves Chaos Mesh: it
// implements cluster.Killer, Partitioner, Shaper and Clock with Chaos Mesh
// resources, each checked in its status before the fault counts as done.
type ChaosCluster struct {
	*Cluster
}

func (c *ChaosCluster) serves(resource string) error {
	if !slices.Contains(c.rt.chaos, resource) {
		return fmt.Errorf("kube: the API server does not serve %s.chaos-mesh.org", resource)
	}
	return nil
}

// Kill kills the node's server container (PodChaos container-kill) and
// waits for the kubelet's evidence, a higher restart count. The kubelet
// starts the container again at once with its emptyDir data: a kill on
// Kubernetes lasts as long as that restart.
func (c *ChaosCluster) Kill(ctx context.Context, node string) error {
	if err := c.serves(PodChaos); err != nil {
		return err
	}
	if _, err := c.node(node); err != nil {
		return err
	}
	pod := podName(c.plan.name, node)
	before, err := c.rt.cs.CoreV1().Pods(c.plan.namespace).Get(ctx, pod, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("kube: kill %s: %w", node, err)
	}
	u := c.chaosObject(PodChaos, "kill-"+node, map[string]any{
		"action":         "container-kill",
		"mode":           "all",
		"containerNames": []any{ContainerName},
		"selector":       c.podSelector(node),
	})
	u.SetAnnotations(map[string]string{"redline.dev/node": node, "redline.dev/restarts-before": fmt.Sprint(restarts(before))})
	if err := c.apply(ctx, PodChaos, u); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, c.rt.opts.ChaosTimeout)
	defer cancel()
	for {
		p, err := c.rt.cs.CoreV1().Pods(c.plan.namespace).Get(wctx, pod, metav1.GetOptions{})
		if err == nil && restarts(p) > restarts(before) {
			return nil
		}
		select {
		case <-wctx.Done():
			return fmt.Errorf("kube: kill %s: PodChaos %s injected, but pod %s's restart count stayed %d", node, u.GetName(), pod, restarts(before))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Restart removes the node's PodChaos and waits until its pod is Ready at
// the same IP and the server answers.
func (c *ChaosCluster) Restart(ctx context.Context, node string) error {
	n, err := c.node(node)
	if err != nil {
		return err
	}
	names := c.named(ctx, PodChaos, "-kill-"+node+"-")
	if err := c.remove(ctx, PodChaos, names); err != nil {
		return err
	}
	pod := podName(c.plan.name, node)
	wctx, cancel := context.WithTimeout(ctx, c.rt.opts.ReadyTimeout)
	defer cancel()
	for {
		p, err := c.rt.cs.CoreV1().Pods(c.plan.namespace).Get(wctx, pod, metav1.GetOptions{})
		if err == nil && podReady(p) {
			if p.Status.PodIP != n.Host {
				return fmt.Errorf("kube: restart %s: pod %s came back at %s, not %s", node, pod, p.Status.PodIP, n.Host)
			}
			if err := waitPing(wctx, c.plan.spec.RunUser, n.Addr, c.rt.opts.ChaosTimeout); err != nil {
				return err
			}
			return c.authorizeReplication(wctx, n)
		}
		select {
		case <-wctx.Done():
			return fmt.Errorf("kube: restart %s: pod %s not Ready after %s", node, pod, c.rt.opts.ReadyTimeout)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// named lists the cluster's chaos objects of a kind whose name holds part.
func (c *ChaosCluster) named(ctx context.Context, resource, part string) []string {
	l, err := c.rt.dyn.Resource(chaosGVR(resource)).Namespace(c.plan.namespace).List(ctx, metav1.ListOptions{LabelSelector: LabelCluster + "=" + c.plan.name})
	if err != nil {
		return nil
	}
	var out []string
	for _, u := range l.Items {
		if strings.Contains(u.GetName()+"-", part) {
			out = append(out, u.GetName())
		}
	}
	return out
}

// Cut partitions node from peers both ways (NetworkChaos partition,
// direction both). Cutting the harness off too (clients) would need the
// Job's pod as a target: not offered yet.
func (c *ChaosCluster) Cut(ctx context.Context, node string, peers []string, clients bool) error {
	if err := c.serves(NetworkChaos); err != nil {
		return err
	}
	if clients {
		return errors.New("kube: --partition-clients is not supported on kubernetes yet (the partition would need the redline Job's pod as a target)")
	}
	if len(peers) == 0 {
		return nil
	}
	for _, n := range append([]string{node}, peers...) {
		if _, err := c.node(n); err != nil {
			return err
		}
	}
	u := c.chaosObject(NetworkChaos, "cut-"+node, map[string]any{
		"action":    "partition",
		"mode":      "all",
		"direction": "both",
		"selector":  c.podSelector(node),
		"target":    map[string]any{"mode": "all", "selector": c.podSelector(peers...)},
	})
	return c.apply(ctx, NetworkChaos, u)
}

// Heal removes every NetworkChaos of the cluster and waits until Chaos
// Mesh has recovered them.
func (c *ChaosCluster) Heal(ctx context.Context) error {
	if err := c.serves(NetworkChaos); err != nil {
		return nil
	}
	return c.remove(ctx, NetworkChaos, c.named(ctx, NetworkChaos, "-cut-"))
}

// SetClockOffset shifts the node's clock by offset (TimeChaos timeOffset;
// 0 removes the node's TimeChaos).
func (c *ChaosCluster) SetClockOffset(ctx context.Context, node string, offset time.Duration) error {
	if err := c.serves(TimeChaos); err != nil {
		return err
	}
	if _, err := c.node(node); err != nil {
		return err
	}
	if err := c.remove(ctx, TimeChaos, c.named(ctx, TimeChaos, "-clock-"+node+"-")); err != nil {
		return err
	}
	if offset == 0 {
		return nil
	}
	u := c.chaosObject(TimeChaos, "clock-"+node, map[string]any{
		"mode":           "all",
		"timeOffset":     offset.String(),
		"containerNames": []any{ContainerName},
		"selector":       c.podSelector(node),
	})
	return c.apply(ctx, TimeChaos, u)
}

// Delay holds every packet node's pod sends for latency, give or take
// jitter (NetworkChaos delay, direction to, no target: to peers and to the
// harness alike); 0 removes the node's delay. Beyond the CR's AllInjected
// it checks the cluster's own view: the node's PING replies, which travel
// the delayed way, must come back no sooner than half the latency.
func (c *ChaosCluster) Delay(ctx context.Context, node string, latency, jitter time.Duration) error {
	n, err := c.shaped(ctx, node, "delay")
	if err != nil || latency <= 0 {
		return err
	}
	u := c.chaosObject(NetworkChaos, "delay-"+node, map[string]any{
		"action":    "delay",
		"mode":      "all",
		"direction": "to",
		"selector":  c.podSelector(node),
		"delay":     map[string]any{"latency": millis(latency), "jitter": millis(jitter), "correlation": "0"},
	})
	if err := c.apply(ctx, NetworkChaos, u); err != nil {
		return err
	}
	rtt, err := pingRTT(ctx, c.plan.spec.RunUser, n.Addr, latency+jitter+5*time.Second)
	if err != nil {
		return fmt.Errorf("kube: delay %s: NetworkChaos %s injected, but the node does not answer PING: %w", node, u.GetName(), err)
	}
	if rtt < latency/2 {
		return fmt.Errorf("kube: delay %s: NetworkChaos %s says injected, but PING came back in %s, under half its %s latency", node, u.GetName(), rtt.Round(time.Millisecond), latency)
	}
	c.logf("kubernetes: %s delayed by %s (NetworkChaos %s; PING %s)", node, latency, u.GetName(), rtt.Round(time.Millisecond))
	return nil
}

// Loss drops percent of the packets node's pod sends (NetworkChaos loss,
// direction to, no target); 0 removes the node's loss. The CR's status is
// the evidence: TCP resends what is lost, so no reply tells loss apart
// from a slow node.
func (c *ChaosCluster) Loss(ctx context.Context, node string, percent int) error {
	if _, err := c.shaped(ctx, node, "loss"); err != nil || percent <= 0 {
		return err
	}
	if percent > 100 {
		return fmt.Errorf("kube: loss %s: %d%% is more than all packets", node, percent)
	}
	u := c.chaosObject(NetworkChaos, "loss-"+node, map[string]any{
		"action":    "loss",
		"mode":      "all",
		"direction": "to",
		"selector":  c.podSelector(node),
		"loss":      map[string]any{"loss": strconv.Itoa(percent), "correlation": "0"},
	})
	return c.apply(ctx, NetworkChaos, u)
}

// shaped checks that a delay or loss can be set on node and removes the
// one of that action it has: a new figure replaces the old, as Chaos Mesh
// would stack two netem objects on one pod.
func (c *ChaosCluster) shaped(ctx context.Context, node, action string) (cluster.Node, error) {
	if err := c.serves(NetworkChaos); err != nil {
		return cluster.Node{}, err
	}
	n, err := c.node(node)
	if err != nil {
		return n, err
	}
	return n, c.remove(ctx, NetworkChaos, c.named(ctx, NetworkChaos, "-"+action+"-"+node+"-"))
}

// millis is d as Chaos Mesh's duration pattern accepts it
// (^[0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h)$: "1m30s" is refused).
func millis(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) + "ms" }

// pingRTT is the shortest of three PING round trips to addr, on one
// connection opened first (a connect is a handshake the delay slows too).
func pingRTT(ctx context.Context, creds cluster.Credentials, addr string, timeout time.Duration) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*timeout)
	defer cancel()
	o := creds.AdminOptions(addr)
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout = timeout, timeout, timeout
	o.PoolSize = 1
	cl := redis.NewClient(o)
	defer cl.Close()
	if err := cl.Ping(ctx).Err(); err != nil {
		return 0, err
	}
	best := time.Duration(0)
	for range 3 {
		t0 := time.Now()
		if err := cl.Ping(ctx).Err(); err != nil {
			return 0, err
		}
		if d := time.Since(t0); best == 0 || d < best {
			best = d
		}
	}
	return best, nil
}

var (
	_ cluster.Shaper      = (*ChaosCluster)(nil)
	_ cluster.Killer      = (*ChaosCluster)(nil)
	_ cluster.Partitioner = (*ChaosCluster)(nil)
	_ cluster.Clock       = (*ChaosCluster)(nil)
	_ cluster.Describer   = (*Cluster)(nil)
)

// waitFor polls done every 200 ms until it is true or ctx ends.
func waitFor(ctx context.Context, done func() bool) error {
	for {
		if done() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
