// Package clusteradmin is what redline does to a cluster through admin
// connections (cluster/'s send-once options and credentials):
//
//   - reading it: one node's CLUSTER NODES (ClusterNodesText, ReadNodes),
//     INFO fields (InfoField), a Topology snapshot of a runtime's cluster
//     with every node's own state (Admin.Topology), and discovering every
//     node from one seed (Discover, External: the runtime of an existing
//     cluster);
//   - forming a cluster of empty nodes and waiting until it converges
//     (Form, WaitConverged, WaitClusterConverged);
//   - moving slots the way redis-cli does or atomically with CLUSTER
//     MIGRATION, repairing the migrations left open and re-asserting moves
//     the cluster lost (SlotMover, placement records for checker.Handoff);
//   - journalling every topology change before it is made (Journal) and
//     auditing the data that is not the run's (audit.go).
//
// Admin holds the per-node clients those operations share. The runtimes'
// callers use it (a runtime gets Form handed in: docker.Options.Form) and
// so do the nemeses, whose faults decide what to strike and call it here.
// It imports cluster/ only: what it needs of a caller (a log, the
// journal, a test hook) is handed in.
package clusteradmin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/cluster"
)

// Member is one node of a cluster as the cluster announces it.
type Member struct {
	ID       string `json:"id"`
	Addr     string `json:"addr"` // ip:port (or hostname:port) as announced
	Primary  bool   `json:"primary"`
	MasterID string `json:"master_id,omitempty"` // a replica's primary
	Slots    int    `json:"slots"`               // slots it serves
	Health   string `json:"health,omitempty"`    // CLUSTER SHARDS: online, failed, loading
	ranges   []cluster.SlotRange
}

// SlotList expands the member's slot ranges.
func (m Member) SlotList() []int {
	var out []int
	for _, r := range m.ranges {
		for s := r.Start; s <= r.End; s++ {
			out = append(out, s)
		}
	}
	return out
}

// View is the cluster as one node described it.
type View struct {
	Members []Member `json:"members"`
	From    string   `json:"from"` // "CLUSTER SHARDS on 10.0.0.5:6379"
}

// Primaries returns the primaries that serve slots.
func (v View) Primaries() []Member {
	var out []Member
	for _, m := range v.Members {
		if m.Primary && m.Slots > 0 {
			out = append(out, m)
		}
	}
	return out
}

// Discover asks the seeds in turn for the whole cluster: CLUSTER SHARDS
// (Redis 7), or CLUSTER NODES where SHARDS is unknown. Members are sorted
// by address; nodes without an address (noaddr, handshake) are left out.
func Discover(ctx context.Context, creds cluster.Credentials, seeds []string) (View, error) {
	var errs []error
	for _, seed := range seeds {
		v, err := discoverFrom(ctx, creds, seed)
		if err == nil {
			return v, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	if len(errs) == 0 {
		return View{}, errors.New("discover: no seed address given")
	}
	return View{}, fmt.Errorf("discover: no seed described the cluster: %w", errors.Join(errs...))
}

func discoverFrom(ctx context.Context, creds cluster.Credentials, seed string) (View, error) {
	c := creds.AdminClient(seed)
	defer c.Close()
	shards, err := c.ClusterShards(ctx).Result()
	if err == nil {
		return fromShards(seed, shards, creds.TLS != nil)
	}
	if strings.Contains(err.Error(), "cluster support disabled") {
		return View{}, fmt.Errorf("%s runs without cluster mode: redline tests Redis Cluster only", seed)
	}
	text, nerr := c.ClusterNodes(ctx).Result()
	if nerr != nil {
		return View{}, fmt.Errorf("%s: CLUSTER SHARDS: %v; CLUSTER NODES: %w", seed, err, nerr)
	}
	return fromNodes(seed, text)
}

// fromNodes builds a view from CLUSTER NODES (servers before Redis 7).
func fromNodes(seed, text string) (View, error) {
	ls, perr := cluster.ParseNodes(text)
	if perr != nil {
		return View{}, fmt.Errorf("%s: %w", seed, perr)
	}
	v := View{From: "CLUSTER NODES on " + seed}
	for _, l := range ls {
		if l.HasFlag("noaddr") || l.HasFlag("handshake") || strings.HasPrefix(l.Addr, ":") || l.Addr == "" {
			continue
		}
		m := Member{ID: l.ID, Addr: l.Addr, Primary: l.IsPrimary(), MasterID: l.Master, ranges: l.Ranges, Slots: l.NumSlots()}
		if l.Failed() {
			m.Health = "failed"
		}
		v.Members = append(v.Members, m)
	}
	sortMembers(v.Members)
	return v, nil
}

// tlsPorts: redline speaks TLS, so a node's address is its tls-port (a
// node may listen on both).
func fromShards(seed string, shards []redis.ClusterShard, tlsPorts bool) (View, error) {
	v := View{From: "CLUSTER SHARDS on " + seed}
	for _, sh := range shards {
		var ranges []cluster.SlotRange
		n := 0
		for _, r := range sh.Slots {
			ranges = append(ranges, cluster.SlotRange{Start: int(r.Start), End: int(r.End)})
			n += int(r.End-r.Start) + 1
		}
		primary := ""
		for _, nd := range sh.Nodes {
			if nd.Role == "master" {
				primary = nd.ID
			}
		}
		for _, nd := range sh.Nodes {
			host := nd.Endpoint
			if host == "" || host == "?" {
				host = nd.IP
			}
			port := nd.Port
			if port == 0 || tlsPorts && nd.TLSPort != 0 {
				port = nd.TLSPort
			}
			if host == "" || host == "?" || port == 0 {
				continue
			}
			m := Member{ID: nd.ID, Addr: net.JoinHostPort(host, strconv.FormatInt(port, 10)), Health: nd.Health}
			if nd.Role == "master" {
				m.Primary, m.ranges, m.Slots = true, ranges, n
			} else {
				m.MasterID = primary
			}
			v.Members = append(v.Members, m)
		}
	}
	if len(v.Members) == 0 {
		return View{}, fmt.Errorf("%s: CLUSTER SHARDS lists no node with an address", seed)
	}
	sortMembers(v.Members)
	return v, nil
}

func sortMembers(ms []Member) {
	slices.SortFunc(ms, func(a, b Member) int { return strings.Compare(a.Addr, b.Addr) })
}

// External is a cluster redline did not create, known from seeds: its
// nodes are the ones the cluster announces, named n1, n2, ... in the order
// they were first seen. Refresh follows topology changes; Close only
// forgets it: redline never tears down a cluster it did not create.
type External struct {
	seeds []string
	creds cluster.Credentials
	mu    sync.Mutex
	view  View
	names map[string]string // addr -> name, never reused
	nodes []cluster.Node
}

// ExternalCapabilities are the faults a cluster redline did not create can
// suffer without hooks: none of the runtime's (kill, pause, partition,
// clock, shape, grow), read off External's methods; what any target can do
// through admin connections (migrate, failover) needs no capability.
func ExternalCapabilities() []cluster.Capability { return cluster.CapabilitiesOf((*External)(nil)) }

// OpenExternal discovers the cluster behind seeds, authenticating with
// creds (also on every Refresh).
func OpenExternal(ctx context.Context, creds cluster.Credentials, seeds []string) (*External, error) {
	e := &External{seeds: slices.Clone(seeds), creds: creds, names: map[string]string{}}
	if err := e.Refresh(ctx); err != nil {
		return nil, err
	}
	return e, nil
}

// Refresh rediscovers the cluster, asking the known nodes first, then the
// seeds. A node that left the cluster leaves the list; a new one gets the
// next free name.
func (e *External) Refresh(ctx context.Context) error {
	e.mu.Lock()
	var ask []string
	for _, n := range e.nodes {
		ask = append(ask, n.Addr)
	}
	e.mu.Unlock()
	for _, s := range e.seeds {
		if !slices.Contains(ask, s) {
			ask = append(ask, s)
		}
	}
	v, err := Discover(ctx, e.creds, ask)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.view = v
	nodes := make([]cluster.Node, 0, len(v.Members))
	for _, m := range v.Members {
		name, ok := e.names[m.Addr]
		if !ok {
			name = fmt.Sprintf("n%d", len(e.names)+1)
			e.names[m.Addr] = name
		}
		host, _, _ := net.SplitHostPort(m.Addr)
		nodes = append(nodes, cluster.Node{Name: name, Addr: m.Addr, Host: host})
	}
	e.nodes = cluster.SortedNodes(nodes)
	return nil
}

// View returns the last discovered view.
func (e *External) View() View {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.view
}

func (e *External) Nodes() []cluster.Node {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.nodes)
}

func (e *External) Close(context.Context) error { return nil }

func (e *External) Describe() map[string]string {
	e.mu.Lock()
	defer e.mu.Unlock()
	addrs := make([]string, len(e.nodes))
	for i, n := range e.nodes {
		addrs[i] = n.Addr
	}
	return map[string]string{"runtime": "external", "seeds": strings.Join(e.seeds, ","),
		"addrs": strings.Join(addrs, ","), "discovered_by": e.view.From}
}
