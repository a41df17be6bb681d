package docker

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// Loss drops percent of the packets node sends (to its peers and to the
// harness alike, loopback aside) with an nftables rule in its namespace:
// numgen random mod 100 < percent, drop. 0 removes it. TCP resends what
// is dropped, so peers and clients see stalls, not lost bytes.
func (c *Cluster) Loss(ctx context.Context, name string, percent int) error {
	if percent < 0 || percent > 100 {
		return fmt.Errorf("docker: loss %s: %d%% is not a share of packets (0-100)", name, percent)
	}
	n, err := c.node(name)
	if err != nil {
		return err
	}
	c.mu.Lock()
	st := c.netOf(name)
	st.loss = percent
	want := st.rules()
	c.mu.Unlock()
	return c.applyRules(ctx, n, want)
}

// shaping is what the root qdisc of a node's interfaces holds.
type shaping struct {
	rate          int64 // bits per second
	delay, jitter time.Duration
}

func (s *netState) shaping() shaping {
	return shaping{rate: s.rate, delay: s.delay, jitter: s.jitter}
}

// Throttle caps the rate at which node sends to bitsPerSecond with a token
// bucket (tbf) as the root qdisc of its interfaces: a slow link, to peers
// and to the harness alike. What exceeds the rate waits in a queue of
// about 200 ms and is dropped past it. 0 removes the cap.
func (c *Cluster) Throttle(ctx context.Context, name string, bitsPerSecond int64) error {
	if bitsPerSecond < 0 {
		return fmt.Errorf("docker: throttle %s: negative rate %d", name, bitsPerSecond)
	}
	if bitsPerSecond > 0 {
		if err := c.rt.Probe(ctx, probeTbf); err != nil {
			return fmt.Errorf("docker: throttle %s: %w", name, err)
		}
	}
	return c.shape(ctx, name, func(st *netState) { st.rate = bitsPerSecond })
}

// Delay holds every packet node sends for latency, give or take jitter
// (netem as the root qdisc, or under the rate cap when one is in force).
// A delay needs the kernel's sch_netem: without it Delay says so (and
// Probe(cluster.ProbeDelay) says so before a run starts); removing one
// (latency 0) always works.
func (c *Cluster) Delay(ctx context.Context, name string, latency, jitter time.Duration) error {
	if latency > 0 {
		if err := c.rt.Probe(ctx, probeNetem); err != nil {
			return fmt.Errorf("docker: delay %s: %w", name, err)
		}
	}
	if latency < 0 || jitter < 0 {
		return fmt.Errorf("docker: delay %s: negative latency %s or jitter %s", name, latency, jitter)
	}
	if latency == 0 {
		jitter = 0
	}
	return c.shape(ctx, name, func(st *netState) { st.delay, st.jitter = latency, jitter })
}

// shape changes node's shaping with set and applies it.
func (c *Cluster) shape(ctx context.Context, name string, set func(*netState)) error {
	n, err := c.node(name)
	if err != nil {
		return err
	}
	c.mu.Lock()
	st := c.netOf(name)
	set(st)
	want := st.shaping()
	c.mu.Unlock()
	return c.applyShaping(ctx, n, want)
}

// applyShaping replaces the root qdisc of every interface but loopback in
// node's namespace: tbf for a rate cap, netem for a delay, netem under tbf
// for both, and the kernel's default when neither.
func (c *Cluster) applyShaping(ctx context.Context, n *node, sh shaping) error {
	return c.netns(ctx, n, "shape", func(fd int) error {
		h, err := netlink.NewHandleAt(netns.NsHandle(fd))
		if err != nil {
			return fmt.Errorf("docker: shape %s: netlink: %w", n.name, err)
		}
		defer h.Close()
		links, err := h.LinkList()
		if err != nil {
			return fmt.Errorf("docker: shape %s: listing interfaces: %w", n.name, err)
		}
		var errs []error
		for _, l := range links {
			if l.Attrs().Name == "lo" {
				continue
			}
			if err := setRootQdisc(h, l, sh); err != nil {
				errs = append(errs, fmt.Errorf("docker: shape %s on %s: %w", n.name, l.Attrs().Name, err))
			}
		}
		return errors.Join(errs...)
	})
}

// Handles of redline's qdiscs: tbf at the root (1:) with netem as its
// child (10:), or netem alone at the root.
const (
	tbfHandle   = 1
	netemHandle = 10
)

func setRootQdisc(h *netlink.Handle, l netlink.Link, sh shaping) error {
	idx := l.Attrs().Index
	// Remove what is there first: a root qdisc of another kind cannot be
	// changed into ours. The kernel's default (noqueue on a veth) has no
	// handle to remove.
	qs, err := h.QdiscList(l)
	if err != nil {
		return err
	}
	for _, q := range qs {
		if a := q.Attrs(); a.Parent == netlink.HANDLE_ROOT && a.Handle != 0 {
			if err := h.QdiscDel(q); err != nil {
				return fmt.Errorf("removing %s root qdisc: %w", q.Type(), err)
			}
		}
	}
	parent := uint32(netlink.HANDLE_ROOT)
	if sh.rate > 0 {
		rate := uint64(sh.rate / 8) // tbf counts bytes
		// The bucket holds 20 ms of sending, at least two full frames;
		// the queue behind it 200 ms, at least the bucket and a frame.
		burst := max(uint32(rate/50), 2*1514)
		limit := max(uint32(rate/5), burst+1514)
		tbf := &netlink.Tbf{
			QdiscAttrs: netlink.QdiscAttrs{LinkIndex: idx, Handle: netlink.MakeHandle(tbfHandle, 0), Parent: netlink.HANDLE_ROOT},
			Rate:       rate,
			Buffer:     netlink.Xmittime(rate, burst),
			Limit:      limit,
		}
		if err := h.QdiscAdd(tbf); err != nil {
			return fmt.Errorf("adding tbf at %d bit/s: %w", sh.rate, err)
		}
		parent = netlink.MakeHandle(tbfHandle, 1)
	}
	if sh.delay > 0 {
		nq := netlink.NewNetem(netlink.QdiscAttrs{LinkIndex: idx, Handle: netlink.MakeHandle(netemHandle, 0), Parent: parent},
			netlink.NetemQdiscAttrs{Latency: uint32(sh.delay.Microseconds()), Jitter: uint32(sh.jitter.Microseconds())})
		if err := h.QdiscAdd(nq); err != nil {
			return fmt.Errorf("adding netem delay %s: %w", sh.delay, err)
		}
	}
	return nil
}

// RootQdiscs lists the kinds of the root qdiscs on node's interfaces but
// loopback ("tbf" under a rate cap; "noqueue" or nothing without), as the
// kernel reports them, sorted; nil when the node is not running.
func (c *Cluster) RootQdiscs(ctx context.Context, name string) ([]string, error) {
	n, err := c.node(name)
	if err != nil {
		return nil, err
	}
	var out []string
	err = c.netns(ctx, n, "list qdiscs", func(fd int) error {
		h, err := netlink.NewHandleAt(netns.NsHandle(fd))
		if err != nil {
			return err
		}
		defer h.Close()
		links, err := h.LinkList()
		if err != nil {
			return err
		}
		for _, l := range links {
			if l.Attrs().Name == "lo" {
				continue
			}
			qs, err := h.QdiscList(l)
			if err != nil {
				return err
			}
			for _, q := range qs {
				if q.Attrs().Parent == netlink.HANDLE_ROOT {
					out = append(out, q.Type())
				}
			}
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}
