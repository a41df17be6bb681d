package adversary

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"strconv"

	"github.com/redline-dev/redline/history"
)

// The replica census (checker.ReplicaCensus): a replica in sync with its
// primary by the census' own replication record must hold its primary's
// keys. The corpus was recorded before the census carried that record, so
// each mutation first makes the census one a redline of today takes on an
// honest cluster (syncedCensus), then plants a divergence or a lie in it.

// syncedCensus is the run's census as an honest cluster's census after
// the end phase's wait for sync: every node answered with its replication
// state, each replica at its primary's replication id and offset with its
// link up and holding its primary's keys, the wait done. It returns the
// indexes of the replicas whose primary is in the census (none: not
// applicable).
func (r *Run) syncedCensus() (*history.Census, []int, error) {
	c, ok := r.census()
	if !ok {
		return nil, nil, ErrNotApplicable
	}
	var replicas []int
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if n.Error != "" || n.Role == "" {
			return nil, nil, ErrNotApplicable // a node that did not answer: no honest baseline
		}
		n.Repl = &history.CensusRepl{Replid: "replid-" + n.ID, Offset: 1000 + int64(i), OffsetAfter: 1000 + int64(i)}
	}
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if n.Role != "replica" {
			continue
		}
		p, ok := c.Node(n.Primary)
		if !ok || p.Role != "primary" {
			return nil, nil, ErrNotApplicable
		}
		n.Repl = &history.CensusRepl{Replid: p.Repl.Replid, Offset: p.Repl.Offset, OffsetAfter: p.Repl.Offset, Link: "up"}
		n.Keys = maps.Clone(p.Keys)
		replicas = append(replicas, i)
	}
	if len(replicas) == 0 {
		return nil, nil, ErrNotApplicable
	}
	c.ReplicaSync = &history.ReplicaSync{InSync: true, WaitedMS: 40, Attempts: 1}
	return c, replicas, nil
}

// replicaWithKeys picks a replica of the synced census whose primary holds
// some of the run's keys.
func replicaWithKeys(c *history.Census, replicas []int, rng *rand.Rand) (int, bool) {
	var with []int
	for _, i := range replicas {
		if len(c.Nodes[i].Keys) > 0 {
			with = append(with, i)
		}
	}
	return pick(rng, with)
}

// replicaLie plants lie into one replica's record of a synced census.
func replicaLie(lie func(c *history.Census, n *history.CensusNode) string) func(r *Run, rng *rand.Rand) (string, error) {
	return func(r *Run, rng *rand.Rand) (string, error) {
		c, replicas, err := r.syncedCensus()
		if err != nil {
			return "", err
		}
		i, _ := pick(rng, replicas)
		what := lie(c, &c.Nodes[i])
		r.setCensus(c)
		return "census, made in sync, then: " + what, nil
	}
}

var replicaMutations = []Mutation{
	{
		Name: "replica-census-in-sync", Kind: Allowed, Checker: "replica-census", Prepares: true,
		Class: "every replica in sync with its primary and holding its keys (the census of an honest cluster)",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			c, replicas, err := r.syncedCensus()
			if err != nil {
				return "", err
			}
			r.setCensus(c)
			return fmt.Sprintf("census: %d replicas in sync, each with its primary's keys", len(replicas)), nil
		},
	},
	{
		Name: "replica-lacks-key", Kind: Anomaly, Checker: "replica-census", Figure: class("replica-divergence"), Prepares: true,
		Class: "a replica in sync with its primary lacks one of its keys (an RDB load that dropped a type)",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			c, replicas, err := r.syncedCensus()
			if err != nil {
				return "", err
			}
			i, ok := replicaWithKeys(c, replicas, rng)
			if !ok {
				return "", ErrNotApplicable
			}
			n := &c.Nodes[i]
			k, _ := pick(rng, sortedKeys(n.Keys))
			delete(n.Keys, k)
			r.setCensus(c)
			return fmt.Sprintf("census: replica %s in sync, without %s", n.Name, k), nil
		},
	},
	{
		Name: "replica-value-differs", Kind: Anomaly, Checker: "replica-census", Figure: class("replica-divergence"), Prepares: true,
		Class: "a replica in sync with its primary holds another value of a key (a command applied twice)",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			c, replicas, err := r.syncedCensus()
			if err != nil {
				return "", err
			}
			i, ok := replicaWithKeys(c, replicas, rng)
			if !ok {
				return "", ErrNotApplicable
			}
			n := &c.Nodes[i]
			k, _ := pick(rng, sortedKeys(n.Keys))
			ck := n.Keys[k]
			v := strconv.Itoa(neverWritten)
			if ck.Value != nil {
				if x, err := strconv.ParseInt(*ck.Value, 10, 64); err == nil {
					v = strconv.FormatInt(x+1, 10)
				}
			}
			ck.Value, ck.Len = &v, ck.Len+1
			n.Keys[k] = ck
			r.setCensus(c)
			return fmt.Sprintf("census: replica %s in sync, its %s now %s", n.Name, k, v), nil
		},
	},
	{
		Name: "replica-sync-garbage", Kind: Lie, Checker: "replica-census", Prepares: true,
		Class: "the census gives a replica an offset that is no offset (below 0)",
		Apply: replicaLie(func(_ *history.Census, n *history.CensusNode) string {
			n.Repl.Offset, n.Repl.OffsetAfter = -7, -7
			return n.Name + " at offset -7"
		}),
	},
	{
		Name: "replica-sync-contradiction", Kind: Lie, Checker: "replica-census", Prepares: true,
		Class: "the wait for sync says every replica was in sync; a replica's offset says it was behind",
		Apply: replicaLie(func(_ *history.Census, n *history.CensusNode) string {
			n.Repl.Offset, n.Repl.OffsetAfter = n.Repl.Offset-64, n.Repl.OffsetAfter-64
			return n.Name + " 64 bytes behind its primary, the wait saying in sync"
		}),
	},
	{
		Name: "replica-sync-torn", Kind: Lie, Checker: "replica-census", Prepares: true,
		Class: "a replica's replication record is torn (its offset after the keys lost)",
		Apply: replicaLie(func(_ *history.Census, n *history.CensusNode) string {
			n.Repl.OffsetAfter = 0
			return n.Name + "'s offset_after lost"
		}),
	},
	{
		Name: "replica-sync-out-of-order", Kind: Lie, Checker: "replica-census", Prepares: true,
		Class: "a replica's offset after the keys is below its offset before them",
		Apply: replicaLie(func(_ *history.Census, n *history.CensusNode) string {
			n.Repl.OffsetAfter = n.Repl.Offset - 1
			return n.Name + "'s offset went back while its keys were read"
		}),
	},
	{
		Name: "replica-sync-missing", Kind: Lie, Checker: "replica-census", Prepares: true,
		Class: "a replica's replication record is missing while the others carry theirs",
		Apply: replicaLie(func(_ *history.Census, n *history.CensusNode) string {
			n.Repl = nil
			return n.Name + "'s replication record removed"
		}),
	},
	{
		// Not a lie but an honest "I could not see": unknown all the same.
		Name: "replica-never-synced", Kind: Lie, Checker: "replica-census", Prepares: true,
		Class: "the wait for sync gave up (a replica behind), and the keys agree anyway",
		Apply: replicaLie(func(c *history.Census, n *history.CensusNode) string {
			n.Repl.Offset, n.Repl.OffsetAfter = n.Repl.Offset-10, n.Repl.OffsetAfter-10
			c.ReplicaSync = &history.ReplicaSync{WaitedMS: 30000, Why: "not in sync after 30s: " + n.Name + " behind its primary"}
			return n.Name + " behind, the wait gave up"
		}),
	},
}
