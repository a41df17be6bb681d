package docker

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"sort"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/moby/moby/client"
)

// cut is the set of addresses a node drops packets from and to.
type cut struct {
	peers map[netip.Addr]bool
}

const nftTable = "redline"

// Cut makes node drop every packet from and to the peers (node names), in
// its own network namespace; with clients also the harness host (the
// network's gateway). Cuts add up until Heal. Rules live in the container's
// network namespace, which a Restart replaces: Restart applies them again.
// Partitions need a local Docker engine and root (the namespace is opened
// through /proc/<pid>/ns/net).
func (c *Cluster) Cut(ctx context.Context, name string, peers []string, clients bool) error {
	n, err := c.node(name)
	if err != nil {
		return err
	}
	var ips []netip.Addr
	for _, p := range peers {
		pn, err := c.node(p)
		if err != nil {
			return err
		}
		if pn == n {
			return fmt.Errorf("docker: cannot cut node %s from itself", name)
		}
		ips = append(ips, pn.ip)
	}
	if clients {
		ips = append(ips, c.gateway)
	}
	c.mu.Lock()
	ct := c.cuts[name]
	if ct == nil {
		ct = &cut{peers: map[netip.Addr]bool{}}
		c.cuts[name] = ct
	}
	for _, ip := range ips {
		ct.peers[ip] = true
	}
	want := sortedAddrs(ct.peers)
	c.mu.Unlock()
	return c.applyRules(ctx, n, want)
}

// Heal removes every filter rule on every node.
func (c *Cluster) Heal(ctx context.Context) error {
	c.mu.Lock()
	c.cuts = map[string]*cut{}
	nodes := append([]*node(nil), c.nodes...)
	c.mu.Unlock()
	var firstErr error
	for _, n := range nodes {
		if err := c.applyRules(ctx, n, nil); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}

// reapplyCut restores a node's rules after its namespace was recreated.
func (c *Cluster) reapplyCut(ctx context.Context, n *node) error {
	c.mu.Lock()
	ct := c.cuts[n.name]
	var want []netip.Addr
	if ct != nil {
		want = sortedAddrs(ct.peers)
	}
	c.mu.Unlock()
	if len(want) == 0 {
		return nil
	}
	return c.applyRules(ctx, n, want)
}

func sortedAddrs(m map[netip.Addr]bool) []netip.Addr {
	out := make([]netip.Addr, 0, len(m))
	for a := range m {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Less(out[j]) })
	return out
}

// applyRules replaces the node's redline table with one dropping drop
// (nothing at all when drop is empty), in one netlink transaction.
func (c *Cluster) applyRules(ctx context.Context, n *node, drop []netip.Addr) error {
	ins, err := c.rt.cli.ContainerInspect(ctx, n.id, client.ContainerInspectOptions{})
	if err != nil {
		if isNotFound(err) && len(drop) == 0 {
			return nil // container gone: nothing to heal
		}
		return fmt.Errorf("docker: partition %s: %w", n.name, err)
	}
	st := ins.Container.State
	if st == nil || st.Pid == 0 {
		// Not running: no namespace, no rules. A cut is recorded and
		// applied by Restart.
		return nil
	}
	ns, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", st.Pid))
	if err != nil {
		return fmt.Errorf("docker: partition %s: opening its network namespace needs root and a local Docker engine: %w", n.name, err)
	}
	defer ns.Close()
	conn, err := nftables.New(nftables.WithNetNSFd(int(ns.Fd())))
	if err != nil {
		return fmt.Errorf("docker: partition %s: netlink: %w", n.name, err)
	}
	defer conn.CloseLasting()
	t := &nftables.Table{Family: nftables.TableFamilyIPv4, Name: nftTable}
	// add + delete + (add) makes the result independent of what was there.
	conn.AddTable(t)
	conn.DelTable(t)
	if len(drop) > 0 {
		conn.AddTable(t)
		policy := nftables.ChainPolicyAccept
		in := conn.AddChain(&nftables.Chain{Name: "in", Table: t, Type: nftables.ChainTypeFilter,
			Hooknum: nftables.ChainHookInput, Priority: nftables.ChainPriorityFilter, Policy: &policy})
		out := conn.AddChain(&nftables.Chain{Name: "out", Table: t, Type: nftables.ChainTypeFilter,
			Hooknum: nftables.ChainHookOutput, Priority: nftables.ChainPriorityFilter, Policy: &policy})
		for _, ip := range drop {
			conn.AddRule(&nftables.Rule{Table: t, Chain: in, Exprs: dropAddr(12, ip)})  // saddr
			conn.AddRule(&nftables.Rule{Table: t, Chain: out, Exprs: dropAddr(16, ip)}) // daddr
		}
	}
	if err := conn.Flush(); err != nil {
		return fmt.Errorf("docker: partition %s: nftables: %w (is the nf_tables kernel module available?)", n.name, err)
	}
	return nil
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
