package nemesis

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/harness/cluster"
	"github.com/redline-dev/redline/harness/clusteradmin"
)

// member is one node of the cluster with its role as the node itself reports
// it (or, when the node does not answer, as the first node that answers does).
type member struct {
	Node      cluster.Node
	ID        string
	Announce  string // ip:port peers use (MIGRATE, MEET)
	Primary   bool
	MasterID  string
	Slots     []int
	Reachable bool
	Migrating map[int]string
	Importing map[int]string
}

// topo is a snapshot of the cluster, members sorted by node name.
type topo struct {
	Members []member
	View    string // CLUSTER NODES text of the first node that answered
	ViewOf  string
}

func (t *topo) byID(id string) (member, bool) {
	for _, m := range t.Members {
		if m.ID == id && id != "" {
			return m, true
		}
	}
	return member{}, false
}

// primaries returns the primaries that own slots.
func (t *topo) primaries() []member {
	var ms []member
	for _, m := range t.Members {
		if m.Primary && len(m.Slots) > 0 {
			ms = append(ms, m)
		}
	}
	return ms
}

// replicas returns the replicas whose primary is known.
func (t *topo) replicas() []member {
	var ms []member
	for _, m := range t.Members {
		if !m.Primary && m.MasterID != "" {
			ms = append(ms, m)
		}
	}
	return ms
}

func (t *topo) names() []string {
	var ns []string
	for _, m := range t.Members {
		ns = append(ns, m.Node.Name)
	}
	return ns
}

// admin holds plain go-redis clients to single nodes, for admin commands.
// Retries are off: an admin command is sent once.
type admin struct {
	mu      sync.Mutex
	clients map[string]*redis.Client
}

func (a *admin) client(addr string) *redis.Client {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c, ok := a.clients[addr]; ok {
		return c
	}
	if a.clients == nil {
		a.clients = map[string]*redis.Client{}
	}
	o := cluster.AdminOptions(addr)
	o.DialTimeout, o.PoolSize = time.Second, 4
	c := redis.NewClient(o)
	a.clients[addr] = c
	return c
}

func (a *admin) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range a.clients {
		c.Close()
	}
	a.clients = nil
}

// do sends one command to a node with a timeout.
func (a *admin) do(ctx context.Context, addr string, timeout time.Duration, args ...any) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, err := a.client(addr).Do(ctx, args...).Result()
	if err != nil {
		return v, fmt.Errorf("%s on %s: %w", cmdString(args), addr, err)
	}
	return v, nil
}

// pipe sends cmds to one node in one pipeline (timeout 10 s). When out is
// not nil it receives each reply. It returns the first command's error,
// after every command has run.
func (a *admin) pipe(ctx context.Context, addr string, cmds [][]any, out []any) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	p := a.client(addr).Pipeline()
	res := make([]*redis.Cmd, len(cmds))
	for i, c := range cmds {
		res[i] = p.Do(ctx, c...)
	}
	_, err := p.Exec(ctx)
	for i, r := range res {
		if r.Err() != nil {
			return fmt.Errorf("%s on %s: %w", cmdString(cmds[i]), addr, r.Err())
		}
		if out != nil {
			out[i] = r.Val()
		}
	}
	if err != nil {
		return fmt.Errorf("pipeline of %d commands on %s: %w", len(cmds), addr, err)
	}
	return nil
}

// clusterNodes returns CLUSTER NODES of the node at addr.
func (a *admin) clusterNodes(ctx context.Context, addr string) (string, error) {
	v, err := a.do(ctx, addr, 2*time.Second, "cluster", "nodes")
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("cluster nodes on %s: unexpected reply %T", addr, v)
	}
	return s, nil
}

// topology asks every node for CLUSTER NODES and builds a snapshot.
// A cluster known from a seed is rediscovered first, so that nodes the
// cluster gained or lost since are taken into account.
func (e *env) topology(ctx context.Context) (*topo, error) {
	if r, ok := e.c.(cluster.Refresher); ok {
		if err := r.Refresh(ctx); err != nil {
			e.opts.Log("nemesis: rediscovering the cluster: %v (using the last known nodes)", err)
		}
	}
	nodes := sortedNodes(e.c.Nodes())
	t := &topo{}
	views := make([][]cluster.NodeInfo, len(nodes))
	texts := make([]string, len(nodes))
	var wg sync.WaitGroup
	for i, nd := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text, err := e.admin.clusterNodes(ctx, nd.Addr)
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
	var ref []cluster.NodeInfo // first view that answered, for nodes that did not
	for i := range nodes {
		if views[i] != nil {
			ref, t.View, t.ViewOf = views[i], texts[i], nodes[i].Name
			break
		}
	}
	if ref == nil {
		return nil, fmt.Errorf("no node answered CLUSTER NODES (tried %s)", strings.Join(nodeNames(nodes), ", "))
	}
	for i, nd := range nodes {
		m := member{Node: nd}
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
			m.Announce = announceOf(nd)
		}
		t.Members = append(t.Members, m)
	}
	return t, nil
}

// waitConverged waits (clusteradmin.WaitConverged) until every node that answers
// reports cluster_state:ok, no open slots, no failure flags and the same
// slot map.
func (e *env) waitConverged(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var addrs []string
	for _, nd := range sortedNodes(e.c.Nodes()) {
		addrs = append(addrs, nd.Addr)
	}
	return clusteradmin.WaitConverged(ctx, addrs)
}

// announceOf guesses the address peers use for a node: Host with Addr's port.
func announceOf(nd cluster.Node) string {
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
	return announced == nd.Addr || announced == announceOf(nd)
}

func sortedNodes(ns []cluster.Node) []cluster.Node {
	ns = slices.Clone(ns)
	slices.SortFunc(ns, func(a, b cluster.Node) int { return compareNames(a.Name, b.Name) })
	return ns
}

// compareNames orders "n2" before "n10".
func compareNames(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

func nodeNames(ns []cluster.Node) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.Name)
	}
	return out
}

func splitHostPort(addr string) (string, int, error) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	return h, port, err
}

// cmdString renders a command for error messages: "CLUSTER SETSLOT 5 NODE id".
func cmdString(args []any) string {
	parts := make([]string, 0, len(args))
	secret := -1 // index of a password (MIGRATE ... AUTH pw / AUTH2 user pw)
	for i, a := range args {
		p := fmt.Sprint(a)
		switch {
		case i == secret:
			p = "<password>"
		case i > 0 && strings.EqualFold(p, "auth"):
			secret = i + 1
		case i > 0 && strings.EqualFold(p, "auth2"):
			secret = i + 2
		}
		if p == "" {
			p = `""`
		}
		if i < 2 {
			p = strings.ToUpper(p)
		}
		parts = append(parts, p)
	}
	if len(parts) > 12 {
		parts = append(parts[:12], "...")
	}
	return strings.Join(parts, " ")
}
