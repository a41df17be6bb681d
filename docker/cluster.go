package docker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/redis/go-redis/v9"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"

	"github.com/redline-dev/redline/cluster"
)

// Port is the client port of every node; the bus port is Port+10000.
const Port = 6379

// Capabilities are the faults this runtime's clusters can cause, read off
// Cluster's methods: a fault interface Cluster gains is a capability
// without another list to update (cmd refuses the faults it lacks before
// anything starts).
func Capabilities() []cluster.Capability { return cluster.CapabilitiesOf((*Cluster)(nil)) }

// Cluster is a running cluster of containers. It implements cluster.Cluster,
// Killer, Pauser, Partitioner, Clock, Grower, LogSource and Describer.
type Cluster struct {
	rt      *Runtime
	name    string // unique: label value and name prefix
	spec    cluster.Spec
	flav    flavour
	image   string
	imageID string
	version string
	noClock string       // why clock skew is unavailable, "" if it works
	build   *ServerBuild // the binary in a redis image, nil for --image and reference
	storage *storage     // the nodes' faulting data directories (Spec.FaultFS), nil without
	netID   string
	netName string
	subnet  netip.Prefix
	gateway netip.Addr
	logf    func(string, ...any)

	mu      sync.Mutex
	nodes   []*node
	next    int                  // index of the next node name and IP
	net     map[string]*netState // cuts, loss and shaping in force, by node name
	offsets map[string]time.Duration
	closed  bool
}

type node struct {
	name string
	ip   netip.Addr
	id   string // container id
}

func (n *node) addr() string { return net.JoinHostPort(n.ip.String(), strconv.Itoa(Port)) }

func (n *node) public() cluster.Node {
	return cluster.Node{Name: n.name, Addr: n.addr(), Host: n.ip.String()}
}

// flavour is what differs between targets: the image, extra server
// arguments and environment, and how to skew the clock.
type flavour struct {
	target string
	image  func(ctx context.Context, r *Runtime, spec cluster.Spec, logf func(string, ...any)) (imageSpec, error)
	args   []string
	clock  func(ctx context.Context, c *Cluster, n *node, offset time.Duration) error
}

var flavours = map[string]flavour{
	"redis": {
		target: "redis",
		image: func(ctx context.Context, _ *Runtime, spec cluster.Spec, _ func(string, ...any)) (imageSpec, error) {
			if spec.ServerBinary == "" {
				return redisImage(ctx, nil)
			}
			b, err := InspectServer(ctx, spec.ServerBinary)
			if err != nil {
				return imageSpec{}, err
			}
			is, err := redisImage(ctx, &b)
			is.build = &b
			return is, err
		},
		args:  []string{"--repl-diskless-sync-delay", "0"},
		clock: fileClock,
	},
	"reference": {
		target: "reference",
		image: func(ctx context.Context, r *Runtime, _ cluster.Spec, logf func(string, ...any)) (imageSpec, error) {
			return referenceImage(ctx, r.opts.ReferenceBinary, logf)
		},
		clock: commandClock,
	},
}

// serverArgs are the redis-server style arguments every flavour gets.
func serverArgs(spec cluster.Spec, ip netip.Addr) []string {
	aof := "no"
	if spec.AppendOnly {
		aof = "yes"
	}
	return []string{
		"--port", strconv.Itoa(Port),
		"--cluster-enabled", "yes",
		"--cluster-config-file", "nodes.conf",
		"--cluster-node-timeout", strconv.FormatInt(spec.NodeTimeout.Milliseconds(), 10),
		"--cluster-announce-ip", ip.String(),
		"--dir", dataDir,
		"--protected-mode", "no",
		"--save", "",
		"--appendonly", aof,
		"--appendfsync", "everysec",
	}
}

// authorizeReplication makes a node's replica link authenticate as the
// run's user (CONFIG SET over the admin connection, again after every
// restart: the setting is not on the command line).
func authorizeReplication(ctx context.Context, cl *redis.Client, u cluster.Credentials) error {
	if u.User == "" {
		return nil
	}
	return cl.Do(ctx, "CONFIG", "SET", "masteruser", u.User, "masterauth", u.Password).Err()
}

var nameChars = regexp.MustCompile(`[^a-zA-Z0-9_.-]+`)

// Start builds the image if needed, starts spec.Nodes containers on a new
// network and forms a cluster of them. The cluster.Cluster it returns is a
// *Cluster. After a failed start nothing it created is left behind.
func (r *Runtime) Start(ctx context.Context, spec cluster.Spec) (cluster.Cluster, error) {
	c, err := r.StartCluster(ctx, spec)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// StartCluster is Start returning the concrete type.
func (r *Runtime) StartCluster(ctx context.Context, spec cluster.Spec) (*Cluster, error) {
	if r.opts.Form == nil {
		return nil, errors.New("docker: Options.Form is nil: pass clusteradmin.Form to docker.New")
	}
	c, err := r.newCluster(ctx, spec)
	if err != nil {
		return nil, err
	}
	if err := c.start(ctx); err != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if cerr := c.Close(cctx); cerr != nil {
			err = fmt.Errorf("%w (and cleaning up failed: %v; run `redline cluster down`)", err, cerr)
		}
		return nil, err
	}
	return c, nil
}

func (r *Runtime) newCluster(ctx context.Context, spec cluster.Spec) (*Cluster, error) {
	if spec.Target == "" {
		spec.Target = "reference"
	}
	flav, ok := flavours[spec.Target]
	if !ok {
		return nil, fmt.Errorf("docker: unknown target %q (want redis or reference)", spec.Target)
	}
	if spec.Nodes < 1 {
		return nil, fmt.Errorf("docker: a cluster needs at least 1 node, got %d", spec.Nodes)
	}
	if spec.Replicas < 0 || spec.Nodes/(spec.Replicas+1) < 1 {
		return nil, fmt.Errorf("docker: %d nodes cannot hold a primary with %d replicas each", spec.Nodes, spec.Replicas)
	}
	if spec.NodeTimeout <= 0 {
		spec.NodeTimeout = 2 * time.Second
	}
	logf := spec.Log
	if logf == nil {
		logf = r.opts.Log
	}
	base := strings.Trim(nameChars.ReplaceAllString(spec.Name, "-"), "-.")
	if base == "" {
		base = "cluster"
	}
	if len(base) > 40 {
		base = base[:40]
	}
	suffix := make([]byte, 3)
	rand.Read(suffix)
	c := &Cluster{
		rt: r, name: base + "-" + hex.EncodeToString(suffix), spec: spec, flav: flav, logf: logf,
		next: 1, net: map[string]*netState{}, offsets: map[string]time.Duration{},
	}
	if spec.Image != "" && spec.ServerBinary != "" {
		return nil, fmt.Errorf("docker: --image and --server-binary exclude each other: an image brings its own server")
	}
	if spec.ServerBinary != "" && flav.target != "redis" {
		return nil, fmt.Errorf("docker: --server-binary is tested as target redis, not %s", flav.target)
	}
	if spec.Image != "" {
		c.image = spec.Image
		res, err := r.cli.ImageInspect(ctx, spec.Image)
		if err != nil {
			return nil, fmt.Errorf("docker: image %s is not available locally (%v): build or load it first (nothing can be pulled here)", spec.Image, err)
		}
		c.imageID, c.version = res.ID, "custom"
		if flav.target == "redis" {
			c.noClock = "clock skew needs redline's own redis image (a custom --image has no clock shim)"
		}
		return c, nil
	}
	is, err := flav.image(ctx, r, spec, logf)
	if err != nil {
		return nil, err
	}
	c.image, c.imageID, err = r.ensureImage(ctx, is, logf)
	if err != nil {
		return nil, err
	}
	c.version, c.noClock, c.build = is.version, is.clock, is.build
	if is.clock != "" {
		logf("%s", is.clock)
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context) error {
	if err := c.createNetwork(ctx); err != nil {
		return err
	}
	if c.spec.FaultFS {
		s, err := newStorage(c.name)
		if err != nil {
			return err
		}
		c.storage = s
	}
	c.logf("starting %d %s nodes on network %s (%s)", c.spec.Nodes, c.spec.Target, c.netName, c.subnet)
	nodes := make([]*node, c.spec.Nodes)
	errs := make([]error, c.spec.Nodes)
	var wg sync.WaitGroup
	c.mu.Lock()
	for i := range nodes {
		nodes[i] = c.allocNode()
	}
	c.mu.Unlock()
	for i := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.startNode(ctx, nodes[i])
		}()
	}
	wg.Wait()
	c.mu.Lock()
	for _, n := range nodes {
		if n.id != "" {
			c.nodes = append(c.nodes, n)
		}
	}
	c.mu.Unlock()
	for _, err := range errs {
		var rejected *ConfigError
		if errors.As(err, &rejected) {
			return err // every node says the same; once is enough
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	addrs := make([]string, len(nodes))
	for i, n := range nodes {
		addrs[i] = n.addr()
	}
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second+20*c.spec.NodeTimeout)
	defer cancel()
	if err := c.rt.opts.Form(fctx, c.spec.RunUser, addrs, c.spec.Replicas, c.logf); err != nil {
		return fmt.Errorf("docker: %w", err)
	}
	if c.storage != nil {
		// What forming wrote (nodes.conf with its peers and slots) is
		// on disk before any power cut: a cut takes what came after.
		c.storage.checkpoint()
		c.logf("data directories through redline's FUSE layer under %s (a power cut loses what was not fsynced, or written back after %s)", c.storage.dir, storageWriteback)
	}
	c.logf("cluster %s is up: %s", c.name, strings.Join(addrs, " "))
	if c.version == "custom" {
		c.version = serverVersion(ctx, c.spec.RunUser, addrs[0])
	}
	return nil
}

// addOwner labels what an owned cluster creates with this process.
func (c *Cluster) addOwner(labels map[string]string) {
	if !c.rt.opts.Owned {
		return
	}
	for k, v := range c.rt.owner {
		labels[k] = v
	}
}

// allocNode names the next node and picks its IP (.2, .3, ...). c.mu held.
func (c *Cluster) allocNode() *node {
	i := c.next
	c.next++
	ip := c.subnet.Addr()
	for k := 0; k <= i; k++ {
		ip = ip.Next()
	}
	return &node{name: fmt.Sprintf("n%d", i), ip: ip}
}

// createNetwork makes a bridge network with a /24 of our own, so nodes can
// keep static IPs across restarts. It avoids subnets of host interfaces and
// retries when Docker says another network overlaps.
func (c *Cluster) createNetwork(ctx context.Context) error {
	hostNets := hostPrefixes()
	labels := testcontainers.GenericLabels()
	labels[LabelRedline] = "1"
	labels[LabelCluster] = c.name
	c.addOwner(labels)
	var lastErr error
	seed := make([]byte, 1)
	rand.Read(seed)
	for attempt := 0; attempt < 64; attempt++ {
		third := (int(seed[0]) + attempt*37) % 256
		subnet := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 221, byte(third), 0}), 24)
		if overlapsAny(subnet, hostNets) {
			continue
		}
		gw := subnet.Addr().Next()
		name := "redline-" + c.name
		res, err := c.rt.cli.NetworkCreate(ctx, name, client.NetworkCreateOptions{
			Driver: "bridge",
			Labels: labels,
			IPAM:   &network.IPAM{Config: []network.IPAMConfig{{Subnet: subnet, Gateway: gw}}},
		})
		if err != nil {
			lastErr = err
			if strings.Contains(err.Error(), "overlap") {
				continue
			}
			return fmt.Errorf("docker: creating network %s: %w", name, err)
		}
		c.netID, c.netName, c.subnet, c.gateway = res.ID, name, subnet, gw
		return nil
	}
	return fmt.Errorf("docker: no free /24 in 10.221.0.0/16 for the cluster network: %v", lastErr)
}

func hostPrefixes() []netip.Prefix {
	var out []netip.Prefix
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, p.Masked())
		}
	}
	return out
}

func overlapsAny(p netip.Prefix, others []netip.Prefix) bool {
	for _, o := range others {
		if o.Overlaps(p) {
			return true
		}
	}
	return false
}

// startNode creates and starts one container and waits until it answers PING.
func (c *Cluster) startNode(ctx context.Context, n *node) error {
	args := append(serverArgs(c.spec, n.ip), c.flav.args...)
	args = append(args, cluster.RunUserArgs(c.spec.RunUser)...)
	args = append(args, cluster.ConfigArgs(c.spec.ServerConfig)...)
	labels := map[string]string{LabelRedline: "1", LabelCluster: c.name, LabelNode: n.name, LabelTarget: c.spec.Target}
	c.addOwner(labels)
	netName := c.netName
	ip := n.ip
	custom := c.spec.Image != ""
	var bind string
	if c.storage != nil {
		var err error
		if bind, err = c.storage.mount(c.name, n.name); err != nil {
			return err
		}
	}
	req := testcontainers.ContainerRequest{
		ConfigModifier: func(cfg *container.Config) {
			// An image of the user's may lack /data (redline passes
			// --dir /data): an anonymous volume creates it, and
			// Close removes it with the container.
			if custom && bind == "" {
				cfg.Volumes = map[string]struct{}{dataDir: {}}
			}
		},
		HostConfigModifier: func(hc *container.HostConfig) {
			if bind != "" {
				hc.Binds = append(hc.Binds, bind+":"+dataDir)
			}
		},
		Image:    c.image,
		Cmd:      args,
		Labels:   labels,
		Name:     "redline-" + c.name + "-" + n.name,
		Networks: []string{netName},
		EndpointSettingsModifier: func(m map[string]*network.EndpointSettings) {
			es := m[netName]
			if es == nil {
				es = &network.EndpointSettings{}
				m[netName] = es
			}
			es.IPAMConfig = &network.EndpointIPAMConfig{IPv4Address: ip}
		},
	}
	ctr, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{
		ContainerRequest: req, Started: true, Logger: tclog.NewNoopLogger(),
	})
	if ctr != nil {
		n.id = ctr.GetContainerID()
	}
	if err != nil {
		return fmt.Errorf("docker: starting node %s (%s) from image %s: %w", n.name, n.ip, c.image, err)
	}
	return c.waitReady(ctx, n)
}

// waitReady polls PING until the node answers; it fails early with the log
// tail when the container exits.
func (c *Cluster) waitReady(ctx context.Context, n *node) error {
	ctx, cancel := context.WithTimeout(ctx, c.rt.opts.StartTimeout)
	defer cancel()
	for {
		// A client per attempt: go-redis's pool, after as many refused
		// dials as its size, dials again only once a second, which made
		// every restart wait up to a second after the server was ready
		// (restart n1: container started in 2.70s, answered PING 1.08s
		// later, the server ready 0.43 s after the start).
		cl := c.spec.RunUser.AdminClient(n.addr())
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		err := cl.Ping(pctx).Err()
		if err == nil {
			err = authorizeReplication(pctx, cl, c.spec.RunUser)
		}
		pcancel()
		cl.Close()
		if err == nil {
			return nil
		}
		ins, ierr := c.rt.cli.ContainerInspect(ctx, n.id, client.ContainerInspectOptions{})
		if ierr == nil && ins.Container.State != nil && !ins.Container.State.Running {
			tail := c.logTail(n, 20)
			if strings.Contains(tail, "FATAL CONFIG FILE ERROR") || strings.Contains(tail, "Bad directive") {
				return &ConfigError{Node: n.name, Log: tail}
			}
			return fmt.Errorf("docker: node %s exited with code %d before answering PING; log tail:\n%s",
				n.name, ins.Container.State.ExitCode, tail)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("docker: node %s (%s) did not answer PING within %s: %v; log tail:\n%s",
				n.name, n.addr(), c.rt.opts.StartTimeout, err, c.logTail(n, 20))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ConfigError is a node refusing its configuration at start (a bad
// --server-config setting): the server's own words are in Log.
type ConfigError struct {
	Node string
	Log  string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("the server rejected its configuration on node %s (check --server-config):\n%s", e.Node, strings.TrimSpace(e.Log))
}

// serverVersion asks a node which server it is (INFO server), for images
// redline did not build; Valkey reports its own version beside Redis's.
func serverVersion(ctx context.Context, creds cluster.Credentials, addr string) string {
	cl := creds.AdminClient(addr)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	info, err := cl.Info(ctx, "server").Result()
	if err != nil {
		return "custom (INFO server failed: " + err.Error() + ")"
	}
	fields := map[string]string{}
	for _, line := range strings.Split(info, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			fields[k] = v
		}
	}
	v := "redis " + fields["redis_version"]
	for _, other := range []string{"valkey_version", "keydb_version"} {
		if fields[other] != "" {
			v = strings.TrimSuffix(other, "_version") + " " + fields[other] + " (" + v + ")"
		}
	}
	return v
}

func (c *Cluster) logTail(n *node, lines int) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rc, err := c.logs(ctx, n, strconv.Itoa(lines))
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	return string(b)
}

// Nodes lists the members in a stable order (n1, n2, ...).
func (c *Cluster) Nodes() []cluster.Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]cluster.Node, len(c.nodes))
	for i, n := range c.nodes {
		out[i] = n.public()
	}
	return out
}

// Addrs lists the nodes' client addresses.
func (c *Cluster) Addrs() []string {
	ns := c.Nodes()
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.Addr
	}
	return out
}

// Name is the cluster's unique name (label redline.cluster).
func (c *Cluster) Name() string { return c.name }

// Gateway is the address the harness host has on the cluster network.
func (c *Cluster) Gateway() string { return c.gateway.String() }

// Close removes the containers, the network and any volumes of the cluster.
func (c *Cluster) Close(ctx context.Context) error {
	c.mu.Lock()
	c.closed = true
	c.nodes = nil
	c.mu.Unlock()
	_, err := cleanupLabel(ctx, c.rt.cli, LabelCluster+"="+c.name)
	if c.storage != nil {
		// The containers are gone: nothing uses the mounts any more.
		err = errors.Join(err, c.storage.close())
	}
	return err
}

// Describe reports the runtime, target and image for config.json.
func (c *Cluster) Describe() map[string]string {
	d := map[string]string{
		"runtime":       "docker",
		"target":        c.spec.Target,
		"cluster":       c.name,
		"image":         c.image,
		"image_id":      c.imageID,
		"version":       c.version,
		"network":       c.netName,
		"subnet":        c.subnet.String(),
		"node_timeout":  c.spec.NodeTimeout.String(),
		"docker_engine": c.rt.host,
	}
	if c.build != nil {
		d["server_binary"] = c.build.Path
		d["server_version"] = c.build.VersionLine
		d["server_sha256"] = c.build.SHA256
	}
	if c.storage != nil {
		d["data_dirs"] = fmt.Sprintf("faultfs (FUSE; unsynced changes kept apart, written back after %s)", storageWriteback)
	}
	if len(c.spec.ServerConfig) > 0 {
		d["server_config"] = strings.Join(c.spec.ServerConfig, "; ")
	}
	return d
}

func (c *Cluster) node(name string) (*node, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, fmt.Errorf("docker: cluster %s is closed", c.name)
	}
	var names []string
	for _, n := range c.nodes {
		if n.name == name {
			return n, nil
		}
		names = append(names, n.name)
	}
	return nil, fmt.Errorf("docker: no node %q in cluster %s (nodes: %s)", name, c.name, strings.Join(names, ", "))
}

// Logs returns the node's server log (stdout and stderr of its container).
func (c *Cluster) Logs(ctx context.Context, name string) (io.ReadCloser, error) {
	n, err := c.node(name)
	if err != nil {
		return nil, err
	}
	return c.logs(ctx, n, "")
}

func (c *Cluster) logs(ctx context.Context, n *node, tail string) (io.ReadCloser, error) {
	rc, err := c.rt.cli.ContainerLogs(ctx, n.id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true, Tail: tail})
	if err != nil {
		return nil, fmt.Errorf("docker: logs of %s: %w", n.name, err)
	}
	pr, pw := io.Pipe()
	go func() {
		_, err := stdcopy.StdCopy(pw, pw, rc)
		rc.Close()
		pw.CloseWithError(err)
	}()
	return pr, nil
}

func isNotFound(err error) bool { return cerrdefs.IsNotFound(err) }

// Attach returns a handle on a running cluster that an earlier process
// started (see Clusters), found by its name label, with every fault. Its
// partition bookkeeping starts empty: Heal still removes every rule.
func (r *Runtime) Attach(ctx context.Context, name string) (*Cluster, error) {
	f := make(client.Filters).Add("label", LabelCluster+"="+name)
	ns, err := r.cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		return nil, fmt.Errorf("docker: listing networks: %w", err)
	}
	if len(ns.Items) != 1 {
		return nil, fmt.Errorf("docker: no running redline cluster named %q (found %d networks; `redline cluster status` lists them)", name, len(ns.Items))
	}
	netw := ns.Items[0]
	if len(netw.IPAM.Config) != 1 {
		return nil, fmt.Errorf("docker: network %s has %d subnets, want 1", netw.Name, len(netw.IPAM.Config))
	}
	cs, err := r.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return nil, fmt.Errorf("docker: listing containers: %w", err)
	}
	if len(cs.Items) == 0 {
		return nil, fmt.Errorf("docker: cluster %q has no containers", name)
	}
	c := &Cluster{
		rt: r, name: name, logf: r.opts.Log, net: map[string]*netState{}, offsets: map[string]time.Duration{},
		netID: netw.ID, netName: netw.Name, subnet: netw.IPAM.Config[0].Subnet, gateway: netw.IPAM.Config[0].Gateway,
		next: 1,
	}
	for _, ct := range cs.Items {
		ins, err := r.cli.ContainerInspect(ctx, ct.ID, client.ContainerInspectOptions{})
		if err != nil {
			return nil, fmt.Errorf("docker: inspecting %s: %w", ct.ID[:12], err)
		}
		cfg := ins.Container.Config
		if cfg == nil {
			return nil, fmt.Errorf("docker: container %s has no config", ct.ID[:12])
		}
		n := &node{name: cfg.Labels[LabelNode], id: ct.ID}
		if c.spec.Target == "" {
			c.spec = specFromArgs(cfg.Labels[LabelTarget], cfg.Cmd)
			c.image = cfg.Image
			c.imageID = ins.Container.Image
		}
		for i := 0; i+1 < len(cfg.Cmd); i++ {
			if cfg.Cmd[i] == "--cluster-announce-ip" {
				n.ip, _ = netip.ParseAddr(cfg.Cmd[i+1])
			}
		}
		if !n.ip.IsValid() || n.name == "" {
			return nil, fmt.Errorf("docker: container %s lacks a node name or announce IP", ct.ID[:12])
		}
		if k, err := strconv.Atoi(strings.TrimPrefix(n.name, "n")); err == nil && k >= c.next {
			c.next = k + 1
		}
		c.nodes = append(c.nodes, n)
	}
	sort.Slice(c.nodes, func(i, j int) bool { return cluster.CompareNames(c.nodes[i].name, c.nodes[j].name) < 0 })
	flav, ok := flavours[c.spec.Target]
	if !ok {
		return nil, fmt.Errorf("docker: cluster %q has unknown target %q", name, c.spec.Target)
	}
	c.flav = flav
	if flav.target == "redis" && c.image != "" && !strings.HasPrefix(c.image, "redline/redis:") {
		c.noClock = "clock skew needs redline's own redis image (a custom --image has no clock shim)"
	}
	c.version = "attached"
	return c, nil
}

// specFromArgs recovers the Spec a node was started with from its arguments.
func specFromArgs(target string, args []string) cluster.Spec {
	s := cluster.Spec{Target: target, NodeTimeout: 2 * time.Second}
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "--cluster-node-timeout":
			if ms, err := strconv.Atoi(args[i+1]); err == nil {
				s.NodeTimeout = time.Duration(ms) * time.Millisecond
			}
		case "--appendonly":
			s.AppendOnly = args[i+1] == "yes"
		}
	}
	return s
}
