package clusteradmin

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/redline-dev/redline/cluster"
)

// NodeState is one node of a runtime's cluster with its state as the node
// itself reports it (or, when the node does not answer, as the first node
// that answers does).
type NodeState struct {
	Node      cluster.Node
	ID        string
	Announce  string // ip:port peers use (MIGRATE, MEET)
	Primary   bool
	MasterID  string
	Slots     []int
	Reachable bool
	Migrating map[int]string // slot -> id of the node it migrates to
	Importing map[int]string // slot -> id of the node it imports from
}

// Topology is a snapshot of a cluster, members sorted by node name.
type Topology struct {
	Members []NodeState
	View    string // CLUSTER NODES text of the first node that answered
	ViewOf  string // that node's name
}

// ByID returns the member with node id id.
func (t *Topology) ByID(id string) (NodeState, bool) {
	for _, m := range t.Members {
		if m.ID == id && id != "" {
			return m, true
		}
	}
	return NodeState{}, false
}

// Primaries returns the primaries that own slots.
func (t *Topology) Primaries() []NodeState {
	var ms []NodeState
	for _, m := range t.Members {
		if m.Primary && len(m.Slots) > 0 {
			ms = append(ms, m)
		}
	}
	return ms
}

// Replicas returns the replicas whose primary is known.
func (t *Topology) Replicas() []NodeState {
	var ms []NodeState
	for _, m := range t.Members {
		if !m.Primary && m.MasterID != "" {
			ms = append(ms, m)
		}
	}
	return ms
}

// Names returns the members' node names.
func (t *Topology) Names() []string {
	var ns []string
	for _, m := range t.Members {
		ns = append(ns, m.Node.Name)
	}
	return ns
}

// Topology asks every node of c for CLUSTER NODES and builds a snapshot.
// A cluster that follows its own topology (cluster.Refresher: one known
// from a seed) is rediscovered first, so that nodes the cluster gained or
// lost since are taken into account.
func (a *Admin) Topology(ctx context.Context, c cluster.Cluster) (*Topology, error) {
	if r, ok := c.(cluster.Refresher); ok {
		if err := r.Refresh(ctx); err != nil {
			a.logf("rediscovering the cluster: %v (using the last known nodes)", err)
		}
	}
	nodes := cluster.SortedNodes(c.Nodes())
	views := make([][]cluster.NodeInfo, len(nodes))
	texts := make([]string, len(nodes))
	var wg sync.WaitGroup
	for i, nd := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text, err := a.ClusterNodes(ctx, nd.Addr)
			if err != nil {
				return
			}
			ls, err := cluster.ParseNodes(text)
			if err != nil {
				return
			}
			views[i], texts[i] = ls, text
		}()
	}
	wg.Wait()
	return topologyFrom(nodes, views, texts)
}

// topologyFrom builds a snapshot from each node's parsed CLUSTER NODES
// (nil: the node did not answer) and its text. It is pure.
func topologyFrom(nodes []cluster.Node, views [][]cluster.NodeInfo, texts []string) (*Topology, error) {
	t := &Topology{}
	var ref []cluster.NodeInfo // first view that answered, for nodes that did not
	for i := range nodes {
		if views[i] != nil {
			ref, t.View, t.ViewOf = views[i], texts[i], nodes[i].Name
			break
		}
	}
	if ref == nil {
		var names []string
		for _, n := range nodes {
			names = append(names, n.Name)
		}
		return nil, fmt.Errorf("no node answered CLUSTER NODES (tried %s)", strings.Join(names, ", "))
	}
	for i, nd := range nodes {
		m := NodeState{Node: nd}
		var self *cluster.NodeInfo
		for j := range views[i] {
			if views[i][j].Myself() {
				self = &views[i][j]
			}
		}
		if self != nil {
			m.Reachable = true
		} else {
			for j := range ref {
				if addrMatches(ref[j].Addr, nd) {
					self = &ref[j]
					break
				}
			}
		}
		if self != nil {
			m.ID, m.Primary, m.MasterID, m.Slots = self.ID, self.IsPrimary(), self.Master, self.Slots()
			m.Announce = self.Addr
			for _, o := range self.Open {
				if o.Migrating {
					if m.Migrating == nil {
						m.Migrating = map[int]string{}
					}
					m.Migrating[o.Slot] = o.Peer
				} else {
					if m.Importing == nil {
						m.Importing = map[int]string{}
					}
					m.Importing[o.Slot] = o.Peer
				}
			}
		}
		if m.Announce == "" || strings.HasPrefix(m.Announce, ":") {
			m.Announce = AnnounceOf(nd)
		}
		t.Members = append(t.Members, m)
	}
	return t, nil
}

// WaitClusterConverged is WaitConverged over c's nodes, bounded by timeout.
func WaitClusterConverged(ctx context.Context, creds cluster.Credentials, c cluster.Cluster, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var addrs []string
	for _, nd := range cluster.SortedNodes(c.Nodes()) {
		addrs = append(addrs, nd.Addr)
	}
	return WaitConverged(ctx, creds, addrs)
}

// AnnounceOf guesses the address peers use for a node: Host with Addr's
// port.
func AnnounceOf(nd cluster.Node) string {
	host, port, err := net.SplitHostPort(nd.Addr)
	if err != nil {
		return nd.Addr
	}
	if nd.Host != "" {
		host = nd.Host
	}
	return net.JoinHostPort(host, port)
}

func addrMatches(announced string, nd cluster.Node) bool {
	return announced == nd.Addr || announced == AnnounceOf(nd)
}

// ReplicasOfReplicas names each reachable replica whose primary, by that
// primary's own account, is itself a replica: chained replication, which
// Redis Cluster does not allow (CLUSTER REPLICATE refuses a replica) and
// which a failover can leave behind (redis/redis#15472: a manual failover
// in a shard with two replicas left the sibling replicating the demoted
// primary, now a replica). An unreachable primary is not judged.
func (t *Topology) ReplicasOfReplicas() []string {
	var out []string
	for _, m := range t.Members {
		if m.Primary || m.MasterID == "" || !m.Reachable {
			continue
		}
		up, ok := t.ByID(m.MasterID)
		if !ok || !up.Reachable || up.Primary {
			continue
		}
		out = append(out, fmt.Sprintf("%s replicates %s, which is itself a replica (of %s): chained replication in a cluster (redis/redis#15472)",
			m.Node.Name, up.Node.Name, t.nameOf(up.MasterID)))
	}
	return out
}

// nameOf is the name of the member with node id id, or the id's first 8
// characters when no member has it.
func (t *Topology) nameOf(id string) string {
	if m, ok := t.ByID(id); ok {
		return m.Node.Name
	}
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
