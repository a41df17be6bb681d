// Package kube runs the Redis Cluster redline tests on Kubernetes and
// implements cluster/ on it: the nodes are the pods of a StatefulSet
// behind a headless Service, each announcing its pod IP, and the faults are
// Chaos Mesh custom resources (NetworkChaos partitions, delay and loss,
// PodChaos container kills, TimeChaos clock skew) built as unstructured
// objects, because Chaos Mesh's Go API module is not versioned for import.
//
// redline runs inside the cluster (a Job: `redline kube manifests`), since
// the nodes announce in-cluster addresses that the harness dials directly.
// Everything this package creates carries the labels below; Close removes
// it, and Cleanup removes what a run that died left behind.
//
// Chaos Mesh has no pause: a node is paused by an exec into its container
// that sends the server SIGSTOP (pause.go), which needs nothing of Chaos
// Mesh, only pods/exec. Without Chaos Mesh's CRDs in the API server the
// cluster has no Killer, Partitioner, Shaper or Clock, as an external
// target.
package kube

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/redline-dev/redline/cluster"
)

// Labels on everything this package creates.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by" // "redline"
	LabelCluster   = "redline.dev/cluster"          // the cluster's name (also the StatefulSet's)
	LabelOwner     = "redline.dev/owner"            // the redline process that created it
	LabelTarget    = "redline.dev/target"           // "reference" or "redis"
	// LabelPodName is set on every pod by the StatefulSet controller.
	LabelPodName = "statefulset.kubernetes.io/pod-name"
	managedBy    = "redline"
)

// Port is every node's client port; the bus port is Port+10000.
const Port = 6379

// ContainerName is the server's container in every pod.
const ContainerName = "redis"

// Options configure a Runtime.
type Options struct {
	// Namespace holds everything the runtime creates (required).
	Namespace string
	// Kubeconfig is a kubeconfig file; "" uses the in-cluster service
	// account when running in a pod, else $KUBECONFIG or ~/.kube/config.
	Kubeconfig string
	// Config, when not nil, is used instead of Kubeconfig (tests).
	Config *rest.Config
	// Image is the nodes' image; "" is DefaultImage(target).
	Image string
	// Log receives progress lines; Spec.Log overrides it per cluster.
	Log func(format string, args ...any)
	// Form makes one cluster of the fresh nodes (clusteradmin.Form),
	// supplied by the caller as for the docker runtime.
	Form func(ctx context.Context, creds cluster.Credentials, addrs []string, replicas int, log func(string, ...any)) error
	// ReadyTimeout bounds waiting for the pods to be Ready (default 5m:
	// a real cluster may pull the image first).
	ReadyTimeout time.Duration
	// ChaosTimeout bounds waiting for Chaos Mesh to report a fault
	// injected or recovered (default 60s).
	ChaosTimeout time.Duration
	// Owner identifies this process in LabelOwner (default
	// hostname-pid).
	Owner string
	// AnnounceHostname has the nodes announce their DNS names under the
	// headless Service (cluster-announce-hostname, preferred endpoint
	// type hostname) instead of only their pod IPs.
	AnnounceHostname bool
}

// DefaultImage is the image a target's pods run when --image is not
// given: redline's own (the reference server is `redline server`, the
// same image the Job runs) or the Redis 7 image.
func DefaultImage(target string) string {
	if target == "redis" {
		return "redis:7.0"
	}
	return "redline:latest"
}

// Runtime starts clusters as StatefulSets. It implements cluster.Runtime.
type Runtime struct {
	opts  Options
	cfg   *rest.Config // for exec, which streams outside the typed client
	cs    kubernetes.Interface
	dyn   dynamic.Interface
	chaos []string // the Chaos Mesh kinds the API server serves (chaosKinds), by discovery
}

// RestConfig loads the client configuration: kubeconfig when given, else
// the in-cluster service account, else the default loading rules.
func RestConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		if c, err := rest.InClusterConfig(); err == nil {
			return c, nil
		}
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	c, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kube: no Kubernetes client configuration (not in a pod, and kubeconfig %q: %v): pass --kubeconfig or run redline as the Job of `redline kube manifests`", kubeconfig, err)
	}
	return c, nil
}

// New connects to the API server, checks that the namespace can be read,
// and finds out which Chaos Mesh kinds it serves.
func New(ctx context.Context, opts Options) (*Runtime, error) {
	if opts.Namespace == "" {
		return nil, errors.New("kube: no namespace: pass --namespace")
	}
	cfg := opts.Config
	if cfg == nil {
		var err error
		if cfg, err = RestConfig(opts.Kubeconfig); err != nil {
			return nil, err
		}
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "redline"
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 50, 100
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kube: client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kube: dynamic client: %w", err)
	}
	if opts.ReadyTimeout <= 0 {
		opts.ReadyTimeout = 5 * time.Minute
	}
	if opts.ChaosTimeout <= 0 {
		opts.ChaosTimeout = 60 * time.Second
	}
	if opts.Log == nil {
		opts.Log = func(string, ...any) {}
	}
	if opts.Owner == "" {
		opts.Owner = defaultOwner()
	}
	r := &Runtime{opts: opts, cfg: cfg, cs: cs, dyn: dyn}
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if _, err := cs.AppsV1().StatefulSets(opts.Namespace).List(cctx, metav1.ListOptions{Limit: 1}); err != nil {
		return nil, fmt.Errorf("kube: cannot list StatefulSets in namespace %s at %s: %v: check the namespace, the kubeconfig and the Role of `redline kube manifests`", opts.Namespace, cfg.Host, err)
	}
	r.chaos, err = servedChaosKinds(cs)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Name is "kubernetes".
func (r *Runtime) Name() string { return "kubernetes" }

// Chaos says which Chaos Mesh kinds the API server serves (empty: no Chaos
// Mesh, so no kill, partition or clock faults).
func (r *Runtime) Chaos() []string { return append([]string(nil), r.chaos...) }

func defaultOwner() string {
	h, _ := os.Hostname()
	return labelValue(h + "-" + strconv.Itoa(os.Getpid()))
}

var notLabel = regexp.MustCompile(`[^a-z0-9.-]+`)

// labelValue makes s a valid label value and DNS-1123 label: lower case,
// [a-z0-9.-], at most 63 characters, alphanumeric at both ends.
func labelValue(s string) string {
	s = notLabel.ReplaceAllString(strings.ToLower(s), "-")
	if len(s) > 63 {
		s = s[:63]
	}
	return strings.Trim(s, "-.")
}

// clusterName is the StatefulSet's name: "rl-" + the test's name cut short
// + a random suffix. A StatefulSet's pods carry a controller-revision-hash
// label of its name plus 11 characters, which must fit in 63.
func clusterName(label string) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	base := labelValue(label)
	base = strings.ReplaceAll(base, ".", "-")
	if len(base) > 30 {
		base = strings.Trim(base[:30], "-")
	}
	if base == "" {
		base = "cluster"
	}
	return "rl-" + base + "-" + hex.EncodeToString(b)
}

// Cleanup removes every object labelled managed-by=redline in the
// namespace (selector "" ) or those matching selector, whoever made them:
// `redline kube down` after a run that died. It returns how many it removed.
func (r *Runtime) Cleanup(ctx context.Context, selector string) (int, error) {
	sel := labels.Set{LabelManagedBy: managedBy}.String()
	if selector != "" {
		sel += "," + selector
	}
	return r.removeAll(ctx, sel)
}

// Running is a redline cluster found in the namespace.
type Running struct {
	Name, Target, Owner string
	Nodes               []cluster.Node
}

// Clusters lists the redline clusters in the namespace.
func (r *Runtime) Clusters(ctx context.Context) ([]Running, error) {
	ss, err := r.cs.AppsV1().StatefulSets(r.opts.Namespace).List(ctx, metav1.ListOptions{LabelSelector: LabelManagedBy + "=" + managedBy})
	if err != nil {
		return nil, fmt.Errorf("kube: listing StatefulSets: %w", err)
	}
	var out []Running
	for _, s := range ss.Items {
		nodes, _ := r.podNodes(ctx, LabelCluster+"="+s.Name)
		out = append(out, Running{Name: s.Name, Target: s.Labels[LabelTarget], Owner: s.Labels[LabelOwner], Nodes: nodes})
	}
	return out, nil
}

// Guest finds the pods sel picks (an operator's cluster, say) and returns
// the client address of each Ready one: its pod IP and its container port
// named "redis" (or Port). redline then treats them as an external target:
// it creates nothing there and removes nothing.
func (r *Runtime) Guest(ctx context.Context, sel string) ([]string, error) {
	if _, err := labels.Parse(sel); err != nil {
		return nil, fmt.Errorf("kube: --selector %q: %v", sel, err)
	}
	pods, err := r.cs.CoreV1().Pods(r.opts.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("kube: listing pods %s in %s: %w", sel, r.opts.Namespace, err)
	}
	var addrs []string
	for i := range pods.Items {
		p := &pods.Items[i]
		if !podReady(p) {
			continue
		}
		port := int32(Port)
		for _, c := range p.Spec.Containers {
			for _, cp := range c.Ports {
				if cp.Name == "redis" {
					port = cp.ContainerPort
				}
			}
		}
		addrs = append(addrs, net.JoinHostPort(p.Status.PodIP, strconv.Itoa(int(port))))
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("kube: no Ready pod in %s matches %s (%d pods match)", r.opts.Namespace, sel, len(pods.Items))
	}
	return addrs, nil
}
