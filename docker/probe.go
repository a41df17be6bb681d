package docker

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"runtime"

	"github.com/google/nftables"
	"github.com/moby/moby/client"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/redline-dev/redline/cluster"
)

// The kernel pieces the faults of this runtime need.
const (
	probeNetem  = "sch_netem"
	probeTbf    = "sch_tbf"
	probeNumgen = "nft_numgen"
	probeNft    = "nf_tables"
)

// Probe says whether this host can cause a kind of fault (cluster.Prober):
// a delay needs the kernel's sch_netem, packet loss nftables' numgen, a
// rate cap sch_tbf, a one-way cut nftables, a CPU cap the engine's CFS
// quota. The kernel's pieces are tried in a network namespace of the
// probe's own, made and dropped on one OS thread, so no node is touched and
// the answer holds before any cluster starts. Answers are kept: the host
// does not change while redline runs. Like partitions, the kernel probes
// need root and a local Docker engine (the containers share this kernel).
func (r *Runtime) Probe(ctx context.Context, kind string) error {
	piece := map[string]string{
		cluster.ProbeDelay:    probeNetem,
		cluster.ProbeLoss:     probeNumgen,
		cluster.ProbeThrottle: probeTbf,
		cluster.ProbeOneWay:   probeNft,
	}[kind]
	switch {
	case piece != "":
		kind = piece
	case kind == cluster.ProbeCPU, kind == probeNetem, kind == probeTbf, kind == probeNumgen, kind == probeNft:
	default:
		return fmt.Errorf("docker: no probe for %q", kind)
	}
	r.probeMu.Lock()
	defer r.probeMu.Unlock()
	if err, ok := r.probed[kind]; ok {
		return err
	}
	var err error
	if kind == cluster.ProbeCPU {
		var info client.SystemInfoResult
		if info, err = r.cli.Info(ctx, client.InfoOptions{}); err == nil && !info.Info.CPUCfsQuota {
			err = errors.New("the Docker engine reports no CFS quota support: it cannot cap a container's CPU")
		}
		if err != nil && ctx.Err() != nil {
			return err // cut short: says nothing about the host
		}
	} else {
		err = inScratchNetns(func() error { return tryKernel(kind) })
	}
	if r.probed == nil {
		r.probed = map[string]error{}
	}
	r.probed[kind] = err
	return err
}

// Probe is the runtime's answer (cluster.Prober).
func (c *Cluster) Probe(ctx context.Context, kind string) error { return c.rt.Probe(ctx, kind) }

// inScratchNetns runs f on an OS thread moved into a new, empty network
// namespace. The thread is never given back to the Go scheduler: it ends
// with the goroutine, and the namespace with it.
func inScratchNetns(f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with this goroutine
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("making a network namespace to probe the kernel in needs root: %w", err)
			return
		}
		errc <- f()
	}()
	return <-errc
}

// tryKernel sets up what kind names in the scratch namespace: a qdisc on
// its loopback, or the redline table with a rule of the kind.
func tryKernel(kind string) error {
	switch kind {
	case probeNetem, probeTbf:
		h, err := netlink.NewHandle()
		if err != nil {
			return fmt.Errorf("netlink: %w", err)
		}
		defer h.Close()
		lo, err := h.LinkByName("lo")
		if err != nil {
			return fmt.Errorf("netlink: %w", err)
		}
		attrs := netlink.QdiscAttrs{LinkIndex: lo.Attrs().Index, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT}
		var q netlink.Qdisc = &netlink.Tbf{QdiscAttrs: attrs, Rate: 125000, Buffer: netlink.Xmittime(125000, 3028), Limit: 30000}
		if kind == probeNetem {
			q = netlink.NewNetem(attrs, netlink.NetemQdiscAttrs{Latency: 1000})
		}
		if err := h.QdiscAdd(q); err != nil {
			if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EOPNOTSUPP) {
				return fmt.Errorf("this kernel has no %s: adding a %s qdisc says %v", kind, q.Type(), err)
			}
			return fmt.Errorf("adding a %s qdisc: %w", q.Type(), err)
		}
		return nil
	case probeNumgen, probeNft:
		conn, err := nftables.New()
		if err != nil {
			return fmt.Errorf("netlink: %w", err)
		}
		defer conn.CloseLasting()
		r := nodeRules{loss: 1}
		if kind == probeNft {
			r = nodeRules{both: []netip.Addr{netip.MustParseAddr("192.0.2.1")}}
		}
		writeTable(conn, r)
		if err := conn.Flush(); err != nil {
			return fmt.Errorf("this kernel's nftables refuses redline's rules (%s): %w", kind, err)
		}
		return nil
	}
	return fmt.Errorf("no kernel probe %q", kind)
}

// HostProber answers the kernel probes of Probe before any runtime or
// cluster exists, so that `redline run` refuses a fault this host cannot
// cause (a delay without sch_netem) before it starts anything. The CPU
// quota, which only the engine can tell, is left to the cluster's own
// probe once it is up.
func HostProber() cluster.Prober { return hostProber{r: &Runtime{}} }

type hostProber struct{ r *Runtime }

func (h hostProber) Probe(ctx context.Context, kind string) error {
	if kind == cluster.ProbeCPU {
		return nil
	}
	return h.r.Probe(ctx, kind)
}
