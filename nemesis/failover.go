package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
)

// failoverFault sends CLUSTER FAILOVER [FORCE|TAKEOVER] to a random replica
// and waits until it reports itself primary (or gives up and says so). With
// Options.RestoreRoles the end phase switches its failovers back. Any
// target can.
type failoverFault struct {
	base
	*env
}

func (*failoverFault) name() string    { return "failover" }
func (*failoverFault) modes() []string { return []string{"default", "force", "takeover"} }

func (f *failoverFault) bind(e *env, _ *hook, _ bool) error {
	f.env = e
	return nil
}

func (f *failoverFault) resolve(_ context.Context, st Step, t *clusteradmin.Topology, rng *rand.Rand) (*action, error) {
	if st.Mode == takeoverKilledMode {
		return f.takeoverKilledAction(st, t, rng)
	}
	if st.Mode == epochBumpUnheardMode {
		return f.epochBumpUnheardAction(st, t, rng)
	}
	if st.Mode == twoReplicaManualMode {
		return f.twoReplicaManualAction(st, t, rng)
	}
	var reps []clusteradmin.NodeState
	for _, m := range t.Replicas() {
		if m.Reachable {
			reps = append(reps, m)
		}
	}
	if len(reps) == 0 {
		return nil, fmt.Errorf("no reachable replica")
	}
	r := pickOne(rng, reps)
	old, ok := t.ByID(r.MasterID)
	nodes := []string{r.Node.Name}
	detail := map[string]any{"replica": r.Node.Name}
	if ok {
		nodes = append(nodes, old.Node.Name)
		detail["primary"] = old.Node.Name
	}
	mode := st.Mode
	if f.opts.Guest && mode != "default" && !slices.Contains(f.named["failover"], mode) {
		// Options.Guest: on someone else's cluster only a named mode may
		// skip the replica's catch-up.
		detail["guest_coordinated"] = fmt.Sprintf("the seed picked %s; a cluster redline did not create gets a coordinated failover (name failover:%s to run it)", mode, mode)
		mode = "default"
	}
	a := &action{nodes: nodes, detail: detail}
	a.start = func(ctx context.Context) (map[string]any, error) {
		args := []any{"cluster", "failover"}
		if mode != "default" {
			args = append(args, mode)
		}
		seq, err := f.journal.Begin(clusteradmin.Step{Kind: "failover", From: r.MasterID, To: r.ID,
			Note: clusteradmin.CommandString(args) + " on the replica"})
		if err != nil {
			return nil, err
		}
		// FORCE and TAKEOVER do not wait for the replica to catch up:
		// what it lacks now is lost (documented). Its sync state is the
		// evidence for whoever explains a loss after it (seed 99 of the
		// nemesis plan: a TAKEOVER of a replica whose full sync had been
		// pending for 8 s dropped the keys a storm had just moved in).
		var sync map[string]any
		if mode != "default" {
			sync = f.replicaSync(ctx, r, old, ok)
		} else if ok {
			if waited := manualFailoverReady(ctx, f, r, old, max(5*time.Second, 3*f.opts.NodeTimeout)); waited != nil {
				sync = map[string]any{"waited": waited}
			}
		}
		began := time.Now()
		if _, err := f.admin.Do(ctx, r.Node.Addr, 3*time.Second, args...); err != nil {
			f.journal.End(seq, err)
			return nil, err
		}
		defer func() { f.journal.End(seq, nil) }()
		limit := max(10*time.Second, 5*f.opts.NodeTimeout)
		promoted := f.waitRole(ctx, r.Node.Addr, true, limit)
		res := map[string]any{"promoted": promoted, "waited_ms": time.Since(began).Milliseconds()}
		for k, v := range sync {
			res[k] = v
		}
		if !promoted {
			if mode == "default" && ok {
				res["unpromoted_evidence"] = unpromotedEvidence(ctx, f, r, old)
			}
			if ctx.Err() != nil {
				return res, fmt.Errorf("stopped waiting for %s to be promoted: %w", r.Node.Name, ctx.Err())
			}
			return res, fmt.Errorf("%s was not promoted within %s", r.Node.Name, limit)
		}
		return res, nil
	}
	return a, nil
}

// replicaSync is r's replication state just before a FORCE or TAKEOVER:
// replica_link (master_link_status, "sync" while a full sync is pending)
// and, over a live link, replica_lag_bytes (the primary's offset minus
// the replica's). replica_in_sync is false when either says it lacks
// writes.
func (f *failoverFault) replicaSync(ctx context.Context, r, primary clusteradmin.NodeState, havePrimary bool) map[string]any {
	ri := f.replInfo(ctx, r.Node.Addr)
	out := map[string]any{}
	link, _ := ri["master_link_status"].(string)
	if ri["master_sync_in_progress"] == "1" {
		link = "sync"
	}
	if link != "" {
		out["replica_link"] = link
	}
	inSync := link == "up"
	if havePrimary && inSync {
		// Offsets compare only over a live link (a primary restarted
		// since has a new replication history).
		pi := f.replInfo(ctx, primary.Node.Addr)
		po, err1 := strconv.ParseInt(fmt.Sprint(pi["master_repl_offset"]), 10, 64)
		ro, err2 := strconv.ParseInt(fmt.Sprint(ri["slave_repl_offset"]), 10, 64)
		if err1 == nil && err2 == nil {
			out["replica_lag_bytes"] = po - ro
			inSync = inSync && po == ro
		}
	}
	out["replica_in_sync"] = inSync
	return out
}

// waitRole polls the node at addr until it reports itself primary (or
// replica) and returns whether it did within limit.
func (f *failoverFault) waitRole(ctx context.Context, addr string, primary bool, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for {
		if text, err := f.admin.ClusterNodes(ctx, addr); err == nil {
			if ls, err := cluster.ParseNodes(text); err == nil {
				if self, ok := cluster.Self(ls); ok && self.IsPrimary() == primary {
					return true
				}
			}
		}
		if time.Now().After(deadline) || !sleepUntil(ctx, time.Now().Add(100*time.Millisecond)) {
			return false
		}
	}
}

// settle switches the roles of this nemesis' failovers back when
// Options.RestoreRoles asks for it.
func (f *failoverFault) settle(ctx context.Context, h *healing) {
	if !f.opts.RestoreRoles {
		return
	}
	back, err := f.restoreRoles(ctx)
	if err != nil {
		h.fail(fmt.Errorf("restore roles: %w", err))
	}
	if len(back) > 0 {
		h.res["promoted_back"] = back
	}
}

// restoreRoles switches the roles of this nemesis' failovers back, latest
// first: where the promoted node is still a primary and the former primary
// replicates it, CLUSTER FAILOVER on the former primary, journalled. A
// shard whose roles changed otherwise since is left alone. It returns the
// nodes promoted back.
func (f *failoverFault) restoreRoles(ctx context.Context) ([]string, error) {
	steps := f.journal.Steps()
	var back []string
	var errs []error
	for i := len(steps) - 1; i >= 0; i-- {
		s := steps[i]
		if s.Kind != "failover" || s.State != "done" {
			continue
		}
		// A coordinated failover (no FORCE: it must not lose a write)
		// needs the replica in sync with its primary.
		if err := f.waitConverged(ctx, max(30*time.Second, 15*f.opts.NodeTimeout)); err != nil {
			return back, err
		}
		promoted, former, ok, err := f.failedOverPair(ctx, s.To, s.From)
		if err != nil {
			return back, err
		}
		if !ok {
			continue
		}
		seq, err := f.journal.Begin(clusteradmin.Step{Kind: "failover", From: promoted.ID, To: former.ID,
			Note: fmt.Sprintf("restore roles: undo step %d with CLUSTER FAILOVER on the replica", s.Seq)})
		if err == nil {
			err = f.failoverBack(ctx, former)
		}
		f.journal.End(seq, err)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		back = append(back, former.Node.Name)
	}
	// A chain of failovers in one shard whose later step did not take (a
	// coordinated failover needs votes, and a primary votes once per two
	// node timeouts for one shard's replicas) can leave the chain's first
	// primary a replica after the undo above: one more coordinated
	// failover, journalled, puts it back. Only nodes of redline's own
	// steps are touched.
	for _, orig := range chainOrigins(steps) {
		t, err := f.topology(ctx)
		if err != nil {
			errs = append(errs, err)
			break
		}
		o, ok := t.ByID(orig)
		if !ok || o.Primary || !o.Reachable || o.MasterID == "" {
			continue
		}
		seq, err := f.journal.Begin(clusteradmin.Step{Kind: "failover", From: o.MasterID, To: o.ID,
			Note: "restore roles: the shard's first primary back with CLUSTER FAILOVER on it"})
		if err == nil {
			err = f.failoverBack(ctx, o)
		}
		f.journal.End(seq, err)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		back = append(back, o.Node.Name)
	}
	return back, errors.Join(errs...)
}

// chainOrigins returns, per chain of redline's failovers (steps sharing a
// node), the primary its first step replaced.
func chainOrigins(steps []clusteradmin.Step) []string {
	var origins []string
	member := map[string]bool{}
	for _, s := range steps {
		if s.Kind != "failover" || s.State != "done" || strings.HasPrefix(s.Note, "restore roles") {
			continue
		}
		if !member[s.From] && !member[s.To] {
			origins = append(origins, s.From)
		}
		member[s.From], member[s.To] = true, true
	}
	return origins
}

// failedOverPair finds the node a failover promoted and its former primary,
// ok when the promoted node is a primary and the former one replicates it.
// Both may take a while to be seen: a failover started just before the
// run ended may still be electing (waited for up to 4 node timeouts, at
// least 10 s: Redis's manual failover gives up after 5 s and an election
// after 2 node timeouts), and a former primary that came back (a kill, a
// pause) may not yet be seen replicating its successor (up to 15 node
// timeouts, at least 30 s). After that the shard is judged changed
// otherwise (or the failover never took) and left alone.
func (f *failoverFault) failedOverPair(ctx context.Context, promotedID, formerID string) (promoted, former clusteradmin.NodeState, ok bool, err error) {
	start := time.Now()
	electing := start.Add(max(10*time.Second, 4*f.opts.NodeTimeout))
	deadline := start.Add(max(30*time.Second, 15*f.opts.NodeTimeout))
	for {
		t, err := f.topology(ctx)
		if err != nil {
			return promoted, former, false, err
		}
		var ok1, ok2 bool
		promoted, ok1 = t.ByID(promotedID)
		former, ok2 = t.ByID(formerID)
		switch {
		case !ok1 || !ok2:
			return promoted, former, false, nil
		case !promoted.Primary && time.Now().After(electing):
			return promoted, former, false, nil
		case promoted.Primary && !former.Primary && former.MasterID == promoted.ID && former.Reachable:
			return promoted, former, true, nil
		}
		if time.Now().After(deadline) || !sleepUntil(ctx, time.Now().Add(500*time.Millisecond)) {
			return promoted, former, false, nil
		}
	}
}

// failoverBack sends one CLUSTER FAILOVER to node, a replica, once Redis
// would act on it (manualFailoverReady: its last election and its
// primary's last replacement far enough back, its primary knowing it), and
// waits until it is a primary. The wait is logged: restoring a chain of
// failovers in one shard meets both windows.
func (f *failoverFault) failoverBack(ctx context.Context, node clusteradmin.NodeState) error {
	t, err := f.topology(ctx)
	if err != nil {
		return err
	}
	primary, ok := t.ByID(node.MasterID)
	if !ok {
		return fmt.Errorf("%s's primary %s is not in the cluster's view", node.Node.Name, node.MasterID)
	}
	if waited := manualFailoverReady(ctx, f, node, primary, max(5*time.Second, 3*f.opts.NodeTimeout)); waited != nil {
		f.opts.Log("restore roles: before CLUSTER FAILOVER on %s, waited until Redis would act on it: %v", node.Node.Name, waited)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if _, err := f.admin.Do(ctx, node.Node.Addr, 3*time.Second, "cluster", "failover"); err != nil {
		return err
	}
	if promoted, why := awaitPromotion(ctx, f, node, primary, max(10*time.Second, 5*f.opts.NodeTimeout)); !promoted {
		return fmt.Errorf("%s was not promoted back (%v)", node.Node.Name, why)
	}
	return nil
}

// sinceWon is how long to wait before a manual failover on node id, which
// redline's own journalled failover promoted a moment ago. Redis 7.0's
// clusterHandleSlaveFailover keeps a won election's vote count, epoch and
// start time: a replica asked to fail over again within auth_timeout
// (max(2 node timeouts, 2 s)) of that start declares "Failover election
// won" at once, without an election, claims the slots with its old
// epoch and is made a replica again by the newer owner within ~100 ms;
// within auth_retry_time (twice that) the election is "too old" and the
// manual failover times out. CLUSTER FAILOVER answers OK either way. The
// reference server does the same (its election follows Redis's), and
// --restore-roles undoing a chain of failovers in one shard hit it
// (TestRunGuestOnReferenceCluster in CI: the node was primary for 100 ms
// and the shard's roles stayed swapped). Reported upstream as
// redis/redis#8752 (open); Valkey resets the election after a win.
func (f *failoverFault) sinceWon(id string) time.Duration {
	return f.untilAfterLastFailover(func(s clusteradmin.Step) bool { return s.To == id },
		2*max(2*time.Second, 2*f.opts.NodeTimeout)+500*time.Millisecond)
}

// sinceVoted is how long to wait before a manual failover of primary id's
// replica, when redline's own journalled failover replaced id a moment
// ago: every primary that voted then refuses to vote again about the same
// primary within two node timeouts (clusterSendFailoverAuthIfNeeded's
// voted_time: "can't vote about this master before N milliseconds"), so
// the election fails and the manual failover times out. A chain of
// failovers in one shard (A to B, back to A, to B again) meets it.
func (f *failoverFault) sinceVoted(id string) time.Duration {
	return f.untilAfterLastFailover(func(s clusteradmin.Step) bool { return s.From == id },
		2*f.opts.NodeTimeout+500*time.Millisecond)
}

// untilAfterLastFailover is how long until window has passed since the
// latest of redline's finished failovers that match: 0 when it has, or
// none does.
func (f *failoverFault) untilAfterLastFailover(match func(clusteradmin.Step) bool, window time.Duration) time.Duration {
	var last time.Time
	for _, s := range f.journal.Steps() {
		if s.Kind == "failover" && s.State == "done" && match(s) && s.Time.After(last) {
			last = s.Time
		}
	}
	if last.IsZero() {
		return 0
	}
	return time.Until(last.Add(window))
}

// manualFailoverReady waits, before a default CLUSTER FAILOVER on replica,
// until Redis would act on it, and returns what it waited for (nil when
// nothing): the replica's last won election must be older than Redis's
// election retry window (sinceWon), and the primary must itself list the
// replica as its replica. Redis's primary drops the replica's MFSTART
// without a word when it does not (cluster.c: "acceptable only if I'm a
// master and the sender is one of my slaves"), and the replica's manual
// failover then times out after 5 s, unpromoted, its data in sync. A node
// made a replica by a failover a moment ago is told to the new primary
// only by its next ping: measured 2026-12-06 on local 6-node clusters
// (node timeout 2 s, host load ~19), 64-983 ms on Redis 7.0.15 and
// 76-1454 ms on the reference server, 12 failovers each. Both causes
// were the flake of a default failover that "sometimes ends unpromoted
// with its replica in sync"; the nemesis once sent the command twice to
// hide them.
func manualFailoverReady(ctx context.Context, w roleWaiter, replica, primary clusteradmin.NodeState, limit time.Duration) map[string]any {
	if w == nil {
		return nil
	}
	waited := map[string]any{}
	if wait := w.sinceWon(replica.ID); wait > 0 {
		waited["election_window_ms"] = wait.Milliseconds()
		if !sleepUntil(ctx, time.Now().Add(wait)) {
			return waited
		}
	}
	if wait := w.sinceVoted(primary.ID); wait > 0 {
		waited["vote_window_ms"] = wait.Milliseconds()
		if !sleepUntil(ctx, time.Now().Add(wait)) {
			return waited
		}
	}
	pollUntil(ctx, limit, waited, "primary_knows_replica", "replica_role_propagation_ms", func() bool {
		return w.knowsReplica(ctx, primary.Node.Addr, primary.ID, replica.ID)
	})
	// A replica refuses a default CLUSTER FAILOVER while its primary is
	// flagged failing or its bus link to it is down ("Master is down or
	// failed", Redis and the reference alike): a replica just restarted
	// has no link until its next cron (CI 2026-12-06: a composition
	// restarted n5 and asked it to fail over 3 ms later).
	pollUntil(ctx, limit, waited, "replica_sees_primary_up", "replica_link_to_primary_ms", func() bool {
		return w.seesPrimaryUp(ctx, replica.Node.Addr, primary.ID)
	})
	if len(waited) == 0 {
		return nil
	}
	return waited
}

// pollUntil asks ready every 50 ms for up to limit; into waited it writes
// notMet: false when the limit passed first, and tookMS when it waited 50
// ms or more.
func pollUntil(ctx context.Context, limit time.Duration, waited map[string]any, notMet, tookMS string, ready func() bool) {
	began := time.Now()
	for !ready() {
		if time.Since(began) > limit {
			waited[notMet] = false
			break
		}
		if !sleepUntil(ctx, time.Now().Add(50*time.Millisecond)) {
			break
		}
	}
	if ms := time.Since(began).Milliseconds(); ms >= 50 {
		waited[tookMS] = ms
	}
}

// seesPrimaryUp says whether the replica at addr lists its primary
// (primaryID) connected and flagged neither fail nor fail? in its CLUSTER
// NODES: what it needs to accept a default CLUSTER FAILOVER.
func (f *failoverFault) seesPrimaryUp(ctx context.Context, addr, primaryID string) bool {
	n, ok := f.nodeLine(ctx, addr, primaryID)
	return ok && n.Connected && !n.HasFlag("fail") && !n.HasFlag("fail?")
}

// nodeLine is the line of node id in the CLUSTER NODES of the node at
// addr; false when it cannot be read or has none.
func (f *failoverFault) nodeLine(ctx context.Context, addr, id string) (cluster.NodeInfo, bool) {
	text, err := f.admin.ClusterNodes(ctx, addr)
	if err != nil {
		return cluster.NodeInfo{}, false
	}
	ls, err := cluster.ParseNodes(text)
	if err != nil {
		return cluster.NodeInfo{}, false
	}
	for _, n := range ls {
		if n.ID == id {
			return n, true
		}
	}
	return cluster.NodeInfo{}, false
}

// knowsReplica says whether the node at addr (primaryID) lists replicaID
// as its own replica in its CLUSTER NODES.
func (f *failoverFault) knowsReplica(ctx context.Context, addr, primaryID, replicaID string) bool {
	n, ok := f.nodeLine(ctx, addr, replicaID)
	return ok && n.Master == primaryID
}

// awaitPromotion waits for the replica at addr to report itself primary
// after a default CLUSTER FAILOVER sent once, after manualFailoverReady.
// When it is not promoted, why gives the evidence at that moment: whether
// the primary knew the replica and how long ago the replica won its last
// election, for the journal and the fault's detail.
func awaitPromotion(ctx context.Context, w roleWaiter, replica, primary clusteradmin.NodeState, limit time.Duration) (promoted bool, why map[string]any) {
	if w == nil {
		return false, nil
	}
	if w.waitRole(ctx, replica.Node.Addr, true, limit) {
		return true, nil
	}
	return false, unpromotedEvidence(ctx, w, replica, primary)
}

// unpromotedEvidence is what the nemesis sees when a default failover
// ended unpromoted: whether the primary lists the replica, whether either
// of Redis's windows is open. It asks on a context of its own: the run's
// may have ended (that is often why the wait stopped), and a question
// that cannot be sent must not read as "the primary does not know it".
func unpromotedEvidence(ctx context.Context, w roleWaiter, replica, primary clusteradmin.NodeState) map[string]any {
	ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	defer cancel()
	return map[string]any{
		"primary_knows_replica": w.knowsReplica(ectx, primary.Node.Addr, primary.ID, replica.ID),
		"in_election_window":    w.sinceWon(replica.ID) > 0,
		"in_vote_window":        w.sinceVoted(primary.ID) > 0,
	}
}
