// Package cluster describes what a runtime must offer the harness: starting
// and stopping a Redis Cluster, naming its nodes, and the faults it can cause.
// Runtimes (docker/, an external cluster) implement these interfaces; the
// runner and nemeses only ever see them. It is a leaf package of the project.
//
// Faults are optional interfaces: a nemesis type-asserts the Cluster for the
// capability it needs and says before the run starts when a target lacks it.
//
// Beside the interfaces it holds descriptions only: of nodes (Node, names
// ordered n2 before n10; CLUSTER NODES parsed into NodeInfo, slot map and
// owner; an external cluster's addresses checked into Nodes: nodes.go) and
// of how a connection to a node is opened (the send-once options every
// redline connection starts from, and the run's Credentials with their
// AdminClient: conn.go, credentials.go; no credentials are held in the
// package: each caller passes its run's). Everything done to a cluster through those connections
// (reading CLUSTER NODES or INFO, forming, converging, discovering, moving
// slots, repairing, journalling) lives in clusteradmin/.
package cluster

import (
	"context"
	"io"
	"slices"
	"strings"
	"time"
)

// Spec is what a runtime is asked to start.
type Spec struct {
	Target      string        // "reference" or "redis" (the image flavour)
	Nodes       int           // total nodes, primaries + replicas
	Replicas    int           // replicas per primary
	NodeTimeout time.Duration // cluster-node-timeout
	AppendOnly  bool          // appendonly yes (appendfsync everysec)
	Image       string        // override the image (users with a registry)
	// ServerBinary is a redis-server compatible binary on this host to pack
	// into the image instead of Debian's (target redis only).
	ServerBinary string
	// ServerConfig holds "directive value ..." settings every node gets.
	ServerConfig []string
	// RunUser, when its User is set, is the run's ACL user: every node has
	// it from its start (all commands, keys and channels) and replicas
	// authenticate to their primaries as it (masteruser/masterauth), so a
	// run works with the default user off. The password never goes on a
	// command line: only its SHA-256 does, the rest travels over admin
	// connections. The runtime's own admin connections (forming, PING,
	// clock) authenticate as it too: they are the run's credentials.
	RunUser Credentials
	// FaultFS mounts every node's data directory through a filesystem that
	// keeps what was not fsynced apart (docker/faultfs), so that the power
	// and disk faults can be caused (PowerCutter, DiskFaulter). It costs
	// every write of the data directory a trip through FUSE, and it lives
	// as long as the process that started the cluster.
	FaultFS bool
	// Name is a human label for containers and the network (e.g. test name).
	Name string
	// Log receives progress lines ("building image", "forming cluster").
	Log func(format string, args ...any)
}

// ConfigArgs turns --server-config settings ("directive value ...") into
// redis-server arguments ("--directive", "value", ...), for every runtime
// that starts nodes. They come after redline's own arguments, so a setting
// also given there wins, as with redis-server's own command line.
func ConfigArgs(settings []string) []string {
	var out []string
	for _, s := range settings {
		f := strings.Fields(s)
		if len(f) == 0 {
			continue
		}
		out = append(out, "--"+strings.TrimPrefix(f[0], "--"))
		out = append(out, f[1:]...)
	}
	return out
}

// Node is one cluster member as the harness addresses it.
type Node struct {
	Name string // stable name: "n1", "n2", ...
	Addr string // ip:port clients dial
	// Host is the IP as seen by peers (the address partitions filter on).
	Host string
}

// CompareNames orders node names "n2" before "n10".
func CompareNames(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

// SortedNodes returns a copy of ns sorted by name (CompareNames).
func SortedNodes(ns []Node) []Node {
	ns = slices.Clone(ns)
	slices.SortFunc(ns, func(a, b Node) int { return CompareNames(a.Name, b.Name) })
	return ns
}

// Cluster is a running cluster.
type Cluster interface {
	// Nodes lists the members in a stable order.
	Nodes() []Node
	// Close tears the cluster down (containers, networks, volumes) when the
	// runtime created it; for an external cluster it only drops connections.
	Close(ctx context.Context) error
}

// Runtime starts clusters.
type Runtime interface {
	Name() string
	Start(ctx context.Context, spec Spec) (Cluster, error)
}

// Describer reports versions and image digests for config.json.
type Describer interface {
	Describe() map[string]string
}

// Killer can SIGKILL a node's process and start it again with its data kept.
type Killer interface {
	Kill(ctx context.Context, node string) error
	Restart(ctx context.Context, node string) error
}

// PowerCutter cuts nodes' power: at one instant every file in their data
// directories loses what was not fsynced (or, torn, keeps a prefix of its
// last unsynced write) and their processes are SIGKILLed. Killer.Restart
// powers a node on again.
type PowerCutter interface {
	Killer
	// StorageFaults is nil when the nodes' data directories can take
	// faults (Spec.FaultFS), else it says why not.
	StorageFaults() error
	PowerCut(ctx context.Context, nodes []string, loss PowerLoss) ([]NodeLoss, error)
}

// PowerLoss says how a power cut treats what was not fsynced.
type PowerLoss struct {
	// Torn keeps every unsynced change of a file but its last write, and
	// a prefix of that write, Seed picking its length.
	Torn bool
	Seed uint64
}

// NodeLoss is what a power cut took from one node's data directory.
type NodeLoss struct {
	Node string `json:"node"`
	// Files are the files that lost unsynced changes, with their sizes
	// at the cut and after ("appendonly.aof 5120->4096").
	Files []string `json:"files,omitempty"`
	// LostBytes is how much shorter they are, summed.
	LostBytes int64 `json:"lost_bytes"`
}

// DiskError is the error a faulty disk answers: ENOSPC (full) or EIO
// (failing); "" is a healthy disk.
type DiskError string

const (
	DiskFull    DiskError = "ENOSPC"
	DiskFailing DiskError = "EIO"
)

// DiskFaulter makes the storage under nodes' data directories answer an
// error on writes, truncates, creates and fsyncs until it is set to "".
type DiskFaulter interface {
	// StorageFaults is nil when the nodes' data directories can take
	// faults (Spec.FaultFS), else it says why not.
	StorageFaults() error
	SetDiskError(ctx context.Context, node string, err DiskError) error
}

// Pauser can freeze a node (SIGSTOP / docker pause) and resume it.
type Pauser interface {
	Pause(ctx context.Context, node string) error
	Resume(ctx context.Context, node string) error
}

// Partitioner cuts traffic between nodes inside their network namespaces.
// Cut makes node drop every packet from and to the given peers (node names);
// the harness still reaches every node. With clients true, traffic between
// node and the harness host is cut as well (a client stuck with a minority).
type Partitioner interface {
	Cut(ctx context.Context, node string, peers []string, clients bool) error
	// Heal removes every filter rule on every node.
	Heal(ctx context.Context) error
}

// OneWayPartitioner cuts node-to-node traffic in one direction only, as
// a link that fails to transmit does: packets are filtered one way, so a
// TCP connection between the two stalls both ways (its ACKs are lost) while
// what one side sends still arrives.
type OneWayPartitioner interface {
	Partitioner
	// CutOneWay drops every packet node from sends to the peers to (node
	// names); what they send to from still arrives. Cuts add up until
	// Partitioner.Heal removes them with every other cut.
	CutOneWay(ctx context.Context, from string, to []string) error
}

// Clock offsets a node's clock.
type Clock interface {
	SetClockOffset(ctx context.Context, node string, offset time.Duration) error
}

// Delayer holds the packets a node sends, as a congested link does (netem;
// on Kubernetes a Chaos Mesh NetworkChaos delay). It touches every packet
// the node sends, to peers and to clients alike. A zero latency removes it.
type Delayer interface {
	// Delay holds each packet node sends for latency, give or take jitter.
	Delay(ctx context.Context, node string, latency, jitter time.Duration) error
}

// Dropper drops a share of the packets a node sends, as a lossy link does
// (nftables numgen on docker, Chaos Mesh NetworkChaos loss on Kubernetes),
// to peers and to clients alike. A zero percent removes it.
type Dropper interface {
	// Loss drops percent (0-100) of the packets node sends.
	Loss(ctx context.Context, node string, percent int) error
}

// Shaper both delays and drops.
type Shaper interface {
	Delayer
	Dropper
}

// Throttler caps the rate at which a node sends, as a slow link does (a
// token bucket on its interface: tbf), to peers and clients alike; what
// exceeds the rate waits in a short queue and is dropped past it. Zero
// removes the cap.
type Throttler interface {
	Throttle(ctx context.Context, node string, bitsPerSecond int64) error
}

// CPULimiter caps the CPU time a node's processes get, as a share of one
// CPU (0.05: 5 ms of every 100 ms), as a slow or overloaded host does; the
// node is slow, not dead. Zero removes the cap.
type CPULimiter interface {
	LimitCPU(ctx context.Context, node string, cpus float64) error
}

// Prober is an optional interface of a Runtime or a Cluster that
// implements a fault's interface but may not be able to cause it on this
// host (a kernel without sch_netem cannot Delay). Probe says why it cannot
// (nil: it can), without touching any node, so a Runtime answers before a
// cluster starts. kind is one of the Probe* names.
type Prober interface {
	Probe(ctx context.Context, kind string) error
}

// The kinds a Prober answers for.
const (
	ProbeDelay    = "delay"     // Delayer
	ProbeLoss     = "loss"      // Dropper
	ProbeThrottle = "throttle"  // Throttler
	ProbeCPU      = "cpu-limit" // CPULimiter
	ProbeOneWay   = "one-way"   // OneWayPartitioner
)

// Grower adds a fresh, empty node (not yet part of the cluster: the caller
// MEETs it) and removes a node's container for good.
type Grower interface {
	AddNode(ctx context.Context) (Node, error)
	RemoveNode(ctx context.Context, node string) error
}

// LogSource gives a node's server log, for the results store.
type LogSource interface {
	Logs(ctx context.Context, node string) (io.ReadCloser, error)
}

// Refresher is a cluster whose node list follows the cluster's own
// topology (an external cluster known from a seed): Refresh rediscovers it.
type Refresher interface {
	Refresh(ctx context.Context) error
}

// GeneratorRun is one load generator of a distributed bench (`bench
// --generators N`): redline's own binary run with Args (`bench-generator
// --config ...`) beside the cluster, able to reach its nodes. Args are
// the same for every generator; the runtime tells each its Index: `--index
// N` after Args, or, for the pods of an Indexed Job, JOB_COMPLETION_INDEX
// (Index-1), which the Job controller sets.
type GeneratorRun struct {
	// Index is 1..N.
	Index int
	Args  []string
	// Due is when the generator should have ended (its start, traffic
	// and a margin): the runtime stops one still running then (a hung
	// or never-scheduled generator must not hang the run).
	Due time.Time
}

// GeneratorOutcome is what the runtime knows of one generator once it
// ended: its name there, its standard output (the report; where the
// runtime mixes in standard error, as a pod's log does, the report's
// lines are marked) and how it ended.
type GeneratorOutcome struct {
	Index int
	// Name is the pod, container or process that ran it.
	Name   string
	Output []byte
	// Log is its standard error where the runtime keeps it apart.
	Log []byte
	// Exited: the runtime saw it end, with ExitCode; Reason is the
	// runtime's word for how (OOMKilled, a signal, Error, deleted).
	Exited   bool
	ExitCode int
	Reason   string
	// Err: the runtime could not run it or could not fetch its output.
	Err error
}

// Generators is a runtime that runs redline's load generators beside its
// cluster: containers on the cluster's network, a Kubernetes Job's pods.
// RunGenerators starts them all, waits until every one ended (or ctx
// ends: they are stopped), removes them and returns one outcome per run,
// in order; it never drops one.
type Generators interface {
	RunGenerators(ctx context.Context, runs []GeneratorRun) []GeneratorOutcome
}
