// Package server is redline's reference server: one Redis 7.0 compatible
// node (RESP2/RESP3, pipelining, inline commands) with strings, hashes,
// sets, lists, sorted sets, geo, streams, HyperLogLog, bitmaps, expiry,
// MULTI/EXEC/WATCH, Pub/Sub, client-side caching, Lua scripts and functions
// (gopher-lua), DUMP/RESTORE, an append-only file, replication and cluster
// mode. `redline server` calls Main; tests use New + Start on 127.0.0.1:0,
// which build the same server (same command table, same cluster mode and
// replication) as Main.
//
// Files are named by concern, as Redis names its sources: server.go (the
// Server, start and stop, the connection loop), call.go (one command's
// path: lookup, arity, refusals, MULTI queueing, the handler, propagation),
// commands.go (the one command table: the Command spec, how the families'
// slices become a server's table with Redis's generated metadata merged
// in, lookup), commands_*.go (key specs; Redis 7.0's generated key specs
// and tips), cmd_*.go (every command handler, each family's slice of the
// table at the end of its file), cluster*.go (cluster mode), repl*.go
// (replication), script_*.go (Lua, functions, BUSY), db.go (the dataset as
// a whole), aof.go, evict.go (maxmemory), blocking.go, pubsub.go,
// tracking.go, multi.go, slowlog.go, eventloop_*.go.
//
// # Concurrency
//
// Every command runs under the server lock (Server.mu): a connection's
// whole batch of parsed requests runs under one acquisition, then the AOF
// is written (fsync with appendfsync always) and the replies are flushed
// with one write. Handlers, the cron and the cluster node run with the lock
// held, so every command, transaction and script is atomic. Who reads the
// sockets is said under "Serving connections".
//
// A Lua script runs under the lock too; while one runs longer than
// busy-reply-threshold, newly arriving commands get BUSY and SCRIPT KILL
// stops it unless it has written (UNKILLABLE), as in Redis.
//
// # Time
//
// Everything time-dependent (expiry, TTL, TIME, active expiry) reads the
// injectable store.Clock. `REDLINE CLOCK-OFFSET <ms>` shifts it at runtime
// (the clock-skew fault); `REDLINE CLOCK-OFFSET` reads the offset.
//
// # Cluster mode and replication
//
// Cluster mode (cluster*.go), replication (repl*.go), MIGRATE and maxmemory
// are part of this package, not plug-ins: as in Redis, where cluster.c and
// replication.c share the server struct with the commands, their state is
// plain fields of Server (cl, repl, oom, mig, slotStats, asm) and of Client
// (repl), and the command path calls them directly (call.go):
//
//   - refusal runs before every command, also while queueing inside MULTI
//     and for each redis.call: -LOADING during a full sync, -OOM over
//     maxmemory, cluster routing of every keyed command (each queued command
//     for EXEC, each redis.call with the flags of the script's caller)
//     through the node's SlotView (MOVED, ASK, TRYAGAIN, CROSSSLOT,
//     CLUSTERDOWN), then writes refused on a read-only replica or without
//     min-replicas-to-write good replicas. A refusal inside MULTI makes EXEC
//     fail with EXECABORT, as in Redis.
//   - afterCommand clears ASKING after one command (not inside MULTI) and
//     notes the client's replication offset for WAIT.
//   - Every applied write is propagated in order, as the argv that
//     reproduces it deterministically: relative TTLs turned into
//     PXAT/PEXPIREAT, INCRBYFLOAT as SET KEEPTTL, SPOP as SREM, expired keys
//     as DEL, transactions and scripts as their effects wrapped in
//     MULTI/EXEC, and SELECT whenever the database changes. It is the AOF's
//     stream; replication feeds its backlog from it (propagatedToReplicas).
//   - The cron (every 100 ms) runs replication's, maxmemory's and cluster
//     mode's periodic work; a closed connection drops its replica link.
//
// The cluster node (package cluster's state machine: Step, Tick, Ready) has
// one owner, the server lock, as Redis runs its bus handlers and clusterCron
// on its one thread. The bus (package cluster/bus) only moves bytes: it
// decodes frames into Inputs and writes what it is given. runCluster
// (started by Start or Main when cluster-enabled is yes) feeds each Input to
// Step (or LinkFailed) and a 100 ms ticker to Tick, with the replication
// offset and master link state set just before (SetReplOffset,
// SetMasterLinkStatus); CLUSTER runs cluster.Exec. All of it holds the
// server lock, and each is followed by nodeReady(), which performs the
// node's Ready in order: nodes.conf rewritten in place and fsynced
// (bus.SaveNodesConf, its one writer; a vote leaves only once lastVoteEpoch
// is on disk), the messages handed to bus.Send, then the events applied on
// the spot: EventReplicate and EventBecomeMaster switch replication,
// EventPauseWrites pauses writes like CLIENT PAUSE WRITE and answers
// WritesPaused(master_repl_offset), EventUnpauseWrites ends the pause,
// EventDeleteSlots deletes the keys of slots this master lost. No event
// waits in a queue, so none is lost. The outputs of a pipeline of CLUSTER
// commands are performed once, after the batch and before its replies
// (flushClusterOutputs, Redis's beforeSleep), so nodes.conf is fsynced once
// per batch; a keyed command later in the same batch routes on the new View.
// A Lua script holds the server lock while it runs, so a long script also
// holds the node: it neither ticks nor answers its peers until the script
// ends (Redis keeps answering the bus from inside a script that outlives
// busy-reply-threshold).
//
// Other pieces cluster mode uses: store.DB.EnableSlotIndex (done with
// cluster-enabled yes) keeps keys per hash slot for COUNTKEYSINSLOT and
// GETKEYSINSLOT; keyslot.Of is the key-to-slot function; encodeRDB and
// loadRDB (persist.go) carry a replica's full sync, flushAll,
// newInternalClient and execInternal its stream;
// deleteKeysInSlot empties a lost slot. config.Config carries every
// cluster-* and replication directive. Options.ClusterTransport and
// Options.DialMaster replace the TCP network of the bus and of replica links
// (tests run whole clusters in one process over a bus.MemNetwork).
//
// # Serving connections
//
// On Linux, connections are served by one event loop on epoll, as Redis
// serves them: one read and one write per request (commands run one at a
// time under the server lock anyway; a second loop only added contention). A
// connection whose next command blocks its caller (WAIT, a client pause, a
// Lua script, PSYNC) or whose replies outgrow the socket buffer moves to a
// goroutine of its own for the rest of its life. REDLINE_EVENT_LOOP=off in
// the environment gives every connection its own goroutine (to compare, or
// to rule the loop out).
//
// # Profiling
//
// With REDLINE_CPUPROFILE=<path> in the environment, Main writes a CPU
// profile until shutdown (scripts/bench-server PROFILE=... uses it).
//
// # Persistence
//
// With appendonly yes, writes are appended to dir/appenddirname/
// appendfilename before the reply is sent; appendfsync always fsyncs first,
// everysec fsyncs in the background once a second, so a killed process loses
// nothing it acknowledged; no leaves the fsync to the OS. A failed write
// is Redis's flushAppendOnlyFile's: with always the server exits before
// replying, with everysec or no the reply goes out, writes and PING are
// refused with "MISCONF Errors writing to the AOF file: <errno>" and the
// buffer is retried until a write succeeds (aof.go). At start the file is replayed; a truncated tail
// (or a transaction without EXEC) is cut off with a log line. The file is
// rewritten from the dataset on BGREWRITEAOF and when it grows by
// auto-aof-rewrite-percentage over auto-aof-rewrite-min-size.
package server
