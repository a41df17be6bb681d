package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
	"github.com/redline-dev/redline/history"
)

// maxCensusValue is the longest string value a census records as is;
// a longer one is recorded as its SHA-256.
const maxCensusValue = 256

// maxCensusMembers bounds the members recorded of one set.
const maxCensusMembers = 10000

// TakeCensus asks every node, primaries and replicas, which of the run's
// keys (prefix) it holds, with their values, and who it thinks serves
// which slots, each node on its own send-once admin connection (READONLY
// first, so that a replica answers for its primary's slots). A node that
// does not answer is recorded with its error: the census says what it
// could not see rather than failing. wallStart is the wall clock at the
// history's time zero; creds authenticate the connections.
func TakeCensus(ctx context.Context, creds cluster.Credentials, nodes []cluster.Node, prefix string, wallStart time.Time) history.Census {
	c := history.Census{Prefix: prefix, WallStart: wallStart.UTC(), Nodes: make([]history.CensusNode, len(nodes))}
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Nodes[i] = censusNode(ctx, creds, n, prefix)
		}()
	}
	wg.Wait()
	// Truncation is judged on what SCAN returned (asides included).
	for _, n := range c.Nodes {
		if len(n.Keys) >= history.MaxCensusKeys {
			c.Truncated = true
		}
	}
	c.AttachAsides()
	return c
}

func censusNode(ctx context.Context, creds cluster.Credentials, n cluster.Node, prefix string) history.CensusNode {
	out := history.CensusNode{Name: n.Name, Addr: n.Addr}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	o := creds.AdminOptions(n.Addr)
	o.ReadTimeout, o.WriteTimeout = 5*time.Second, 5*time.Second
	cl := redis.NewClient(o)
	defer cl.Close()
	repl := readRepl(ctx, cl)
	out.Repl = &repl
	defer func() {
		// After the keys: a pair whose offsets moved meanwhile was not
		// in sync while it was read.
		if after := readRepl(ctx, cl); after.Error == "" {
			out.Repl.OffsetAfter = after.Offset
		} else if out.Repl.Error == "" {
			out.Repl.Error = "after the keys: " + after.Error
		}
	}()
	text, err := cl.ClusterNodes(ctx).Result()
	if err != nil {
		out.Error = fmt.Sprintf("CLUSTER NODES: %v", err)
		return out
	}
	lines, err := cluster.ParseNodes(text)
	if err != nil {
		out.Error = fmt.Sprintf("CLUSTER NODES: %v", err)
		return out
	}
	for _, l := range lines {
		p := history.CensusPeer{ID: l.ID, Addr: l.Addr, Primary: l.IsPrimary(), Master: l.Master, Failed: l.Failed(),
			Myself: l.Myself(), Epoch: l.ConfigEpoch, Flags: l.Flags}
		for _, r := range l.Ranges {
			p.Ranges = append(p.Ranges, [2]int{r.Start, r.End})
		}
		out.View = append(out.View, p)
		if !l.Myself() {
			continue
		}
		out.ID, out.Role, out.Primary = l.ID, "replica", l.Master
		if l.IsPrimary() {
			out.Role = "primary"
		}
		for _, s := range l.Open {
			how := "IMPORTING from"
			if s.Migrating {
				how = "MIGRATING to"
				out.Migrating = append(out.Migrating, s.Slot)
			} else {
				out.Importing = append(out.Importing, s.Slot)
			}
			out.Open = append(out.Open, fmt.Sprintf("slot %d %s %s", s.Slot, how, s.Peer))
		}
	}
	keys, err := scanKeys(ctx, cl, prefix)
	if err != nil {
		out.Error = err.Error()
	}
	if len(keys) == 0 {
		return out
	}
	// One connection, so READONLY holds for the reads after it.
	conn := cl.Conn()
	defer conn.Close()
	_ = conn.ReadOnly(ctx).Err() // a primary answers OK too; an old server's error changes nothing
	out.Keys = make(map[string]history.CensusKey, len(keys))
	for i := 0; i < len(keys); i += 500 {
		batch := keys[i:min(i+500, len(keys))]
		if err := censusValues(ctx, conn, batch, out.Keys); err != nil && out.Error == "" {
			out.Error = err.Error()
		}
	}
	return out
}

// readRepl is the node's replication state: its replication id, its
// offset (a replica's slave_repl_offset, a primary's master_repl_offset)
// and, of a replica, its link ("sync" while a full sync is in progress).
func readRepl(ctx context.Context, cl *redis.Client) history.CensusRepl {
	r, _, _ := readReplRole(ctx, cl)
	return r
}

// readReplRole is readRepl with, of a replica, its primary's address
// (master_host:master_port).
func readReplRole(ctx context.Context, cl *redis.Client) (r history.CensusRepl, replica bool, primary string) {
	text, err := cl.Info(ctx, "replication").Result()
	if err != nil {
		return history.CensusRepl{Error: fmt.Sprintf("INFO replication: %v", err)}, false, ""
	}
	r.Replid, _ = clusteradmin.InfoField(text, "master_replid")
	role, _ := clusteradmin.InfoField(text, "role")
	field := "master_repl_offset"
	if role == "slave" {
		replica = true
		host, _ := clusteradmin.InfoField(text, "master_host")
		port, _ := clusteradmin.InfoField(text, "master_port")
		primary = net.JoinHostPort(host, port)
		field = "slave_repl_offset"
		r.Link, _ = clusteradmin.InfoField(text, "master_link_status")
		if v, _ := clusteradmin.InfoField(text, "master_sync_in_progress"); v == "1" {
			r.Link = "sync"
		}
	}
	v, ok := clusteradmin.InfoField(text, field)
	off, err := strconv.ParseInt(v, 10, 64)
	if !ok || err != nil {
		r.Error = fmt.Sprintf("INFO replication: %s is %q, not an offset", field, v)
	}
	r.Offset, r.OffsetAfter = off, off
	return r, replica, primary
}

// replNode is one node's replication state as the wait for sync reads it.
type replNode struct {
	node    cluster.Node
	replica bool
	primary string // a replica's primary's address (master_host:master_port)
	repl    history.CensusRepl
}

// replicasOutOfSync says which replicas are not in sync with their
// primary ("" when every replica is): same replication id and offset,
// link up. A replica whose primary is not among nodes is out of sync.
func replicasOutOfSync(ns []replNode) string {
	byAddr := map[string]*replNode{}
	for i := range ns {
		byAddr[ns[i].node.Addr] = &ns[i]
	}
	var out []string
	for _, n := range ns {
		if n.repl.Error != "" {
			out = append(out, fmt.Sprintf("%s: %s", n.node.Name, n.repl.Error))
			continue
		}
		if !n.replica {
			continue
		}
		p, ok := byAddr[n.primary]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s replicates %s, which is none of the cluster's nodes", n.node.Name, n.primary))
		case n.repl.Link != "up":
			out = append(out, fmt.Sprintf("%s's link to %s is %s", n.node.Name, p.node.Name, n.repl.Link))
		case p.replica:
			out = append(out, fmt.Sprintf("%s replicates %s, itself a replica", n.node.Name, p.node.Name))
		case p.repl.Error != "":
		case n.repl.Replid != p.repl.Replid || n.repl.Offset != p.repl.Offset:
			out = append(out, fmt.Sprintf("%s is at offset %d of %s, its primary %s at %d of %s", n.node.Name, n.repl.Offset, n.repl.Replid, p.node.Name, p.repl.Offset, p.repl.Replid))
		}
	}
	return strings.Join(out, "; ")
}

// WaitReplicasInSync polls every node's INFO replication until each
// replica has its primary's replication id and offset with its link up,
// for at most limit (every 200 ms). After the final reads nothing writes,
// so a healthy cluster gets there within a replication round trip (a
// restarted node within its full sync).
func WaitReplicasInSync(ctx context.Context, creds cluster.Credentials, nodes []cluster.Node, limit time.Duration) history.ReplicaSync {
	began := time.Now()
	deadline := began.Add(limit)
	clients := make([]*redis.Client, len(nodes))
	for i, n := range nodes {
		o := creds.AdminOptions(n.Addr)
		o.ReadTimeout, o.WriteTimeout = 2*time.Second, 2*time.Second
		clients[i] = redis.NewClient(o)
	}
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	for {
		ns := make([]replNode, len(nodes))
		for i, n := range nodes {
			ns[i].node = n
			ns[i].repl, ns[i].replica, ns[i].primary = readReplRole(ctx, clients[i])
		}
		why := replicasOutOfSync(ns)
		waited := time.Since(began).Milliseconds()
		if why == "" {
			return history.ReplicaSync{InSync: true, WaitedMS: waited}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return history.ReplicaSync{WaitedMS: waited, Why: fmt.Sprintf("not in sync after %s: %s", limit, why)}
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// scanKeys lists the run's keys on one node, sorted, at most
// MaxCensusKeys, with their set-aside copies: a key without a hash tag has
// its copy named "{key}:redline-conflict-from-<node>" (history.AsideName),
// which the prefix alone does not match.
func scanKeys(ctx context.Context, cl *redis.Client, prefix string) ([]string, error) {
	seen := map[string]bool{}
	for _, match := range []string{
		clusteradmin.EscapeGlob(prefix) + "*",
		"{" + clusteradmin.EscapeGlob(prefix) + "*}" + clusteradmin.EscapeGlob(history.AsideMarker) + "*",
	} {
		var cursor uint64
		for {
			ks, next, err := cl.Scan(ctx, cursor, match, 1000).Result()
			if err != nil {
				return sortedSet(seen), fmt.Errorf("SCAN MATCH %s: %w", match, err)
			}
			for _, k := range ks {
				if len(seen) < history.MaxCensusKeys {
					seen[k] = true
				}
			}
			if len(seen) >= history.MaxCensusKeys {
				return sortedSet(seen), nil
			}
			if cursor = next; cursor == 0 {
				break
			}
		}
	}
	return sortedSet(seen), nil
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// censusValues reads the type, then the value or size, of each key.
func censusValues(ctx context.Context, conn *redis.Conn, keys []string, into map[string]history.CensusKey) error {
	p := conn.Pipeline()
	types := make([]*redis.StatusCmd, len(keys))
	for i, k := range keys {
		types[i] = p.Type(ctx, k)
	}
	if _, err := p.Exec(ctx); err != nil && !isReplyError(err) {
		return fmt.Errorf("TYPE: %w", err)
	}
	p = conn.Pipeline()
	vals := make([]redis.Cmder, len(keys))
	lens := make([]*redis.IntCmd, len(keys))
	for i, k := range keys {
		t, err := types[i].Result()
		if err != nil {
			into[k] = history.CensusKey{Error: err.Error()}
			continue
		}
		switch t {
		case "string":
			vals[i] = p.Get(ctx, k)
		case "set":
			lens[i] = p.SCard(ctx, k)
			vals[i] = p.SRandMemberN(ctx, k, maxCensusMembers)
		case "list":
			lens[i] = p.LLen(ctx, k)
		case "hash":
			lens[i] = p.HLen(ctx, k)
		case "zset":
			lens[i] = p.ZCard(ctx, k)
		case "stream":
			lens[i] = p.XLen(ctx, k)
		}
		into[k] = history.CensusKey{Type: t}
	}
	if _, err := p.Exec(ctx); err != nil && !isReplyError(err) && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("reading values: %w", err)
	}
	for i, k := range keys {
		e, ok := into[k]
		if !ok || e.Error != "" {
			continue
		}
		if lens[i] != nil {
			e.Len = lens[i].Val()
		}
		switch v := vals[i].(type) {
		case *redis.StringCmd:
			if s, err := v.Result(); err == nil {
				if len(s) > maxCensusValue {
					sum := sha256.Sum256([]byte(s))
					s = "sha256:" + hex.EncodeToString(sum[:])
				}
				e.Value = &s
				e.Len = int64(len(s))
			} else if !errors.Is(err, redis.Nil) {
				e.Error = err.Error()
			}
		case *redis.StringSliceCmd:
			if ms, err := v.Result(); err == nil {
				sort.Strings(ms)
				e.Members = ms
			} else {
				e.Error = err.Error()
			}
		}
		into[k] = e
	}
	return nil
}

// isReplyError says err is a server's error reply (MOVED, WRONGTYPE ...),
// which belongs to one command, not a broken connection.
func isReplyError(err error) bool {
	var re redis.Error
	if errors.As(err, &re) {
		return !strings.HasPrefix(err.Error(), "redis: ")
	}
	return false
}
