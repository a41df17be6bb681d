// Package docker runs Redis Cluster nodes in local containers with
// testcontainers-go and implements cluster/ on them, faults included.
//
// Nothing is pulled: images are built FROM scratch out of files on this host
// (Debian's redis-server with its libraries and redline's clock shim, an
// LD_PRELOAD library built from clockshim/clockshim.c in libfaketime's place,
// or a static redline binary). Each cluster gets its own bridge network with a fixed
// subnet; every node has a static IP there, announces it to its peers, and the
// harness dials it directly (published ports are not used). Every container
// and network carries the label redline=1, so Cleanup finds leftovers.
package docker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"

	"github.com/redline-dev/redline/cluster"
)

// Labels on everything this package creates.
const (
	LabelRedline = "redline"         // "1" on containers and networks
	LabelCluster = "redline.cluster" // the cluster's name
	LabelNode    = "redline.node"    // the node's name ("n1")
	LabelTarget  = "redline.target"  // "redis" or "reference"
	labelImage   = "redline.image"   // on built images
)

// Options configure a Runtime.
type Options struct {
	// Log receives progress lines; Spec.Log overrides it per cluster.
	Log func(format string, args ...any)
	// ReferenceBinary is a static redline binary for the reference image
	// (default: $REDLINE_BINARY, the running binary if it is a static
	// "redline", else one built from the module source).
	ReferenceBinary string
	// StartTimeout bounds waiting for one node to answer PING (default 30s).
	StartTimeout time.Duration
	// Form makes one cluster of the fresh nodes a Start created
	// (clusteradmin.Form). The runtime's caller supplies it: forming is a
	// cluster admin operation, and this package depends on cluster/
	// only. Start refuses without it. It connects with the spec's RunUser,
	// as every admin connection of this runtime does: the credentials the
	// run holds for the nodes it asked for.
	Form func(ctx context.Context, creds cluster.Credentials, addrs []string, replicas int, log func(string, ...any)) error
	// Owned clusters carry this process's identity in their labels, and
	// ReapOrphans removes them once the process is gone. `redline cluster
	// up` leaves it false: its cluster outlives the command.
	Owned bool
}

// Runtime starts clusters in containers. It implements cluster.Runtime.
type Runtime struct {
	opts     Options
	provider *testcontainers.DockerProvider
	cli      client.APIClient
	host     string
	owner    map[string]string // labels of this process (Options.Owned)

	probeMu sync.Mutex
	probed  map[string]error // Probe's answers by kind: the host does not change
}

var setupOnce sync.Once

// setup disables Ryuk (its image would be pulled) before testcontainers reads
// its configuration, and quiets its logger.
func setup() {
	setupOnce.Do(func() {
		if os.Getenv("TESTCONTAINERS_RYUK_DISABLED") == "" {
			os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
		}
		tclog.SetDefault(tclog.NewNoopLogger())
	})
}

// engineClient opens a plain Docker API client from the environment.
func engineClient() (*client.Client, error) {
	setup()
	c, err := client.New(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("docker: bad Docker client settings (DOCKER_HOST=%q): %w", os.Getenv("DOCKER_HOST"), err)
	}
	return c, nil
}

// Ping checks that the Docker engine answers.
func Ping(ctx context.Context) error {
	c, err := engineClient()
	if err != nil {
		return err
	}
	defer c.Close()
	return ping(ctx, c)
}

func ping(ctx context.Context, c *client.Client) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := c.Ping(ctx, client.PingOptions{}); err != nil {
		return fmt.Errorf("docker: cannot reach the Docker engine at %s: %v: start dockerd or set DOCKER_HOST", c.DaemonHost(), err)
	}
	return nil
}

// New checks that Docker answers and returns a Runtime.
func New(opts Options) (*Runtime, error) {
	c, err := engineClient()
	if err != nil {
		return nil, err
	}
	host := c.DaemonHost()
	err = ping(context.Background(), c)
	c.Close()
	if err != nil {
		return nil, err
	}
	p, err := testcontainers.NewDockerProvider()
	if err != nil {
		return nil, fmt.Errorf("docker: testcontainers cannot use the Docker engine at %s: %w", host, err)
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 30 * time.Second
	}
	if opts.Log == nil {
		opts.Log = func(string, ...any) {}
	}
	return &Runtime{opts: opts, provider: p, cli: p.Client(), host: host, owner: ownerLabels()}, nil
}

// Name is "docker".
func (r *Runtime) Name() string { return "docker" }

// Close releases the Docker client (clusters keep running).
func (r *Runtime) Close() error { return r.provider.Close() }

// Cleanup removes every container, network and volume labelled redline=1,
// whoever started them; it returns how many objects it removed.
func Cleanup(ctx context.Context) (int, error) {
	c, err := engineClient()
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if err := ping(ctx, c); err != nil {
		return 0, err
	}
	return cleanupLabel(ctx, c, LabelRedline+"=1")
}

// CleanupCluster removes what belongs to the cluster with this name.
func CleanupCluster(ctx context.Context, name string) (int, error) {
	c, err := engineClient()
	if err != nil {
		return 0, err
	}
	defer c.Close()
	return cleanupLabel(ctx, c, LabelCluster+"="+name)
}

func cleanupLabel(ctx context.Context, c client.APIClient, label string) (int, error) {
	f := make(client.Filters).Add("label", label)
	removed := 0
	var errs []error
	cs, err := c.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return 0, fmt.Errorf("docker: listing containers: %w", err)
	}
	for _, ct := range cs.Items {
		if _, err := c.ContainerRemove(ctx, ct.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("removing container %s: %w", ct.ID[:12], err))
			continue
		}
		removed++
	}
	ns, err := c.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		errs = append(errs, fmt.Errorf("listing networks: %w", err))
	} else {
		for _, n := range ns.Items {
			if _, err := c.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{}); err != nil && !isNotFound(err) {
				errs = append(errs, fmt.Errorf("removing network %s: %w", n.Name, err))
				continue
			}
			removed++
		}
	}
	vs, err := c.VolumeList(ctx, client.VolumeListOptions{Filters: f})
	if err != nil {
		errs = append(errs, fmt.Errorf("listing volumes: %w", err))
	} else {
		for _, v := range vs.Items {
			if _, err := c.VolumeRemove(ctx, v.Name, client.VolumeRemoveOptions{Force: true}); err != nil && !isNotFound(err) {
				errs = append(errs, fmt.Errorf("removing volume %s: %w", v.Name, err))
				continue
			}
			removed++
		}
	}
	if len(errs) > 0 {
		return removed, fmt.Errorf("docker cleanup: %w", errors.Join(errs...))
	}
	return removed, nil
}

// Running is a cluster found by its labels, e.g. one `redline cluster up`
// left running.
type Running struct {
	Name   string
	Target string
	Nodes  []cluster.Node // sorted by name; Addr empty for a stopped container
}

// Clusters lists the redline clusters that have containers on this engine.
func Clusters(ctx context.Context) ([]Running, error) {
	c, err := engineClient()
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := ping(ctx, c); err != nil {
		return nil, err
	}
	f := make(client.Filters).Add("label", LabelRedline+"=1")
	cs, err := c.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return nil, fmt.Errorf("docker: listing containers: %w", err)
	}
	byName := map[string]*Running{}
	for _, ct := range cs.Items {
		name := ct.Labels[LabelCluster]
		r := byName[name]
		if r == nil {
			r = &Running{Name: name, Target: ct.Labels[LabelTarget]}
			byName[name] = r
		}
		n := cluster.Node{Name: ct.Labels[LabelNode]}
		if ct.State == container.StateRunning && ct.NetworkSettings != nil {
			for _, es := range ct.NetworkSettings.Networks {
				if es != nil && es.IPAddress.IsValid() {
					n.Host = es.IPAddress.String()
					n.Addr = net.JoinHostPort(n.Host, strconv.Itoa(Port))
				}
			}
		}
		r.Nodes = append(r.Nodes, n)
	}
	out := make([]Running, 0, len(byName))
	for _, r := range byName {
		sort.Slice(r.Nodes, func(i, j int) bool { return cluster.CompareNames(r.Nodes[i].Name, r.Nodes[j].Name) < 0 })
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
