// The history these checkers read (each workload's ops, the WAIT record,
// the nemesis events) is specified in history/'s package
// documentation; this file says what each checker decides from it and
// which figures it writes.
//
// # What each checker decides
//
// Three rules hold for all of them (DESIGN.md's checker principles):
//   - No evidence is unknown, never valid: a correctness checker that saw no
//     acknowledged write, no successful read, or (counter, set, list-append)
//     no read after an acknowledged write of a key (its final read failed)
//     says unknown and names what is missing, unless another key already
//     proves the run invalid.
//   - Garbage is an anomaly: a reply that cannot be what was written (not an
//     integer within int64, a list with a member twice, an account no
//     transfer uses) is recorded raw by the workloads on an ok op, and the
//     checker flags it ("anomalies" -> "garbage", with the op's index).
//     Integers are parsed strictly: no float fallback collapses values.
//   - Every invalid or unknown verdict has a "why" figure: in words, the
//     first keys and ops (by history index) that made it.
//
// Linearizable: porcupine (v1.3.1) per key, with a register model. Failed
// ops and indeterminate reads are dropped; indeterminate writes and cas
// return at "infinity" (later than every other op), so they may take effect
// at any time after their call, or never (taking effect last is the same as
// never). One deadline (LinearizableOptions.Timeout, 60 s) covers all keys; keys not
// decided by then are unknown_keys and make the verdict unknown unless some
// key is anomalous; the keys first get a fair slice each, then the
// undecided ones share the rest, so a few hard keys cannot starve the
// others. Keys with several indeterminate writes use an equivalent pooled
// model (linpool.go) that keeps the search from exploding when those
// writes are observed late (as after a pause or a kill); keys with
// indeterminate cas ops are first tried with a quick form of it whose "ok"
// is sound, and settled by the exact model otherwise. A read of a
// value no write produced is flagged without a search. stale_reads counts
// reads that returned a value that a later, completed write had certainly
// replaced before the read began; one is enough for invalid, even when the
// search ran out of time. Porcupine's cost grows with the square of
// a key's history (50k ops on one key: about 10 CPU-seconds), so each key is
// cut at quiescent points (no op in flight) into segments checked one after
// the other through the set of values the register may hold between them
// (linsegment.go); from the first indeterminate op on, the rest of the key
// is checked whole. A key that is never idle (many clients hammering it) or
// has indeterminate ops early keeps the quadratic cost: workloads should
// spread ops over many keys, or rotate to fresh keys as Jepsen's
// independent keys do. Measured: 1M ops on 1000 keys, 1% indeterminate,
// about 4-5 CPU-seconds; a recorded 94k-op run on 20 keys, 0.44 s.
//
// Counter: each ok read must lie between the sum of the adds acknowledged
// before the read began and the sum of the adds (ok or indeterminate)
// invoked before it ended (negative deltas widen the bounds the other
// way). A read that returns less than a read of the key that completed
// before it began is a "backwards-read" anomaly (keys with only positive
// deltas): increments once seen were lost. At the final read: lost =
// min(acknowledged, max(0, lower bound - final value)), a lower bound of the
// acknowledged increments lost (indeterminate increments that landed can
// hide losses) and never more than were acknowledged; the rest of the
// deficit is "unexplained" (an anomaly of its own); lost_max is the upper
// bound; unexpected = max(0, final - upper bound). A counter cannot say
// which increments were lost: the WAIT split charges the loss first to
// acknowledged increments without WAIT, then to those whose WAIT fell short,
// and only the rest to wait_satisfied, no class beyond its own acknowledged
// increments; wait_satisfied is therefore a lower bound (wait_satisfied_max
// is the upper one).
//
// Set (Jepsen's set-full): an element is known from its add's ack or the
// end of the first read that saw it. It is lost if the latest read of its
// key (by invocation) began after it was known and does not contain it:
// "lost" counts acknowledged adds, "lost_unacked" indeterminate adds that
// were seen and then vanished. unexpected: read but never added, or added
// by a failed add. recovered: indeterminate adds seen in some read.
// stale_reads: elements missing from some read that began after they were
// known, and seen again later (reported, not judged). never_read:
// acknowledged adds no read began after (they make the verdict unknown,
// never_read_keys names their keys). visibility latency: from the add's
// invocation to the invocation of the first read that saw it (it includes
// the wait for the next read of the key, so it is only as fine as reads are
// frequent).
//
// Bank: every ok read-all names exactly the group's accounts, has no
// negative balance (both transfer paths refuse overdrafts) and sums to the
// total. ListAppend: see
// ListAppendDetects and ListAppendDoesNotDetect; the version order of a key
// is its longest read, every other read must be a prefix of it, and the
// ww / wr / rw edges follow from it. Cycles are looked for first without
// and then with real-time edges (committed before the other began); the
// latter are reported as the "-realtime" classes (strict serializability,
// which one Redis primary running MULTI/EXEC should give); indeterminate
// transactions get real-time edges in, none out. A transaction's appends
// must appear in any read as one block in its order ("fractured-appends").
// An append is lost ("lost-append", once each) when its transaction
// certainly committed (acknowledged, or another of its appends was read)
// before the key's latest read began, or that very read saw the
// transaction, and the read lacks it. CrossSlot: no cross-slot transaction
// may succeed.
//
// Lock (the lock workload: SET NX PX with a fence, compare-and-delete
// release): a hold is certain from an acknowledged acquire's completion to
// the earlier of its expiry (invocation plus ttl) and its release (the
// release's invocation plus its recorded hold, no later than its
// completion); an indeterminate acquire proves no hold. Two certain holds
// of one lock that overlap are a "double-hold" (invalid), classified
// after-failover-loss when the first acquire's WAIT was not satisfied, the
// second was acknowledged by another node and a fault window (not clock)
// naming the first's node came in between, else unexplained. Fences must
// rise between acquisitions in real-time order and never repeat
// ("fence-regression"); a release that deleted after its lock certainly
// expired and another client certainly acquired it is
// "released-anothers-lock"; one that deleted a token whose acquire failed,
// or that no acquire used, "released-unacquired". lost_while_held counts
// holders whose release found their lock gone before its ttl (reported,
// not judged). See workloads/lock's Checker.
//
// Queue (the queue workload: a list with a processing list, a stream with
// a consumer group) is Jepsen's total queue: every acknowledged enqueue
// delivered or, at the final drain, still queued or pending ("lost",
// classified after-failover-loss or unexplained), nothing delivered that
// was not sent ("unexpected"); duplicates, acks lost and the pending
// entries at the end are reported, not judged. See workloads/queue's
// Checker.
//
// TTL (the ttl workload: keys and hash fields with expiries) compares
// consecutive observations of a key with no write between them against
// the acknowledged deadline, within the invoke-completion window and
// ttl.ClockSlack: read-after-deadline, expired-early, gone-after-persist,
// gone-without-expiry, ttl-grew, value-changed, resurrected, each
// classified clock, after-failover or unexplained. See workloads/ttl's
// Checker.
//
// Perf, RTO and RPO measure; they are always valid. Perf: per f, ok / fail /
// info counts and ok latency quantiles (HdrHistogram) per time bucket
// (1 s, widened to keep at most PerfOptions.MaxBuckets buckets) as columns
// under "series", totals under "by_f", fault windows under "faults". RTO:
// per fault window and shard (the primary serving a set of slots at the
// fault's start), from the fault's start to the first success on those
// slots after their last failure (rto_ms); per key the same envelope as
// detail (key_rto_ms, key_rto_lower_ms); an outage is charged to the fault
// that caused it (see RTO). RPO: lost acknowledged writes per window of
// acknowledgement; exact rpo_ms for unique writes (set, list-append),
// rpo_bound_ms for counters; losses outside windows under outside_windows
// (see RPO). Both report per window keys_on_touched_nodes: how many of the
// workload's keys lived on the nodes the fault touched (a window with none
// is no evidence).
//
// Default-failover judges the same losses (set elements, list appends, a
// counter's deficit rises) by the mode of the failover that lost them:
// only CLUSTER FAILOVER's default mode promises no loss (the replica
// catches up before it switches), so a loss that a default failover alone
// explains (acknowledged before its switch plus 2 s, revealed after its
// start, no other fault on the key's shard in between) is invalid, also in
// a run whose FORCE or TAKEOVER lost writes by design. A run without a
// default failover is not applicable (see DefaultFailover).
//
// Replica-census holds each replica to its primary's keys at the end: the
// end phase waits until every replica has its primary's replication id
// and offset, link up, and the census records each node's replication
// state before and after it reads the keys; a replica in sync by that
// record whose copy of a run's key differs from its primary's, or is
// missing on one side, is a replica-divergence (invalid). A replica the
// record does not show in sync (the wait gave up, offsets that differ or
// moved, below 0, a record missing or contradicting the wait's) is
// unknown, named (see ReplicaCensus).
//
// Config-epoch reads the topology sampled through the run (every node's
// own CLUSTER NODES line, every 500 ms when it changed): a primary that
// takes a slot over with a configEpoch not above the one its previous
// owner held it with is a config-epoch-not-raised, invalid (a node
// reclaiming a slot with the epoch it held it with before, or coming back
// from failed, is its stale view, not a claim). Samples that are no
// CLUSTER NODES output, differ at one instant or are out of time order
// are unknown, named (see ConfigEpochs).
//
// # Figures (results.json), by checker
//
// Every checker: "valid"; "why" (string) when not valid: what made the
// verdict, first keys and ops by history index; "error" (string) when
// unknown; "anomalies" ({class: {count, examples: [{index, key, ...}]}})
// when some op was flagged, "garbage" among the classes for replies that
// cannot be what was written (example "value" is the raw reply).
//   - linearizable: ops, keys, anomalous_keys, unknown_keys, stale_reads,
//     stale_read_samples, indeterminate, pooled_keys, timeout_s.
//   - counter: keys, adds_ok/info/fail, reads, acked, attempted, lost,
//     lost_max, unexpected, unexplained, bad_reads, bad_read_samples,
//     lost_keys, keys_without_final_read, wait_satisfied(_max),
//     wait_unsatisfied, no_wait. Anomaly classes: garbage, backwards-read,
//     unexplained-deficit.
//   - set: keys, adds_ok/info/fail, reads, lost, lost_unacked, unexpected,
//     recovered, stale_reads, never_read, never_read_keys, lost_elements,
//     unexpected_elements, visibility_latency_ms, the WAIT split.
//   - bank: reads, transfers_ok/fail/info, wrong_total, wrong_total_reads,
//     negative_balances, reads_missing_accts. Anomaly classes: garbage,
//     wrong-accounts, negative-balance.
//   - list-append: txns_ok/fail/info, keys, anomaly_types, anomalies (the
//     ListAppendDetects classes), never_read_keys, detects, does_not_detect.
//   - lock: acquires, acquires_ok/fail/info, releases, releases_ok,
//     releases_not_owner, releases_fail, releases_info, locks, holds,
//     double_holds, double_holds_after_failover_loss,
//     double_holds_unexplained, double_holds_in_fault_window,
//     double_holds_wait_satisfied, fence_regressions,
//     released_anothers_lock, lost_while_held, lost_while_held_after_fault,
//     lost_while_held_samples, faults, skipped_malformed, malformed.
//     Anomaly classes: double-hold (examples name both acquires, their
//     nodes, the overlap and the classification), fence-regression,
//     released-anothers-lock, released-unacquired, garbage.
//   - queue: enqueues, enqueues_ok/fail/info, dequeues, dequeues_ok,
//     claims, claims_ok, acks, acks_ok, drains, drains_ok, delivered,
//     queues, lost, lost_after_failover_loss, lost_unexplained,
//     lost_wait_satisfied, unexpected, duplicates, recovered,
//     pending_at_end, acks_lost, acks_found_nothing, id_regressions,
//     undrained_queues, faults, skipped_malformed, malformed. Anomaly
//     classes: lost, unexpected, delivered-before-enqueued, id-mismatch,
//     pending-never-delivered, garbage.
//   - ttl: sets, sets_ok/fail/info, pexpires, pexpires_ok, persists,
//     persists_ok, reads, reads_ok, finals, finals_ok, keys, pairs_judged,
//     pairs_skipped_concurrent_write, anomalies_clock,
//     anomalies_after_failover, anomalies_unexplained, hash_field_ops,
//     hash_field_expiry, clock_slack_ms, skipped_malformed, malformed.
//     Anomaly classes: read-after-deadline, expired-early,
//     gone-after-persist, gone-without-expiry, ttl-grew, value-changed,
//     resurrected, unexpected, garbage (examples name both observations,
//     their nodes and the classification).
//   - cross-slot: attempted, refused_crossslot, executed, executed_indices,
//     other_outcome, crossslot_on_other_ops.
//   - default-failover: kind, failovers, default_failovers,
//     lost_by_default_failover, lost_explained_by_others,
//     lost_explained_by_no_fault, rule; when invalid per_failover [{index,
//     nodes, start_s, lost}] and examples.
//   - replica-census: replicas, replicas_judged, keys_compared,
//     diverged_keys, sync_waited_ms, unjudged (why each replica not judged
//     was not), anomaly_types and anomalies (replica-divergence).
//   - config-epoch: samples, samples_judged, owner_changes, violations,
//     unjudged, anomaly_types and anomalies (config-epoch-not-raised).
//   - rpo: kind, lost, windows, windows_without_keys, slack_s, per_window
//     [{window, fault, start_s, end_s, nodes, lost, keys, the WAIT split,
//     keys_active, keys_on_touched_nodes (null when node addresses are
//     unknown), keys_note, and rpo_ms, acked_from_s, acked_to_s,
//     first_lost_ack_ms, last_lost_ack_ms (set, list-append) or
//     rpo_bound_ms, bound_from_s, bound_to_s, wait_unattributed
//     (counter)}], outside_windows (the same, no window); rpo_ms (set,
//     list-append) or rpo_bound_ms (counter): the largest.
//   - rto: windows, affected (shards), affected_keys, unrecovered,
//     windows_without_keys, rto_ms (quantiles over shards), key_rto_ms,
//     key_rto_lower_ms, per_window [{window, fault, start_s, end_s, nodes,
//     affected_shards, affected_keys, shards {addr: {rto_ms |
//     recovered:false, last_failure_end_ms}}, unrecovered_shards, rto_ms,
//     key_rto_ms, key_rto_lower_ms, keys_active, keys_on_touched_nodes,
//     keys_note}], definition.
//
// Beside the checkers, results.json's "attribution" (attribution.go) tells
// what happened to the first instances of the anomalies they name
// (lost_elements, stale_read_samples, lost_keys, anomalous_keys, the lost
// and stale anomaly classes): [{checker, kind, key, slot, ack, miss,
// census, owner, faults, steps, log_lines, verdict, why}], verdict one of
// "server-lost", "admin-stranded", "admin-overwritten", "unknown". It is a pure function of the
// history (its "census" and "journal" entries) and the servers' log lines.
package checker
