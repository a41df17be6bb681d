package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
	"github.com/redline-dev/redline/harness"
	"github.com/redline-dev/redline/kube"
)

// addRuntimeFlags registers where the cluster runs (run, bench, suite).
func addRuntimeFlags(f *pflag.FlagSet, cfg *harness.Config) {
	f.StringVar(&cfg.Runtime, "runtime", "docker", "where redline starts the cluster: docker (containers on this host) or kubernetes (a StatefulSet in --namespace, faults by Chaos Mesh)")
	f.StringVar(&cfg.Namespace, "namespace", "", "kubernetes: the namespace of the cluster (and of the chaos objects)")
	f.StringVar(&cfg.Kubeconfig, "kubeconfig", "", "kubernetes: kubeconfig file (default: the pod's service account in a cluster, else $KUBECONFIG or ~/.kube/config)")
	f.StringVar(&cfg.Selector, "selector", "", "kubernetes: label selector of an existing cluster's pods (an operator's) to test as a guest, as with --addrs")
	f.StringVar(&cfg.Announce, "announce", "", "kubernetes: what the nodes announce: ip (their pod IPs, the default) or hostname (cluster-announce-hostname <pod>.<service>.<namespace>.svc and cluster-preferred-endpoint-type hostname: the clients, redline's included, dial the headless Service's DNS names)")
}

// validateRuntime checks the runtime flags before anything starts.
func validateRuntime(cfg *harness.Config, targetChanged bool) error {
	switch cfg.Announce {
	case "", "ip":
		cfg.Announce = "" // the default: config.json and a replay say nothing
	case "hostname":
	default:
		return badArgs("unknown --announce %q: choose ip or hostname", cfg.Announce)
	}
	switch cfg.Runtime {
	case "", "docker":
		cfg.Runtime = ""
		for flag, v := range map[string]string{"--namespace": cfg.Namespace, "--kubeconfig": cfg.Kubeconfig, "--selector": cfg.Selector, "--announce": cfg.Announce} {
			if v != "" {
				return badArgs("%s is a kubernetes setting: add --runtime kubernetes", flag)
			}
		}
		return nil
	case "kubernetes":
	default:
		return badArgs("unknown --runtime %q: choose docker or kubernetes", cfg.Runtime)
	}
	if cfg.Namespace == "" {
		return badArgs("--runtime kubernetes needs --namespace NS: the namespace redline creates the cluster in (and its Role allows)")
	}
	if len(cfg.Addrs) > 0 {
		return badArgs("--addrs and --runtime kubernetes: to test existing pods give --selector, to test any reachable cluster drop --runtime")
	}
	if cfg.Selector != "" {
		if cfg.Announce != "" {
			return badArgs("--announce says what the nodes redline creates announce; --selector tests existing pods: drop --announce")
		}
		if targetChanged && cfg.Target != "external" {
			return badArgs("--selector picks an existing cluster, but --target is %q: drop --target", cfg.Target)
		}
		cfg.Target = "external"
	}
	if cfg.ServerBinary != "" {
		return badArgs("--server-binary packs a local binary into a local image; on kubernetes push an image with it and pass --image")
	}
	if cfg.PartitionClients {
		return badArgs("--partition-clients is not supported on kubernetes yet: drop it")
	}
	return nil
}

// startKube starts (or, with --selector, finds) the cluster on Kubernetes.
func startKube(ctx context.Context, cfg harness.Config, creds cluster.Credentials, log *harness.Log) (cluster.Cluster, error) {
	rt, err := kube.New(ctx, kube.Options{
		Namespace: cfg.Namespace, Kubeconfig: cfg.Kubeconfig, Image: cfg.Image, Log: log.Printf, Form: clusteradmin.Form,
		AnnounceHostname: cfg.Announce == "hostname",
	})
	if err != nil {
		return nil, environmentFailed(err)
	}
	if len(rt.Chaos()) == 0 {
		log.Printf("kubernetes: Chaos Mesh is not installed in the API server: no kill, partition, delay, loss or clock faults (as for an external target)")
	} else {
		log.Printf("kubernetes: Chaos Mesh serves %s", strings.Join(rt.Chaos(), ", "))
	}
	if cfg.Selector != "" {
		addrs, err := rt.Guest(ctx, cfg.Selector)
		if err != nil {
			return nil, environmentFailed(err)
		}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		c, err := clusteradmin.OpenExternal(cctx, creds, addrs)
		if err != nil {
			return nil, environmentFailed(fmt.Errorf("cannot reach the pods %s selects (%s): %v", cfg.Selector, strings.Join(addrs, ","), err))
		}
		log.Printf("discovered %d nodes behind the pods %s selects", len(c.View().Members), cfg.Selector)
		return c, nil
	}
	reaped, err := rt.Reap(ctx)
	for _, r := range reaped {
		if r.Left == "" {
			log.Printf("kubernetes: removed %d objects of cluster %s: its run (%s) is gone", r.Removed, r.Cluster, r.Owner)
		}
	}
	if err != nil {
		log.Printf("kubernetes: reaping the clusters of dead runs: %v (`redline kube down --namespace %s` tries again)", err, cfg.Namespace)
	}
	log.Printf("starting a %d-node %s cluster on kubernetes in %s (%d replicas per primary, node-timeout %s)", cfg.Nodes, cfg.Target, cfg.Namespace, cfg.Replicas, cfg.NodeTimeout.D())
	c, err := rt.Start(ctx, cluster.Spec{
		Target: cfg.Target, Nodes: cfg.Nodes, Replicas: cfg.Replicas, NodeTimeout: cfg.NodeTimeout.D(),
		AppendOnly: true, Image: cfg.Image, Name: cfg.TestName, Log: log.Printf, ServerConfig: cfg.ServerConfig,
		RunUser: runUser(cfg, creds),
	})
	if err != nil {
		return nil, fmt.Errorf("starting the %s cluster on kubernetes: %w", cfg.Target, err)
	}
	for _, n := range c.Nodes() {
		log.Printf("node %s at %s", n.Name, n.Addr)
	}
	return c, nil
}

func newKubeCmd(stdout, stderr io.Writer) *cobra.Command {
	c := &cobra.Command{
		Use:   "kube",
		Short: "Run redline on Kubernetes: the manifests of its Job, and removing what a dead run left",
	}
	var mo kube.ManifestOptions
	manifests := &cobra.Command{
		Use:   "manifests [-- [bench] run flags...]",
		Short: "Print the ServiceAccount, Role, RoleBinding, results volume and Job that run redline in a namespace",
		Long: `Print what runs redline inside a Kubernetes cluster, for kubectl apply -f -.
redline runs in the cluster because the nodes announce their pod IPs, which
it dials directly. The Role allows exactly what a run does in the one
namespace: pods (get, list, delete), pods/exec (a pause sends the server
SIGSTOP from inside its pod), services and statefulsets (get, list, create,
delete) and Chaos Mesh's networkchaos, podchaos and timechaos. The results
store is on a PersistentVolumeClaim mounted at /results. After -- the Job's
'redline run' flags, or 'bench' and bench's flags for a load test (its
--generators run as an Indexed Job's pods: the Role has batch jobs too).`,
		Example: `  redline kube manifests --namespace redis-test -- --nemesis partition,kill --time-limit 5m | kubectl apply -f -
  redline kube manifests --namespace redis-test -- bench --generators 8 --rate 200000 --time-limit 5m | kubectl apply -f -`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if mo.Namespace == "" {
				return badArgs("--namespace is required: the namespace the Job, its Role and the cluster live in")
			}
			mo.Args = args
			y, err := kube.ManifestsYAML(mo)
			if err != nil {
				return harnessFailed(err)
			}
			_, err = stdout.Write(y)
			return err
		},
	}
	manifests.Flags().StringVar(&mo.Namespace, "namespace", "", "namespace of the Job, its Role and the cluster")
	manifests.Flags().StringVar(&mo.Image, "image", "", "the Job's image, with /redline in it (default "+kube.DefaultImage("reference")+", also the reference nodes' image)")
	manifests.Flags().StringVar(&mo.Name, "name", "redline", "name of the ServiceAccount, Role, RoleBinding, PVC and Job")
	manifests.Flags().StringVar(&mo.Storage, "storage", "1Gi", "size of the results volume")

	var ns, kubeconfig string
	var all bool
	// openNamespace connects down and status to the namespace they act on.
	openNamespace := func(ctx context.Context) (*kube.Runtime, error) {
		if ns == "" {
			return nil, badArgs("--namespace is required")
		}
		rt, err := kube.New(ctx, kube.Options{Namespace: ns, Kubeconfig: kubeconfig})
		if err != nil {
			return nil, environmentFailed(err)
		}
		return rt, nil
	}
	down := &cobra.Command{
		Use:   "down",
		Short: "Remove the redline clusters and chaos objects of dead runs in the namespace (--all: of every run)",
		Long: `Remove what runs that died left in the namespace: each redline cluster whose
run is gone (its Job pod deleted or ended, or its process no longer on this
host) with its pods, Service and chaos objects. A run still in use, or one
that ran on another host, is left and named. --all removes every redline
object in the namespace, in use or not.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := context.Background()
			rt, err := openNamespace(ctx)
			if err != nil {
				return err
			}
			if all {
				n, err := rt.Cleanup(ctx, "")
				fmt.Fprintf(stdout, "removed %d objects\n", n)
				if err != nil {
					return environmentFailed(err)
				}
				return nil
			}
			reaped, err := rt.Reap(ctx)
			removed := 0
			for _, r := range reaped {
				if r.Left != "" {
					fmt.Fprintf(stdout, "left cluster %s: %s (--all removes it)\n", r.Cluster, r.Left)
					continue
				}
				removed += r.Removed
				fmt.Fprintf(stdout, "removed cluster %s (%d objects): its run, %s, is gone\n", r.Cluster, r.Removed, r.Owner)
			}
			fmt.Fprintf(stdout, "removed %d objects\n", removed)
			if err != nil {
				return environmentFailed(err)
			}
			return nil
		},
	}
	down.Flags().BoolVar(&all, "all", false, "remove every redline cluster and chaos object in the namespace, its run alive or not")
	status := &cobra.Command{
		Use:   "status",
		Short: "List the redline clusters in the namespace",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := context.Background()
			rt, err := openNamespace(ctx)
			if err != nil {
				return err
			}
			cs, err := rt.Clusters(ctx)
			if err != nil {
				return environmentFailed(err)
			}
			for _, c := range cs {
				addrs := make([]string, len(c.Nodes))
				for i, n := range c.Nodes {
					addrs[i] = n.Addr
				}
				fmt.Fprintf(stdout, "%s\t%s\towner %s\t%s\n", c.Name, c.Target, c.Owner, strings.Join(addrs, ","))
			}
			return nil
		},
	}
	for _, s := range []*cobra.Command{down, status} {
		s.Flags().StringVar(&ns, "namespace", "", "the namespace")
		s.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: in-cluster, $KUBECONFIG, ~/.kube/config)")
	}
	// signal runs inside a node's pod, by exec: a pause on kubernetes
	// (redline's image is FROM scratch: no kill to exec).
	signal := &cobra.Command{
		Use:    "signal STOP|CONT NAME",
		Short:  "Send SIGSTOP or SIGCONT to the processes named NAME in this process namespace (a pause, run by exec in a node's pod)",
		Hidden: true,
		Args:   cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := kube.Signal(args[0], args[1])
			if err != nil {
				return harnessFailed(err)
			}
			fmt.Fprintf(stdout, "sent SIG%s to %d processes named %s\n", strings.ToUpper(args[0]), n, args[1])
			return nil
		},
	}
	c.AddCommand(manifests, down, status, signal)
	return c
}
