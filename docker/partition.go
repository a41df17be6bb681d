package docker

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"sort"
	"time"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/moby/moby/client"
	"golang.org/x/sys/unix"
)

// netState is what redline holds in force in one node's network
// namespace: the addresses it drops packets from and to (a cut), those it
// drops packets to only (a one-way cut), the share of the packets it
// sends that it drops (loss), and the shaping of what it sends (a rate cap,
// a delay). A namespace dies with its container's process: Restart applies
// the state again.
type netState struct {
	cut    map[netip.Addr]bool // both ways
	mute   map[netip.Addr]bool // packets to these only
	loss   int                 // percent of sent packets dropped
	rate   int64               // bits per second, 0: no cap
	delay  time.Duration       // netem latency, 0: none
	jitter time.Duration
}

// rules is what the nftables table of a node holds.
func (s *netState) rules() nodeRules {
	if s == nil {
		return nodeRules{}
	}
	return nodeRules{both: sortedAddrs(s.cut), out: sortedAddrs(s.mute), loss: s.loss}
}

// netOf returns node's state, made on first use. Callers hold c.mu.
func (c *Cluster) netOf(name string) *netState {
	st := c.net[name]
	if st == nil {
		st = &netState{cut: map[netip.Addr]bool{}, mute: map[netip.Addr]bool{}}
		c.net[name] = st
	}
	return st
}

const nftTable = "redline"

// Cut makes node drop every packet from and to the peers (node names), in
// its own network namespace; with clients also the harness host (the
// network's gateway). Cuts add up until Heal. Rules live in the container's
// network namespace, which a Restart replaces: Restart applies them again.
// Partitions need a local Docker engine and root (the namespace is opened
// through /proc/<pid>/ns/net).
func (c *Cluster) Cut(ctx context.Context, name string, peers []string, clients bool) error {
	n, ips, err := c.peerAddrs(name, peers)
	if err != nil {
		return err
	}
	if clients {
		ips = append(ips, c.gateway)
	}
	c.mu.Lock()
	st := c.netOf(name)
	for _, ip := range ips {
		st.cut[ip] = true
	}
	want := st.rules()
	c.mu.Unlock()
	return c.applyRules(ctx, n, want)
}

// CutOneWay makes node from drop every packet it sends to the peers to
// (node names), in its own network namespace; what they send to it still
// arrives. As with Cut, cuts add up until Heal and a Restart applies them
// again.
func (c *Cluster) CutOneWay(ctx context.Context, from string, to []string) error {
	n, ips, err := c.peerAddrs(from, to)
	if err != nil {
		return err
	}
	c.mu.Lock()
	st := c.netOf(from)
	for _, ip := range ips {
		st.mute[ip] = true
	}
	want := st.rules()
	c.mu.Unlock()
	return c.applyRules(ctx, n, want)
}

// peerAddrs resolves node name and the addresses of its peers.
func (c *Cluster) peerAddrs(name string, peers []string) (*node, []netip.Addr, error) {
	n, err := c.node(name)
	if err != nil {
		return nil, nil, err
	}
	var ips []netip.Addr
	for _, p := range peers {
		pn, err := c.node(p)
		if err != nil {
			return nil, nil, err
		}
		if pn == n {
			return nil, nil, fmt.Errorf("docker: cannot cut node %s from itself", name)
		}
		ips = append(ips, pn.ip)
	}
	return n, ips, nil
}

// Heal removes every cut, both ways and one way, on every node (packet
// loss and shaping stay: their faults remove them).
func (c *Cluster) Heal(ctx context.Context) error {
	c.mu.Lock()
	nodes := append([]*node(nil), c.nodes...)
	want := map[string]nodeRules{}
	for _, n := range nodes {
		st := c.net[n.name]
		if st != nil {
			clear(st.cut)
			clear(st.mute)
		}
		want[n.name] = st.rules()
	}
	c.mu.Unlock()
	var firstErr error
	for _, n := range nodes {
		if err := c.applyRules(ctx, n, want[n.name]); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}

// reapplyNet restores a node's rules and shaping after its namespace was
// recreated.
func (c *Cluster) reapplyNet(ctx context.Context, n *node) error {
	c.mu.Lock()
	st := c.net[n.name]
	var want nodeRules
	var sh shaping
	if st != nil {
		want, sh = st.rules(), st.shaping()
	}
	c.mu.Unlock()
	var errs []error
	if !want.empty() {
		errs = append(errs, c.applyRules(ctx, n, want))
	}
	if sh != (shaping{}) {
		errs = append(errs, c.applyShaping(ctx, n, sh))
	}
	return errors.Join(errs...)
}

func sortedAddrs(m map[netip.Addr]bool) []netip.Addr {
	out := make([]netip.Addr, 0, len(m))
	for a := range m {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Less(out[j]) })
	return out
}

// nodeRules is the content of a node's redline table: addresses dropped
// both ways, addresses dropped on the way out only, and the share of all
// it sends (loopback aside) that it drops.
type nodeRules struct {
	both, out []netip.Addr
	loss      int
}

func (r nodeRules) empty() bool { return len(r.both) == 0 && len(r.out) == 0 && r.loss == 0 }

// netns opens the network namespace of n's container and calls f with its
// file descriptor; ran is false (and f not called) when the container is
// not running (no namespace: the state is applied by Restart) or gone.
func (c *Cluster) netns(ctx context.Context, n *node, what string, f func(fd int) error) error {
	ins, err := c.rt.cli.ContainerInspect(ctx, n.id, client.ContainerInspectOptions{})
	if err != nil {
		if isNotFound(err) {
			return nil // container gone: nothing to apply or undo
		}
		return fmt.Errorf("docker: %s %s: %w", what, n.name, err)
	}
	st := ins.Container.State
	if st == nil || st.Pid == 0 {
		return nil
	}
	ns, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", st.Pid))
	if err != nil {
		return fmt.Errorf("docker: %s %s: opening its network namespace needs root and a local Docker engine: %w", what, n.name, err)
	}
	defer ns.Close()
	return f(int(ns.Fd()))
}

// applyRules replaces the node's redline table with one holding r
// (nothing at all when r is empty), in one netlink transaction.
func (c *Cluster) applyRules(ctx context.Context, n *node, r nodeRules) error {
	return c.netns(ctx, n, "partition", func(fd int) error {
		conn, err := nftables.New(nftables.WithNetNSFd(fd))
		if err != nil {
			return fmt.Errorf("docker: partition %s: netlink: %w", n.name, err)
		}
		defer conn.CloseLasting()
		writeTable(conn, r)
		if err := conn.Flush(); err != nil {
			return fmt.Errorf("docker: partition %s: nftables: %w (is the nf_tables kernel module available?)", n.name, err)
		}
		return nil
	})
}

// writeTable queues the commands that leave the redline table holding r.
func writeTable(conn *nftables.Conn, r nodeRules) {
	t := &nftables.Table{Family: nftables.TableFamilyIPv4, Name: nftTable}
	// add + delete + (add) makes the result independent of what was there.
	conn.AddTable(t)
	conn.DelTable(t)
	if r.empty() {
		return
	}
	conn.AddTable(t)
	policy := nftables.ChainPolicyAccept
	in := conn.AddChain(&nftables.Chain{Name: "in", Table: t, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookInput, Priority: nftables.ChainPriorityFilter, Policy: &policy})
	out := conn.AddChain(&nftables.Chain{Name: "out", Table: t, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookOutput, Priority: nftables.ChainPriorityFilter, Policy: &policy})
	for _, ip := range r.both {
		conn.AddRule(&nftables.Rule{Table: t, Chain: in, Exprs: dropAddr(12, ip)})  // saddr
		conn.AddRule(&nftables.Rule{Table: t, Chain: out, Exprs: dropAddr(16, ip)}) // daddr
	}
	for _, ip := range r.out {
		conn.AddRule(&nftables.Rule{Table: t, Chain: out, Exprs: dropAddr(16, ip)}) // daddr
	}
	if r.loss > 0 {
		conn.AddRule(&nftables.Rule{Table: t, Chain: out, Exprs: dropShare(r.loss)})
	}
}

// dropShare drops percent of the packets that leave by any interface but
// loopback: oifname != "lo" numgen random mod 100 < percent drop. numgen
// puts its number in host byte order and cmp compares bytes, so it is
// turned to network order first, as nft itself does.
func dropShare(percent int) []expr.Any {
	lo := make([]byte, 16) // IFNAMSIZ, zero padded
	copy(lo, "lo")
	return []expr.Any{
		&expr.Meta{Key: expr.MetaKeyOIFNAME, Register: 1},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: lo},
		&expr.Numgen{Register: 1, Modulus: 100, Type: unix.NFT_NG_RANDOM},
		&expr.Byteorder{SourceRegister: 1, DestRegister: 1, Op: expr.ByteorderHton, Len: 4, Size: 4},
		&expr.Cmp{Op: expr.CmpOpLt, Register: 1, Data: binary.BigEndian.AppendUint32(nil, uint32(percent))},
		&expr.Verdict{Kind: expr.VerdictDrop},
	}
}

// dropAddr: drop when the IPv4 address at offset (12 source, 16 destination) is ip.
func dropAddr(offset uint32, ip netip.Addr) []expr.Any {
	b := ip.As4()
	return []expr.Any{
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: offset, Len: 4},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: b[:]},
		&expr.Verdict{Kind: expr.VerdictDrop},
	}
}

// DropRules counts the drop rules in the node's namespace (0 when it has no
// redline table or is not running). It reads the kernel's state, not ours.
func (c *Cluster) DropRules(ctx context.Context, name string) (int, error) {
	n, err := c.node(name)
	if err != nil {
		return 0, err
	}
	ins, err := c.rt.cli.ContainerInspect(ctx, n.id, client.ContainerInspectOptions{})
	if err != nil {
		return 0, err
	}
	if st := ins.Container.State; st == nil || st.Pid == 0 {
		return 0, nil
	}
	ns, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", ins.Container.State.Pid))
	if err != nil {
		return 0, err
	}
	defer ns.Close()
	conn, err := nftables.New(nftables.WithNetNSFd(int(ns.Fd())))
	if err != nil {
		return 0, err
	}
	defer conn.CloseLasting()
	chains, err := conn.ListChainsOfTableFamily(nftables.TableFamilyIPv4)
	if err != nil {
		return 0, err
	}
	total := 0
	for _, ch := range chains {
		if ch.Table.Name != nftTable {
			continue
		}
		rules, err := conn.GetRules(ch.Table, ch)
		if err != nil {
			return 0, err
		}
		total += len(rules)
	}
	return total, nil
}
