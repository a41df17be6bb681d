// Package history is the one home of what a run records and what its
// readers share: the operations and their JSON-lines codec
// (history.jsonl.zst, compressed frames of JSON lines, frames.go; runs of
// older versions wrote plain history.jsonl, still read), the names of the nemesis process's events and the types
// of their details (events.go, census.go), and the building blocks every
// reader and writer of a history needs alike: the decoding of integer values
// (ParseInt, ParseInts) and a key's slot (Keyslot, the one piece of Redis it
// knows). It is a leaf package: the runner, the nemeses and the cluster
// admin write histories with it; the checkers, the report, bench's result
// and `redline check` read them back. This comment is the format's
// specification.
//
// # On disk
//
// A run's history is FileName (history.jsonl.zst): the JSON lines below,
// compressed as the run goes in records of a zstd skippable frame (the
// index: the next frame's length and entry count) and an independent zstd
// frame of whole lines with a checksum, a record every 200 ms (frames.go).
// A crash keeps every whole record; a record cut short is a torn tail
// (ReadResult.TornBytes), reported and never read as a shorter history; a
// record that does not decode is an error naming it. Runs of older
// versions wrote the lines plain (JSONLinesName, history.jsonl). ReadFile,
// ReadRun and OpenLines read every format, told by content.
//
// An operation is recorded twice, as in Jepsen: once when a process invokes it
// (type "invoke") and once when it completes ("ok", "fail" or "info").
//   - ok:   the operation certainly happened and its result is in Value.
//   - fail: the operation certainly did not happen (MOVED, CROSSSLOT,
//     CLUSTERDOWN before execution, ...).
//   - info: the outcome is unknown (timeout, connection reset after sending).
//     The process that saw it is retired and a fresh process id replaces it.
//
// These three types are the one vocabulary of outcomes: the workload client
// classifies its results with them too.
//
// # Client ops, by workload
//
// Every workload records its ops as above (invoke, then ok / fail / info; a
// process retired after info). "key" is the Redis key. A value is JSON;
// "null" and an absent value are the same. An op that never completed (the
// history ended) is treated exactly as an info op.
//
// Register (Linearizable), per key:
//   - f "read":  invoke value null; ok value an integer, or null when the key
//     does not exist.
//   - f "write": invoke value an integer (SET).
//   - f "cas":   invoke value [old, new]. ok: it compared equal and swapped.
//     fail with an error starting "cas-mismatch": it ran and did not swap
//     (the value was not old) - checked as an observation. Any other fail:
//     it did not run. info: unknown.
//
// Counter (Counter, RPO), per key:
//   - f "add" (or "incr"): invoke value the delta (INCRBY); "incr" without
//     a value means 1.
//   - f "read": ok value an integer; null (no key) is 0.
//
// Set (Set, RPO), per key:
//   - f "add":  invoke value the element, an integer unique within the key
//     (SADD). A second add of the same element is ignored and counted.
//   - f "read": ok value the list of integers (SMEMBERS); null is empty.
//
// Bank (Bank); key = the account group (the hash tag), ops of one group
// carry the same key:
//   - f "init":     ok; value (on the completion, else on the invocation)
//     {"account": balance, ...}; sets the group's total when Bank gets 0.
//   - f "transfer": invoke value {"from": k1, "to": k2, "amount": n}.
//   - f "read-all": ok value {"account": balance, ...} read in one
//     transaction.
//
// List-append (ListAppend), Elle's model; key = the hash tag of the
// transaction's keys (used only to filter by checker.Scope.KeyPrefix):
//   - f "txn": invoke value [["append","k",v], ["r","k",null], ...]; the ok
//     completion carries the same micro-ops with each read filled in with
//     the list of integers read (null = empty). Appended values are unique
//     per key. fail = aborted (its appends must never be read); info =
//     unknown.
//
// Cross-slot fidelity (CrossSlot):
//   - f "cross-slot": a transaction over keys in different slots sent on
//     purpose; expected: fail with an error starting "CROSSSLOT".
//
// Lock (Lock), per key (the lock; its fence key is never an op's key):
//   - f "acquire": invoke value {"token": t, "ttl_ms": n}, the token unique
//     per acquisition; ok value adds "fence": the fencing token (an
//     integer above 0); fail with error "lock-held": refused, certainly
//     not acquired.
//   - f "release": invoke value {"token": t, "hold_ms": n}: invoked when
//     the hold begins, sent n ms later; ok (same value): the
//     compare-and-delete deleted; fail "not-owner": it found another token
//     or none; fail "not-sent": the run ended during the hold.
//   - f "clear": DEL of the lock, a final op once traffic has ended; it
//     ends every hold of the lock, and no lock op may follow it.
//
// Queue (Queue), per queue (a list, its processing list under the same
// hash tag; or a stream with one consumer group); every invocation
// carries "kind": "list" or "stream":
//   - f "enqueue": invoke {"kind", "msg"}, the message unique per run; ok
//     adds "id" on a stream (XADD's entry id).
//   - f "dequeue" (LMOVE/BLMOVE to the processing list; XREADGROUP) and
//     f "claim" (XAUTOCLAIM, streams): invoke {"kind", "consumer"}; ok
//     adds "msgs": [{"msg", "id"}...], none when nothing was delivered.
//   - f "ack" (LREM from the processing list; XACK): invoke {"kind",
//     "consumer", "msgs": [the one message]}; ok adds "acked": 1 or 0.
//   - f "drain": a final read of the whole queue, taking nothing; ok
//     {"kind", "queue", "processing"} (list) or {"kind", "entries",
//     "last_delivered", "pending": [{"id", "consumer", "deliveries"}]}
//     (stream). No queue op may follow its queue's drain.
//
// TTL (TTL), per key, or per hash field when the value has "field":
//   - f "set": invoke {"value", "ttl_ms"} (SET PX; ttl 0: no expiry;
//     HSET then HPEXPIRE or HPERSIST for a field), value unique per key.
//   - f "pexpire": invoke {"ttl_ms"}; ok adds "reply" (PEXPIRE's 1 or 0,
//     HPEXPIRE's code for the field).
//   - f "persist": ok adds "reply" (PERSIST's 1 or 0, HPERSIST's code).
//   - f "read": ok {"got": value (absent: no key), "pttl": n} read
//     together (-2 no key, -1 no expiry).
//   - f "final": a read, then DEL, in one script, once traffic has ended;
//     retried until one succeeds, and no other op of the key follows it.
//   - f "probe" (an init op): ok {"hash_field_expiry": bool, "missing":
//     [commands]}: COMMAND INFO of HPEXPIRE, HPERSIST, HPTTL.
//
// WAIT: any write's completion may carry "wait":{"want":N,"acked":M}. The
// WAIT split of lost writes is: no wait recorded -> no_wait; acked >= want
// -> wait_satisfied; acked < want (or -1, no reply) -> wait_unsatisfied.
//
// # Nemesis events
//
// Entries with process "nemesis"; their f names are the constants of
// events.go. f "start-<fault>" and "stop-<fault>" (StartOf, StopOf, with
// "nodes") delimit fault windows, a stop closing the open start of its fault
// on the same nodes; a fault never stopped (one shot) lasts until the next
// start, "heal" or "final-reads" (see checker.Windows); a start whose
// completion failed, or whose detail has "skipped" or "error", took no
// effect and opens nothing. The start of the migrate fault carries, on its
// completion, {"placement":[Placement...]} for every slot it moved.
// f "nodes" (NodesEvent, recorded by the runner before traffic) maps node
// names to addresses: NodesDetail, {"addrs":{"n1":"ip:port"}}. f
// "final-reads" (FinalReads) marks the start of the final read phase after
// healing: Counter takes each key's final value from the last read of that
// phase (or from the last read overall when the marker is missing).
// f "heal" (Heal) is the nemesis's healing, an invoke/info pair. f
// "journal" (Journal) copies one step of the topology journal (seq, state
// begin/done/failed, kind, slots, from, to); "compose" and "handoff" are
// the steps of fault compositions; "census" (CensusEvent) is the end
// phase's key census (a Census: set-aside copies, AsideName, listed under
// the key they are a copy of, "asides"); "audit" (Audit) the foreign-data audit of
// a cluster redline did not create. nemesis's package documentation says
// what each fault's details hold.
package history
