// Package server is the single-node engine of redline's reference server: a
// Redis 7.0 compatible RESP server (RESP2/RESP3, pipelining, inline
// commands) with strings, hashes, sets, lists, sorted sets, expiry, MULTI/
// EXEC/WATCH, Lua scripting (gopher-lua), DUMP/RESTORE and an append-only
// file. `redline server` calls Main; tests use New + Start on 127.0.0.1:0.
//
// # Concurrency
//
// One goroutine per connection reads into a growable buffer, parses every
// complete request in it, runs the whole batch under the server lock
// (Server.mu), writes the AOF (fsync with appendfsync always) and then
// flushes all replies with one write. Handlers, hooks and the cron run with
// the lock held, so every command, transaction and script is atomic.
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
// # Extension seams for cluster mode
//
// Cluster mode lives in other packages and plugs in without editing command
// handlers:
//
//   - Server.Register(*Command) adds or replaces commands (CLUSTER, ASKING,
//     READONLY, READWRITE, MIGRATE, WAIT, REPLCONF, PSYNC, ROLE ...). Call it
//     before Start/Serve.
//   - Hooks.PreExecute(c, cmd, argv) runs before every command, also while
//     queueing inside MULTI and for each redis.call inside a script. A
//     non-empty return ("MOVED 3999 10.0.0.2:7001", "CROSSSLOT ...",
//     "CLUSTERDOWN ...", "TRYAGAIN ...") is sent instead of running the
//     command; inside MULTI it also makes EXEC fail with EXECABORT, as in
//     Redis. Command.KeyIndexes(argv) or Server.CommandKeys(argv) give the
//     keys (first/last/step from the table, or Command.Keys for movable-key
//     commands such as EVAL). Client.Queued() lists a transaction's commands
//     when the hook sees EXEC. Client.Asking / Client.ReadOnly / Client.Data
//     carry per-connection cluster state.
//   - Hooks.PostExecute(c, cmd) runs after every command (e.g. to clear
//     ASKING after one command).
//   - Hooks.Propagated(db, argv) sees every applied write in order, as the
//     argv that reproduces it deterministically: relative TTLs turned into
//     PXAT/PEXPIREAT, INCRBYFLOAT as SET KEEPTTL, SPOP as SREM, expired keys
//     as DEL, transactions and scripts as their effects wrapped in
//     MULTI/EXEC, and SELECT whenever the database changes. It is the same
//     stream the AOF gets: feed it to the replication backlog.
//   - Server.NewInternalClient + Server.Exec apply commands on behalf of the
//     server (a replica applying its primary's stream); Server.Snapshot emits
//     the dataset as commands (full sync); Server.FlushAll empties it.
//   - store.DB.EnableSlotIndex (done automatically with cluster-enabled yes)
//     keeps keys per hash slot so CountKeysInSlot / KeysInSlot answer
//     COUNTKEYSINSLOT / GETKEYSINSLOT without scanning; keyslot.Of is the
//     CRC16 hash-tag slot function.
//   - Hooks.InfoSection(name) adds to or replaces an INFO section (cluster,
//     replication); Hooks.Cron runs every 100 ms; Hooks.ClientClosed runs
//     when a connection ends. Server.Lock/Unlock let the cluster bus touch
//     the keyspace outside a command.
//   - config.Config carries every cluster-* and replication directive
//     (cluster-enabled, cluster-config-file, cluster-node-timeout,
//     cluster-announce-*, cluster-require-full-coverage,
//     cluster-allow-reads-when-down, cluster-migration-barrier,
//     cluster-replica-validity-factor, min-replicas-to-write, replicaof ...).
//
// # Serving connections
//
// On Linux, connections are served by one event loop on epoll, as Redis
// serves them: one read and one write per request (commands run one at a
// time under the server lock anyway; a second loop only added contention). A connection whose next command blocks its
// caller (WAIT, a client pause, a Lua script, PSYNC) or whose replies
// outgrow the socket buffer moves to a goroutine of its own for the rest of
// its life. REDLINE_EVENT_LOOP=off in the environment gives every
// connection its own goroutine (to compare, or to rule the loop out).
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
// nothing it acknowledged. At start the file is replayed; a truncated tail
// (or a transaction without EXEC) is cut off with a log line. The file is
// rewritten from the dataset on BGREWRITEAOF and when it grows by
// auto-aof-rewrite-percentage over auto-aof-rewrite-min-size.
package server
