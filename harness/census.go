package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/harness/cluster"
	"github.com/redline-dev/redline/harness/clusteradmin"
	"github.com/redline-dev/redline/harness/history"
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
	for _, n := range c.Nodes {
		if len(n.Keys) >= history.MaxCensusKeys {
			c.Truncated = true
		}
	}
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

// scanKeys lists the run's keys on one node, sorted, at most MaxCensusKeys.
func scanKeys(ctx context.Context, cl *redis.Client, prefix string) ([]string, error) {
	seen := map[string]bool{}
	var cursor uint64
	for {
		ks, next, err := cl.Scan(ctx, cursor, clusteradmin.EscapeGlob(prefix)+"*", 1000).Result()
		if err != nil {
			return sortedSet(seen), fmt.Errorf("SCAN MATCH %s*: %w", prefix, err)
		}
		for _, k := range ks {
			if len(seen) < history.MaxCensusKeys {
				seen[k] = true
			}
		}
		if cursor = next; cursor == 0 || len(seen) >= history.MaxCensusKeys {
			return sortedSet(seen), nil
		}
	}
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
