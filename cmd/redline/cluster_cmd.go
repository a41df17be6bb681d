package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
	"github.com/redline-dev/redline/docker"
	"github.com/redline-dev/redline/harness"
)

// startCluster starts (or, for external, attaches to) the cluster of a run:
// owned by this process, so that if it dies the next redline reaps it.
// creds are the run's: an external cluster is discovered with them, a
// created one gets the run's user with their password (runUser).
func startCluster(ctx context.Context, cfg harness.Config, creds cluster.Credentials, log *harness.Log) (cluster.Cluster, error) {
	return startClusterFor(ctx, cfg, creds, log, true)
}

// startClusterFor starts a cluster; owned says whether it belongs to this
// process (a run) or outlives it (cluster up). Either way it first reaps
// the clusters of redline processes that died without tearing theirs down.
func startClusterFor(ctx context.Context, cfg harness.Config, creds cluster.Credentials, log *harness.Log, owned bool) (cluster.Cluster, error) {
	if cfg.Runtime == "kubernetes" {
		return startKube(ctx, cfg, creds, log)
	}
	if cfg.Target == "external" {
		// The cluster behind the seeds: every node it announces.
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		c, err := clusteradmin.OpenExternal(cctx, creds, cfg.Addrs)
		if err != nil {
			return nil, environmentFailed(fmt.Errorf("cannot reach the cluster at %s: %v; check the addresses and that the nodes run with cluster-enabled yes", strings.Join(cfg.Addrs, ","), err))
		}
		v := c.View()
		log.Printf("discovered %d nodes (%d primaries with slots) by %s", len(v.Members), len(v.Primaries()), v.From)
		return c, nil
	}
	rt, err := docker.New(docker.Options{Log: log.Printf, Owned: owned, Form: clusteradmin.Form})
	if err != nil {
		return nil, environmentFailed(err)
	}
	reaped, err := rt.ReapOrphans(ctx)
	for _, r := range reaped {
		log.Printf("%s", r)
	}
	if err != nil {
		log.Printf("reaping leftovers of dead runs: %v (run 'redline cluster down' to remove every redline cluster)", err)
	}
	log.Printf("starting a %d-node %s cluster (%d replicas per primary, node-timeout %s)", cfg.Nodes, cfg.Target, cfg.Replicas, cfg.NodeTimeout.D())
	c, err := rt.Start(ctx, cluster.Spec{
		Target:      cfg.Target,
		Nodes:       cfg.Nodes,
		Replicas:    cfg.Replicas,
		NodeTimeout: cfg.NodeTimeout.D(),
		AppendOnly:  true,
		Image:       cfg.Image,
		Name:        cfg.TestName,
		Log:         log.Printf,
		// The mounts are served by this process: only a cluster that
		// ends with it (a run's) gets them.
		FaultFS: owned && wantsStorageFaults(cfg.Nemesis),

		ServerBinary: cfg.ServerBinary,
		ServerConfig: cfg.ServerConfig,
		RunUser:      runUser(cfg, creds),
	})
	if err != nil {
		var rejected *docker.ConfigError
		if errors.As(err, &rejected) {
			return nil, badArgs("%v", err)
		}
		return nil, fmt.Errorf("starting the %s cluster: %w", cfg.Target, err)
	}
	for _, n := range c.Nodes() {
		log.Printf("node %s at %s", n.Name, n.Addr)
	}
	return c, nil
}

// wantsStorageFaults says the run's faults need the nodes' data
// directories through docker's FUSE layer: power or disk named, or "all"
// on a machine that can mount it (elsewhere "all" goes without them).
func wantsStorageFaults(names []string) bool {
	for _, raw := range names {
		f, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(raw)), ":")
		switch f {
		case "power", "disk":
			return true
		case "all":
			if docker.StorageFaultsAvailable() == nil {
				return true
			}
		}
	}
	return false
}

func newClusterCmd(stdout, stderr io.Writer) *cobra.Command {
	c := &cobra.Command{
		Use:   "cluster",
		Short: "Start, inspect and remove clusters in containers",
	}
	var cfg harness.Config
	up := &cobra.Command{
		Use:   "up",
		Short: "Start a cluster in containers and print its node addresses",
		Long: `Start a cluster and leave it running. Connect with 'redis-cli -c -h <ip> -p <port>'
or test it with 'redline run --addrs ...'. Remove it with 'redline cluster down'.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch cfg.Target {
			case "reference", "redis":
			default:
				return badArgs("unknown --target %q: choose reference or redis", cfg.Target)
			}
			if cfg.Nodes/(cfg.Replicas+1) < 3 || cfg.Replicas < 0 {
				return badArgs("--nodes %d with --replicas %d leaves fewer than 3 primaries", cfg.Nodes, cfg.Replicas)
			}
			if err := validateServer(&cfg, cmd.Flags().Changed("target")); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			cfg.TestName = "cluster-" + cfg.Target
			log := harness.NewLog(nil, stderr)
			// No --user here: nodes without AUTH, reached without credentials.
			cl, err := startClusterFor(ctx, cfg, cluster.Credentials{}, log, false)
			if err != nil {
				return harnessFailed(err)
			}
			var addrs []string
			for _, n := range cl.Nodes() {
				addrs = append(addrs, n.Addr)
			}
			fmt.Fprintln(stdout, strings.Join(addrs, ","))
			return nil
		},
	}
	up.Flags().StringVar(&cfg.Target, "target", "reference", "reference or redis")
	up.Flags().IntVar(&cfg.Nodes, "nodes", 6, "nodes to start")
	up.Flags().IntVar(&cfg.Replicas, "replicas", 1, "replicas per primary")
	up.Flags().DurationVar((*time.Duration)(&cfg.NodeTimeout), "node-timeout", 2*time.Second, "cluster-node-timeout")
	up.Flags().StringVar(&cfg.Image, "image", "", "local container image to use instead of building one (see README: its contract)")
	addServerFlags(up.Flags(), &cfg)

	down := &cobra.Command{
		Use:   "down",
		Short: "Remove every container, network and volume redline created",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			n, err := docker.Cleanup(ctx)
			if err != nil {
				return harnessFailed(err)
			}
			fmt.Fprintf(stdout, "removed %d resources\n", n)
			return nil
		},
	}

	var addrs string
	status := &cobra.Command{
		Use:   "status",
		Short: "Summarise CLUSTER NODES of a cluster",
		Args:  cobra.NoArgs,
		Long: `Summarise CLUSTER NODES. With --addrs, of that cluster; without, of every
cluster redline started in containers on this Docker Engine.`,
		RunE: func(*cobra.Command, []string) error {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if addrs != "" {
				list := splitList(addrs)
				if _, err := cluster.ExternalNodes(list); err != nil {
					return badArgs("--addrs: %v", err)
				}
				return printStatus(ctx, stdout, list)
			}
			running, err := docker.Clusters(ctx)
			if err != nil {
				return harnessFailed(err)
			}
			if len(running) == 0 {
				fmt.Fprintln(stdout, "no redline clusters are running ('redline cluster up' starts one)")
				return nil
			}
			for _, r := range running {
				var list []string
				for _, n := range r.Nodes {
					if n.Addr != "" {
						list = append(list, n.Addr)
					}
				}
				fmt.Fprintf(stdout, "cluster %s (%s): %s\n", r.Name, r.Target, strings.Join(list, ","))
				if err := printStatus(ctx, stdout, list); err != nil {
					fmt.Fprintf(stdout, "  %v\n", err)
				}
				fmt.Fprintln(stdout)
			}
			return nil
		},
	}
	status.Flags().StringVar(&addrs, "addrs", "", "host:port,... of any nodes of the cluster")
	c.AddCommand(up, down, status)
	return c
}

func linkState(connected bool) string {
	if connected {
		return "connected"
	}
	return "disconnected"
}

// printStatus prints one cluster's CLUSTER NODES as a table.
func printStatus(ctx context.Context, w io.Writer, addrs []string) error {
	nodes, err := clusteradmin.ReadNodes(ctx, cluster.Credentials{}, addrs)
	if err != nil {
		return harnessFailed(fmt.Errorf("cannot read CLUSTER NODES from %s: %w", strings.Join(addrs, ","), err))
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tADDR\tROLE\tFLAGS\tEPOCH\tLINK\tSLOTS")
	for _, n := range nodes {
		role := "replica"
		if n.IsPrimary() {
			role = "primary"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", n.ID[:min(8, len(n.ID))], n.Addr, role, strings.Join(n.Flags, ","), n.ConfigEpoch, linkState(n.Connected), n.RangesString())
	}
	fmt.Fprintf(tw, "slots covered: %d/16384\n", cluster.Covered(nodes))
	return tw.Flush()
}

// runUser is the ACL user a run asks every node it creates to have: --user
// with the password the run authenticates with (creds, from
// loadCredentials).
func runUser(cfg harness.Config, creds cluster.Credentials) cluster.Credentials {
	if cfg.User == "" {
		return cluster.Credentials{}
	}
	return cluster.Credentials{User: cfg.User, Password: creds.Password}
}
