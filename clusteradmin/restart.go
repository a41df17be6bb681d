package clusteradmin

// A node redline killed may open slots itself when it starts again. Redis
// 7.0 checks its data against its slot map before it serves
// (verifyClusterConfigWithData, run only on a node that loads as a
// primary): a slot it holds keys of while its map gives the slot to
// another primary is set IMPORTING from that owner ("I have keys for slot
// N, but the slot is assigned to another node. Setting it to importing
// state."), and the state is saved in nodes.conf. It happens after a
// failover left the old primary a primary of other slots (a TAKEOVER that
// did not know every slot it had) with stale keys of the slots it lost,
// and redline then killed it. Nobody sent those states; unexplained, the
// end phase would stop at them as "not by redline". The kill fault reads
// the node's own states before the kill (OpenStates) and, once it answers
// again, adopts what the restart opened (AdoptRestartImports): journalled
// as redline's doing, closed by RepairSlots with the owner kept.

import (
	"context"
	"fmt"
	"time"

	"github.com/redline-dev/redline/cluster"
)

// OpenStates returns the MIGRATING/IMPORTING states the node at addr shows
// on its own CLUSTER NODES line, by slot, reading for at most wait.
func (n *SlotMover) OpenStates(ctx context.Context, addr string, wait time.Duration) (map[int]cluster.OpenSlot, error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	self, _, err := n.ownLine(ctx, addr)
	if err != nil {
		return nil, err
	}
	out := map[int]cluster.OpenSlot{}
	for _, o := range self.Open {
		out[o.Slot] = o
	}
	return out, nil
}

// ownLine reads the node's CLUSTER NODES and returns its own line and the
// owner of every slot in its map (node id by slot).
func (n *SlotMover) ownLine(ctx context.Context, addr string) (cluster.NodeInfo, map[int]string, error) {
	text, err := n.admin.ClusterNodes(ctx, addr)
	if err != nil {
		return cluster.NodeInfo{}, nil, err
	}
	ls, err := cluster.ParseNodes(text)
	if err != nil {
		return cluster.NodeInfo{}, nil, err
	}
	owner := map[int]string{}
	var self *cluster.NodeInfo
	for i, l := range ls {
		for _, s := range l.Slots() {
			owner[s] = l.ID
		}
		if l.Myself() {
			self = &ls[i]
		}
	}
	if self == nil {
		return cluster.NodeInfo{}, nil, fmt.Errorf("cluster nodes on %s: no line is marked myself", addr)
	}
	return *self, owner, nil
}

// RestartImport is a slot a restarted node opened itself.
type RestartImport struct {
	Slot  int    `json:"slot"`
	Node  string `json:"node"`  // the restarted node's name
	Owner string `json:"owner"` // the owner in its map, by name
	Keys  int64  `json:"keys"`  // its keys of the slot when adopted
}

// AdoptRestartImports compares the states node shows after its restart
// with before (its states just before redline killed it) and adopts every
// new IMPORTING state whose source is the slot's owner in the node's own
// map, the state Redis's start-up check sets, as a migration of redline's
// from the owner to node that is to be undone: RepairSlots moves the
// node's keys of the slot back to the owner (a different copy set aside
// or refused, as in any repair) and closes the state; the owner keeps the
// slot. Each is journalled (kind "adopt"). It reads the node for at most
// wait (it may still be loading). Any other new state is left alone, for
// Unaccounted to report.
func (n *SlotMover) AdoptRestartImports(ctx context.Context, node cluster.Node, before map[int]cluster.OpenSlot, wait time.Duration) ([]RestartImport, error) {
	rctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var self cluster.NodeInfo
	var owner map[int]string
	var err error
	for {
		self, owner, err = n.ownLine(rctx, node.Addr)
		if err == nil || rctx.Err() != nil {
			break
		}
		select {
		case <-rctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s's slot states after its restart: %w", node.Name, err)
	}
	var fresh []cluster.OpenSlot
	for _, o := range self.Open {
		if o.Migrating || o.Peer == "" || owner[o.Slot] != o.Peer {
			continue
		}
		if b, ok := before[o.Slot]; ok && b == o {
			continue
		}
		fresh = append(fresh, o)
	}
	if len(fresh) == 0 {
		return nil, nil
	}
	counts := make([]any, len(fresh))
	cmds := make([][]any, len(fresh))
	for i, o := range fresh {
		cmds[i] = []any{"cluster", "countkeysinslot", o.Slot}
	}
	if err := n.admin.Pipe(ctx, node.Addr, cmds, counts); err != nil {
		return nil, fmt.Errorf("counting %s's keys of the slots it opened at restart: %w", node.Name, err)
	}
	// Names and shards (a primary with its replicas: where the keys may be
	// after a failover) as the cluster reports them now.
	t, err := n.admin.Topology(ctx, n.c)
	if err != nil {
		return nil, fmt.Errorf("reading the topology after %s's restart: %w", node.Name, err)
	}
	name := func(id string) string {
		if m, ok := t.ByID(id); ok {
			return m.Node.Name
		}
		return id
	}
	shard := func(id string) []string {
		out := []string{id}
		for _, m := range t.Members {
			if m.MasterID == id && m.ID != id {
				out = append(out, m.ID)
			}
		}
		return out
	}
	var out []RestartImport
	for i, o := range fresh {
		keys, _ := counts[i].(int64)
		seq, err := n.journal.Begin(Step{Kind: "adopt", Slots: []int{o.Slot}, From: o.Peer, To: self.ID,
			Note: fmt.Sprintf("%s set slot %d IMPORTING from its owner %s itself when it started again after redline killed it "+
				"(it holds %d keys of a slot its map gives to another primary: Redis's start-up check); redline's to close, the owner keeping the slot",
				node.Name, o.Slot, name(o.Peer), keys)})
		if err != nil {
			return out, err
		}
		n.mu.Lock()
		if _, mine := n.open[o.Slot]; !mine {
			n.open[o.Slot] = openSlot{Slot: o.Slot, Src: o.Peer, Dst: self.ID, SrcShard: shard(o.Peer), DstShard: shard(self.ID),
				Stable: true, KeepOwner: true}
		}
		n.mu.Unlock()
		n.journal.End(seq, nil)
		out = append(out, RestartImport{Slot: o.Slot, Node: node.Name, Owner: name(o.Peer), Keys: keys})
	}
	return out, nil
}
