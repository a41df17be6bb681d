package cluster

import (
	"math/rand/v2"
	"time"
)

// Flags are a node's flags as in Redis (the same bit values).
type Flags uint16

// Node flags.
const (
	FlagMyself     Flags = 1 << 0
	FlagMaster     Flags = 1 << 1
	FlagSlave      Flags = 1 << 2
	FlagPFail      Flags = 1 << 3
	FlagFail       Flags = 1 << 4
	FlagHandshake  Flags = 1 << 5
	FlagNoAddr     Flags = 1 << 6
	FlagMeet       Flags = 1 << 7
	FlagMigrateTo  Flags = 1 << 8
	FlagNoFailover Flags = 1 << 9
)

// Timing constants of Redis 7 (milliseconds unless said otherwise).
const (
	failReportValidityMult = 2    // failure reports valid 2*NT
	failUndoTimeMult       = 2    // FAIL of a master with slots clears after 2*NT
	mfTimeout              = 5000 // manual failover timeout
	mfPauseMult            = 2    // master pauses writes mfTimeout*2
	writableDelay          = 2000 // a master waits this long after start before state ok
	minRejoinDelay         = 500
	maxRejoinDelay         = 5000
	replicaMigrationDelay  = 5000
	blacklistTTL           = 60000 // CLUSTER FORGET ban
)

// Config holds the cluster settings of a node. Zero values are replaced by the
// defaults of DefaultConfig where noted.
type Config struct {
	// NodeTimeout is cluster-node-timeout (default 15s).
	NodeTimeout time.Duration
	// NoFullCoverage is cluster-require-full-coverage no (Redis's default
	// is yes: any unserved slot puts the cluster in state fail).
	NoFullCoverage bool
	// AllowReadsWhenDown is cluster-allow-reads-when-down.
	AllowReadsWhenDown bool
	// MigrationBarrier is cluster-migration-barrier (0 means the default
	// 1; a negative value means 0).
	MigrationBarrier int
	// NoReplicaMigration is cluster-allow-replica-migration no.
	NoReplicaMigration bool
	// ReplicaValidityFactor is cluster-replica-validity-factor (default 10;
	// negative means 0 = always allowed to fail over).
	ReplicaValidityFactor int
	// ReplPingPeriod is repl-ping-replica-period (default 10s).
	ReplPingPeriod time.Duration
	// ReplicaNoFailover is cluster-replica-no-failover.
	ReplicaNoFailover bool
	// AnnounceIP, if set, is the address this node announces; otherwise it
	// learns it from the first MEET it receives.
	AnnounceIP string
	// Hostname is cluster-announce-hostname ("" for none): sent to the
	// other nodes in every PING, PONG and MEET (Redis's hostname ping
	// extension) and shown in CLUSTER NODES, SLOTS and SHARDS.
	Hostname string
	// PreferredEndpoint is cluster-preferred-endpoint-type: "ip" (also
	// ""), "hostname" or "unknown-endpoint"; what redirects, CLUSTER SLOTS
	// and CLUSTER SHARDS give as a node's endpoint.
	PreferredEndpoint string
	// Rand is the only source of randomness (node ids, gossip choice,
	// election delay). Nil means a generator seeded from the node id.
	Rand *rand.Rand
}

// DefaultConfig returns Redis 7's defaults.
func DefaultConfig() Config {
	return Config{NodeTimeout: 15 * time.Second, MigrationBarrier: 1, ReplicaValidityFactor: 10, ReplPingPeriod: 10 * time.Second}
}

func (c *Config) fill() {
	if c.NodeTimeout <= 0 {
		c.NodeTimeout = 15 * time.Second
	}
	if c.MigrationBarrier == 0 {
		c.MigrationBarrier = 1
	}
	if c.ReplicaValidityFactor == 0 {
		c.ReplicaValidityFactor = 10
	}
	if c.ReplicaValidityFactor < 0 {
		c.ReplicaValidityFactor = 0
	}
	if c.ReplPingPeriod <= 0 {
		c.ReplPingPeriod = 10 * time.Second
	}
}

// MsgType is the type of a bus message.
type MsgType uint8

// Bus message types (Redis numbering).
const (
	MsgPing MsgType = iota
	MsgPong
	MsgMeet
	MsgFail
	MsgPublish
	MsgAuthRequest
	MsgAuthAck
	MsgUpdate
	MsgMFStart
	MsgModule       // not sent by this server; numbered as Redis 7.0
	MsgPublishShard // SPUBLISH to the nodes of one shard
	msgTypeCount
)

var msgTypeNames = [...]string{"ping", "pong", "meet", "fail", "publish", "auth-req", "auth-ack", "update", "mfstart", "module", "publishshard"}

func (t MsgType) String() string {
	if int(t) < len(msgTypeNames) {
		return msgTypeNames[t]
	}
	return "unknown"
}

// Message flags (mflags).
const (
	MFlagPaused   uint8 = 1 << 0 // master paused for manual failover
	MFlagForceAck uint8 = 1 << 1 // give a vote even if the master is up
)

// SlotBitmap has bit s set when slot s is claimed.
type SlotBitmap [NumSlots / 8]byte

// Has reports whether slot s is set.
func (b *SlotBitmap) Has(s int) bool { return b[s>>3]&(1<<(s&7)) != 0 }

// Set sets slot s.
func (b *SlotBitmap) Set(s int) { b[s>>3] |= 1 << (s & 7) }

// Clear clears slot s.
func (b *SlotBitmap) Clear(s int) { b[s>>3] &^= 1 << (s & 7) }

// Gossip is one gossip entry of a PING/PONG/MEET.
type Gossip struct {
	ID           string
	PingSent     uint32 // seconds
	PongReceived uint32 // seconds
	IP           string
	Port, CPort  uint16
	Flags        Flags
}

// Link identifies the connection a message arrived on. Exactly one of Out and
// In is non-zero.
type Link struct {
	// Out is the id of an outbound link this node asked for (Envelope.Link).
	Out uint64
	// In is the transport's id of an accepted connection.
	In uint64
	// RemoteIP is the peer's IP as seen on the socket, LocalIP ours (for
	// inbound connections; used to learn addresses from MEET).
	RemoteIP, LocalIP string
}

// Message is a cluster bus message. The header fields are present in every
// message; the body fields depend on Type.
type Message struct {
	Type         MsgType
	Sender       string // 40 hex
	CurrentEpoch uint64
	ConfigEpoch  uint64 // the sender's, or its master's if it is a replica
	Offset       int64  // replication offset
	Master       string // the sender's master, "" for a master
	Slots        SlotBitmap
	IP           string // announced IP, "" to use the socket's
	Port, CPort  uint16
	Flags        Flags
	MFlags       uint8
	StateOK      bool

	Gossip []Gossip // PING, PONG, MEET

	Hostname string // PING, PONG, MEET: the sender's announced hostname

	About string // FAIL: failing node; UPDATE: node whose slots changed

	UpdateConfigEpoch uint64     // UPDATE
	UpdateSlots       SlotBitmap // UPDATE

	Channel, Payload []byte // PUBLISH

	// Link is set by the transport; it is not part of the wire format.
	Link Link `json:"-"`
}

// Envelope is a message to send.
type Envelope struct {
	// Link is the outbound link to send on; the transport dials Addr
	// (ip:cport) the first time it sees a link id. Zero when In is set.
	Link uint64
	Addr string
	// To is the node id the link belongs to (may be a temporary handshake
	// name); informational.
	To string
	// In, when non-zero, means reply on that accepted connection.
	In  uint64
	Msg Message
}

// EventKind is the kind of an Event.
type EventKind uint8

// Events for the engine.
const (
	// EventBecomeMaster: stop replicating, accept writes.
	EventBecomeMaster EventKind = iota + 1
	// EventReplicate: replicate NodeID at IP:Port (drop any data not in its stream).
	EventReplicate
	// EventPauseWrites: pause client writes until Until (manual failover,
	// master side), then confirm with Node.WritesPaused(final offset).
	EventPauseWrites
	// EventUnpauseWrites: end of a manual failover pause.
	EventUnpauseWrites
	// EventDeleteSlots: this master lost Slots to another node while staying
	// master: delete the keys in them.
	EventDeleteSlots
	// EventPublish: deliver Channel/Payload to local subscribers.
	EventPublish
	// EventStateChanged: cluster_state changed to OK.
	EventStateChanged
)

// Event is something the engine must act on.
type Event struct {
	Kind             EventKind
	NodeID           string
	IP               string
	Port             int
	Until            time.Time
	Slots            []int
	OK               bool
	Channel, Payload []byte
	// Shard marks an EventPublish from SPUBLISH (PUBLISHSHARD).
	Shard bool
}

// Ready is the batch of outputs accumulated since the last call to Ready.
type Ready struct {
	Messages []Envelope
	// CloseLinks lists outbound links to drop.
	CloseLinks []uint64
	// SaveConfig asks to write NodesConf to nodes.conf (atomically), and
	// Fsync to fsync it before acting on Messages.
	SaveConfig bool
	Fsync      bool
	NodesConf  string
	Events     []Event
	Logs       []string
	// View is the new routing snapshot when slots, roles or state changed.
	View *SlotView
}

// Empty reports whether there is nothing to do.
func (r *Ready) Empty() bool {
	return len(r.Messages) == 0 && len(r.CloseLinks) == 0 && !r.SaveConfig && len(r.Events) == 0 && len(r.Logs) == 0 && r.View == nil
}
