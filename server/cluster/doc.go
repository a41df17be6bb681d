// Package cluster is the Redis Cluster logic of the reference server: a
// deterministic state machine in the style of etcd/raft, plus pure functions
// for routing and the CLUSTER reply formats. It does no I/O, starts no
// goroutine, reads no clock and uses no global randomness. The sub-package
// bus moves its messages over sockets; package server owns the node (one
// lock for Step, Tick, admin commands and each Ready) and describes that
// wiring in its doc.go. Key slots come from package keyslot.
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
// # API
//
// A node starts with LoadNode(cfg, nodes.conf text, Self{...}, now) when a
// nodes.conf exists, else NewNode(cfg, Self{IP, Port, CPort}, now). Its
// owner serializes every call on it.
//
// Exec(n, argv, Env{...}) runs a CLUSTER command: it parses every
// subcommand with Redis 7's arity and error texts and returns a reply value
// (Status, Verbatim, string, int64, []any, Map, error) for the RESP layer to
// encode; Env supplies key counts and key listing. Each subcommand maps to
// a Node method: MEET -> Meet, ADDSLOTS/ADDSLOTSRANGE -> AddSlots
// (SlotRangeList for ranges), DELSLOTS/DELSLOTSRANGE -> DelSlots, SETSLOT ->
// SetSlot, REPLICATE -> Replicate, FORGET -> Forget, RESET -> Reset,
// FAILOVER -> Failover, BUMPEPOCH -> BumpEpoch, SET-CONFIG-EPOCH ->
// SetConfigEpoch, FLUSHSLOTS -> FlushSlots, COUNT-FAILURE-REPORTS ->
// CountFailureReports, SAVECONFIG -> SaveConfig, MYID -> ID, NODES ->
// NodesText, INFO -> InfoText, SLOTS -> Slots, SHARDS -> Shards, REPLICAS ->
// ReplicasText, LINKS -> Links. Errors carry the exact Redis text (without
// the leading '-'). Admin methods use the time of the last Tick or Step.
//
// Routing: Ready.View (a *SlotView, new whenever slots, roles or the
// cluster state change; immutable, safe to share) answers
// view.Route(Request{Slots, KeyExists, Write, Asking, ReadOnly, Migrate})
// per keyed command. Decision.Error() is the exact error string: MOVED,
// ASK, TRYAGAIN, CROSSSLOT, or the CLUSTERDOWN variants; "" means serve
// locally.
//
// Ready.Events ask the owner for what the machine cannot do itself:
// EventReplicate (become a replica of NodeID at IP:Port),
// EventBecomeMaster, EventPauseWrites (pause writes, then confirm with
// WritesPaused(final offset)) and EventUnpauseWrites (the master side of a
// manual failover), EventDeleteSlots (keys of slots this master lost),
// EventPublish and EventStateChanged. After Reset of a replica the owner
// empties its dataset, as Redis does. The owner feeds back SetReplOffset
// (master_repl_offset or processed offset) and SetMasterLinkStatus (for a
// replica's data age check) before each Tick.
//
// # Inputs and outputs
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
