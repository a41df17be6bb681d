package harness

import (
	"context"
	"encoding/json"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/cluster"
)

// TopologyFile is the run file of sampled topologies: one JSON line
// {"time": ns since the history's start, "cluster_nodes": text} each time
// the cluster's roles or slots changed, so that the report draws a
// failover when it happened, not at the next fault's snapshot.
const TopologyFile = "topology.jsonl"

// topologyEvery is the sampling period: a failover under a 1-2 s
// node-timeout is placed within half a second. Each sample is one CLUSTER
// NODES per node over a connection kept for the run (6 nodes: 12
// commands a second).
const topologyEvery = 500 * time.Millisecond

// topologySample is one line of TopologyFile.
type topologySample struct {
	Time         int64  `json:"time"`
	ClusterNodes string `json:"cluster_nodes"`
}

// sampleTopology writes a sample to path every topologyEvery until ctx
// ends, and only when the picture changed. Each node's line is the node's
// own (its "myself" line): a node says best what role it has; a node that
// does not answer (killed, paused) is described as the first node that
// answered sees it. creds authenticate the connections.
func sampleTopology(ctx context.Context, creds cluster.Credentials, addrs []string, start time.Time, path string, log *Log) {
	f, err := os.Create(path)
	if err != nil {
		log.Printf("topology sampling: %v", err)
		return
	}
	defer f.Close()
	clients := make([]*redis.Client, len(addrs))
	for i, a := range addrs {
		clients[i] = creds.AdminClient(a)
	}
	defer func() {
		for _, c := range clients {
			_ = c.Close()
		}
	}()
	enc := json.NewEncoder(f)
	last := ""
	tick := time.NewTicker(topologyEvery)
	defer tick.Stop()
	for {
		at := time.Since(start)
		text := sampleOnce(ctx, clients)
		if key := topologyKey(text); text != "" && key != last {
			last = key
			if err := enc.Encode(topologySample{Time: at.Nanoseconds(), ClusterNodes: text}); err != nil {
				log.Printf("topology sampling: %v", err)
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// sampleOnce asks every node at once (a paused node must not delay the
// others) and composes one CLUSTER NODES text of each node's own line.
func sampleOnce(ctx context.Context, clients []*redis.Client) string {
	views := make([]string, len(clients))
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, topologyEvery*4/5)
			defer cancel()
			if s, err := c.ClusterNodes(cctx).Result(); err == nil {
				views[i] = s
			}
		}()
	}
	wg.Wait()
	own := map[string]string{}   // node id -> its own line, myself dropped
	other := map[string]string{} // node id -> how the first answering node sees it
	for _, v := range views {
		for _, line := range strings.Split(v, "\n") {
			f := strings.Fields(line)
			if len(f) < 8 {
				continue
			}
			if strings.Contains(f[2], "myself") {
				f[2] = strings.TrimPrefix(strings.ReplaceAll(f[2], "myself,", ""), "myself")
				own[f[0]] = strings.Join(f, " ")
			} else if _, ok := other[f[0]]; !ok {
				other[f[0]] = line
			}
		}
	}
	for id, l := range other {
		if _, ok := own[id]; !ok {
			own[id] = l
		}
	}
	lines := make([]string, 0, len(own))
	for _, l := range own {
		lines = append(lines, l)
	}
	sort.Strings(lines)
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// topologyKey is what a change is: ids, addresses, roles, primaries and
// slots, not the ping times and epochs that move every second.
func topologyKey(text string) string {
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		b.WriteString(strings.Join(f[:4], " "))
		b.WriteByte(' ')
		b.WriteString(f[7])
		for _, s := range f[8:] {
			b.WriteByte(' ')
			b.WriteString(s)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
