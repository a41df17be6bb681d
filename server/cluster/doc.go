// Package cluster is the Redis Cluster logic of the reference server: a
// deterministic state machine in the style of etcd/raft, plus pure functions
// for key slots, routing and the CLUSTER reply formats. It does no I/O,
// starts no goroutine, reads no clock and uses no global randomness; the
// sub-package bus is the thin I/O layer around it (listener on the bus port,
// one connection per peer, framing, the Step/Tick/Ready loop).
//
// # Behaviour
//
// It follows Redis 7.0's src/cluster.c: MEET/PING/PONG handshake with gossip
// (~1/10 of the nodes, at least 3, plus every PFAIL node), pings every NT/2,
// PFAIL after NT without a pong, FAIL from failure reports of a majority of
// slot-owning masters (reports valid 2*NT) and its broadcast, FAIL clearing,
// cluster state with full coverage, the minority rule and the rejoin delay,
// currentEpoch/configEpoch rules and collision handling, slot ownership from
// PING/PONG headers and UPDATE messages, replica elections (data age check,
// 500 ms + random(0..499) + rank*1000 ms delay, one vote per epoch, no
// second vote for the same master within 2*NT, majority within
// max(2*NT, 2 s)), manual failover (default with MFSTART and offset
// catch-up, FORCE, TAKEOVER) and replica migration with the migration
// barrier. NT is Config.NodeTimeout.
//
// # Wiring it into the engine
//
// Start-up: LoadNode(cfg, nodes.conf text, Self{...}, time.Now()) when a
// nodes.conf exists, else NewNode(cfg, Self{IP, Port, CPort}, time.Now()).
// Hand the node to bus.New(bus.Options{Node, ListenAddr: ":<port+10000>",
// ConfigPath: "nodes.conf", OnReady: hook, BeforeTick: feedRepl}) and Start
// it. From then on touch the node only inside bus.Do(func(n *cluster.Node)
// error {...}), which serializes with the bus and performs the outputs.
//
// The simplest wiring of the CLUSTER command is Exec(n, argv, Env{...}) inside
// bus.Do: it parses every subcommand with Redis 7's arity and error texts and
// returns a reply value (Status, Verbatim, string, int64, []any, Map, error)
// for the RESP layer to encode; Env supplies key counts and key listing.
//
// Commands map to Node methods: CLUSTER MEET -> Meet(ip, port, cport);
// ADDSLOTS/ADDSLOTSRANGE -> AddSlots(slots...) (SlotRangeList for ranges);
// DELSLOTS/DELSLOTSRANGE -> DelSlots; SETSLOT -> SetSlot(slot,
// SetSlotMigrating|SetSlotImporting|SetSlotStable|SetSlotNode, id,
// keysInSlot); REPLICATE -> Replicate(id, dbEmpty); FORGET -> Forget(id);
// RESET -> Reset(hard, dbEmpty); FAILOVER -> Failover(FailoverDefault|
// FailoverForce|FailoverTakeover); BUMPEPOCH -> BumpEpoch() (BUMPED/STILL and
// the epoch); SET-CONFIG-EPOCH -> SetConfigEpoch; FLUSHSLOTS -> FlushSlots;
// COUNT-FAILURE-REPORTS -> CountFailureReports; SAVECONFIG -> SaveConfig;
// MYID -> ID; NODES -> NodesText; INFO -> InfoText; SLOTS -> Slots; SHARDS
// -> Shards; REPLICAS -> ReplicasText; LINKS -> Links; KEYSLOT -> Keyslot.
// Errors are returned with the exact Redis text (without the leading '-').
// After Reset of a replica (EventBecomeMaster) the engine empties its
// dataset, as Redis does.
// Admin methods use the time of the last Tick or Step.
//
// Routing: the engine keeps bus.View() (a *SlotView, replaced whenever slots,
// roles or the cluster state change; safe to share) and calls
// view.Route(Request{Slots, KeyExists, Write, Asking, ReadOnly, Migrate}) per
// keyed command (for EXEC, per queued command). Decision.Error() is the exact
// error string: MOVED, ASK, TRYAGAIN, CROSSSLOT, or the CLUSTERDOWN variants;
// "" means serve locally.
//
// Replication hooks arrive as Ready.Events in OnReady: EventReplicate (become
// a replica of NodeID at IP:Port), EventBecomeMaster, EventPauseWrites (pause
// writes, then confirm with WritesPaused(final offset) through bus.Do) /
// EventUnpauseWrites (the master side of a manual failover),
// EventDeleteSlots (keys of slots this master lost), EventPublish and
// EventStateChanged. The replication layer feeds back SetReplOffset (the
// node's master_repl_offset or processed offset) and SetMasterLinkStatus
// (for the replica's data age check), best from Options.BeforeTick.
//
// Lock order: if the engine calls bus.Do while holding its own lock (a
// CLUSTER command handler), then OnReady and BeforeTick, which run under the
// bus lock, must never wait for the engine's lock: read offsets from atomics
// and hand events that need the keyspace to another goroutine.
//
// # Driving the machine directly
//
// Step(msg, now) processes one bus message; msg.Link says which connection it
// came on (Out: a link id the node asked for in Envelope.Link; In: an accepted
// connection, with its socket addresses). Tick(now) runs clusterCron, every
// ~100 ms. Ready() returns and clears the outputs: Envelopes to send (dial
// Envelope.Addr on first use of Envelope.Link, or reply on connection In),
// links to close, nodes.conf to save (with fsync), events and log lines.
// LinkFailed(id) reports a lost outbound link. The tests in this package run
// whole clusters this way on simulated time over an in-memory network.
//
// The wire format (EncodeMessage, DecodeMessage, ReadFrame) is our own, not
// Redis's: see wire.go.
package cluster
