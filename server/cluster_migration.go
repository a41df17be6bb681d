package server

// CLUSTER MIGRATION (Redis 8.4 atomic slot migration): the I/O around
// cluster.Migrations. The machine decides; this file moves its messages
// between primaries, applies snapshots and streamed writes, pauses writes,
// takes slots over and trims them.
//
// Transport (our choice; Redis uses its replication protocol): each message
// is one command, CLUSTER SYNCSLOTS <from> <type> <task> <offset> <bytes>
// <ranges> <error> <payload> <sender's config epoch>, sent on one ordered
// client connection per peer. The payload of SNAPSHOT is the slots' keys as
// RESTORE ... REPLACE ABSTTL commands, that of STREAM the write's argv,
// both in RESP; the receiver
// applies them with an internal client that bypasses routing (as its
// master's stream). Other choices:
//   - A write on a slot whose handoff paused writes is refused with
//     TRYAGAIN (Redis blocks the client until the pause ends).
//   - Writes inside MULTI/EXEC are streamed one by one.
//   - Keys being imported are hidden, and the INFO fields and CLIENT LIST
//     flags are in cluster_migration_hide.go.

import (
	"bufio"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redline-dev/redline/server/cluster"
	"github.com/redline-dev/redline/server/keyslot"
	"github.com/redline-dev/redline/server/store"
)

// asmRuntime is a node's migration machine and its peer connections
// (server lock held for everything but the senders' I/O).
type asmRuntime struct {
	m     *cluster.Migrations
	peers map[string]*asmPeer
	apply *Client // applies received snapshots and streams
	// sourceEpoch is the config epoch the source sent with its last EOF:
	// the takeover's epoch must exceed it.
	sourceEpoch uint64
	stats       asmStats
}

// asmPeer is the ordered outbound connection to one primary.
type asmPeer struct {
	queue  chan []byte
	done   chan struct{}
	queued atomic.Int64 // bytes in queue (INFO's output buffer)
}

func (e *ext) asmState() *asmRuntime {
	if e.asm == nil {
		s := e.s
		e.asm = &asmRuntime{peers: map[string]*asmPeer{}}
		e.asm.m = cluster.NewMigrations(e.node.ID(), cluster.DefaultMigrationConfig(), e.node.SlotOwner,
			func() string { return randomHex(40) }, time.Now())
		e.asm.apply = s.NewInternalClient()
		cext(e.asm.apply).master = true
	}
	return e.asm
}

// asmTick runs from cron (lock held).
func (e *ext) asmTick() {
	if e.asm == nil || e.node == nil {
		return
	}
	e.asm.m.Tick(time.Now())
	e.asmOutput(nil)
}

// asmPaused refuses writes on slots paused by a handoff (preExecute).
func (e *ext) asmPaused(cmd *Command, argv [][]byte) string {
	if e.asm == nil || cmd.Flags&FlagWrite == 0 {
		return ""
	}
	if k := cmd.firstKey(argv); k != nil && e.asm.m.Paused(keyslot.Of(k)) {
		return "TRYAGAIN Slot is being migrated, writes are paused for the handoff"
	}
	return ""
}

// asmPropagated streams a write applied here to a migration of its slot.
func (e *ext) asmPropagated(argv [][]byte) {
	if e.asm == nil || len(argv) == 0 || e.asm.m.ActiveTasks() == 0 {
		return
	}
	cmd := e.s.Lookup(argv[0])
	if cmd == nil {
		return
	}
	k := cmd.firstKey(argv)
	if k == nil {
		return
	}
	payload := appendCommand(nil, argv)
	e.asm.m.SetTime(time.Now())
	e.asm.m.Write(keyslot.Of(k), int64(len(payload)))
	e.asmOutput(payload)
}

// asmOutput performs the machine's output; stream is the payload of the
// STREAM messages it holds (the write just applied).
func (e *ext) asmOutput(stream []byte) {
	a := e.asm
	o := a.m.TakeOutput()
	for _, l := range o.Log {
		e.s.Logf('*', "Slot migration: %s", l)
	}
	for _, rs := range o.Trim {
		e.asmTrim(rs)
	}
	if len(o.TakeOver) > 0 {
		for _, rs := range o.TakeOver {
			e.node.ClaimSlots(rs, a.sourceEpoch)
		}
		e.ready()
	}
	for _, msg := range o.Msgs {
		var payload []byte
		switch msg.Type {
		case cluster.MigSnapshot:
			payload = e.asmSnapshot(msg.Task)
		case cluster.MigStream:
			payload = stream
		}
		e.asmSend(msg, payload)
	}
	e.asmRefreshHidden()
}

func forEachSlot(rs []cluster.SlotSpan, f func(int)) {
	for _, r := range rs {
		for sl := r.Start; sl <= r.End; sl++ {
			f(sl)
		}
	}
}

// asmSnapshot is the task's slots as RESTORE commands.
func (e *ext) asmSnapshot(task string) []byte {
	var t *cluster.MigrationTask
	for _, x := range e.asm.m.Status(task) {
		if !x.Importing {
			t = x
		}
	}
	if t == nil {
		return nil
	}
	db := e.s.dbs[0]
	var b []byte
	forEachSlot(t.Ranges, func(sl int) {
		for _, k := range db.KeysInSlot(sl, 1<<30) {
			o := db.GetString(k)
			if o == nil {
				continue
			}
			b = appendCommand(b, [][]byte{[]byte("RESTORE"), []byte(k), []byte(strconv.FormatInt(o.ExpireAt, 10)),
				store.Dump(o), []byte("REPLACE"), []byte("ABSTTL")})
		}
	})
	return b
}

// asmTrim deletes the keys of slots that are not (or no longer) ours. A
// slot this node owns is never trimmed: a destination whose task fails
// after the slot became its own another way (a classic SETSLOT/MIGRATE of
// the same slot meanwhile) would otherwise delete the keys it now serves
// (found by the handoff checker with migrate:atomic-concurrent-classic).
func (e *ext) asmTrim(rs []cluster.SlotSpan) {
	db := e.s.dbs[0]
	e.asm.stats.trimStarted++
	defer func() { e.asm.stats.trimCompleted++ }()
	self := e.node.ID()
	forEachSlot(rs, func(sl int) {
		if e.node.SlotOwner(sl) == self {
			e.s.Logf('#', "Slot migration: not trimming slot %d: this node owns it", sl)
			return
		}
		for _, k := range db.KeysInSlot(sl, 1<<30) {
			if db.Delete([]byte(k)) {
				e.s.propagate(0, [][]byte{[]byte("DEL"), []byte(k)})
			}
		}
	})
}

// asmSend queues msg (and its payload) on the connection to its peer.
func (e *ext) asmSend(msg cluster.MigMsg, payload []byte) {
	info, ok := e.node.Lookup(msg.To)
	if !ok {
		e.asm.m.LinkDown(msg.To)
		return
	}
	p := e.asm.peers[msg.To]
	if p == nil {
		p = &asmPeer{queue: make(chan []byte, 1<<16), done: make(chan struct{})}
		e.asm.peers[msg.To] = p
		addr := net.JoinHostPort(info.IP, strconv.Itoa(info.Port))
		e.wg.Add(1)
		go e.asmSender(msg.To, addr, p)
	}
	argv := [][]byte{[]byte("CLUSTER"), []byte("SYNCSLOTS"), []byte(msg.From), []byte(strconv.Itoa(int(msg.Type))),
		[]byte(msg.Task), []byte(strconv.FormatInt(msg.Offset, 10)), []byte(strconv.FormatInt(msg.Bytes, 10)),
		[]byte(cluster.FormatRanges(msg.Ranges)), []byte(msg.Err), payload,
		[]byte(strconv.FormatUint(e.node.ConfigEpoch(), 10))}
	b := appendCommand(nil, argv)
	select {
	case p.queue <- b:
		p.queued.Add(int64(len(b)))
	default: // the peer cannot keep up: the link is as good as broken
		e.asmLinkDown(msg.To, p)
	}
}

// asmLinkDown drops the connection to peer and fails its tasks (lock held).
func (e *ext) asmLinkDown(peer string, p *asmPeer) {
	if e.asm.peers[peer] != p {
		return
	}
	delete(e.asm.peers, peer)
	close(p.done)
	e.asm.m.LinkDown(peer)
	e.asmOutput(nil)
}

// asmSender writes the queued messages to the peer in order, reading (and
// discarding) the replies; any error breaks the link.
func (e *ext) asmSender(peer, addr string, p *asmPeer) {
	defer e.wg.Done()
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	fail := func() {
		e.s.mu.Lock()
		e.asmLinkDown(peer, p)
		e.s.mu.Unlock()
	}
	if err != nil {
		fail()
		return
	}
	defer conn.Close()
	rd := bufio.NewReader(conn)
	for {
		select {
		case <-e.done:
			return
		case <-p.done:
			return
		case b := <-p.queue:
			p.queued.Add(-int64(len(b)))
			conn.SetDeadline(time.Now().Add(10 * time.Second))
			if _, err := conn.Write(b); err != nil {
				fail()
				return
			}
			l, err := readReply(rd)
			if err != nil {
				fail()
				return
			}
			if strings.HasPrefix(l, "-") {
				e.s.Logf('#', "Slot migration: %s refused a message: %s", peer, l)
			}
		}
	}
}

// asmSetslotConflict refuses CLUSTER SETSLOT <slot> IMPORTING | MIGRATING
// | NODE on a slot an active CLUSTER MIGRATION task here covers. Our
// choice (Redis 8.4's documentation is silent): a classic move of the same
// slot at the same time has the source stream its MIGRATE's deletions into
// the destination, which then loses the keys the MIGRATE gave it (found
// by the handoff checker with migrate:atomic-concurrent-classic). STABLE
// stays allowed (it only clears a classic state).
func (e *ext) asmSetslotConflict(args []string) string {
	if e.asm == nil || len(args) < 4 || !strings.EqualFold(args[1], "setslot") {
		return ""
	}
	switch strings.ToLower(args[3]) {
	case "importing", "migrating", "node":
	default:
		return ""
	}
	sl, err := strconv.Atoi(args[2])
	if err != nil || sl < 0 || sl >= cluster.NumSlots || !e.asm.m.Covers(sl) {
		return ""
	}
	return "ERR Slot " + args[2] + " is being moved by a CLUSTER MIGRATION task; cancel it first"
}

// asmHandingOff reports whether this node's source task is in its handoff.
func (e *ext) asmHandingOff(task string) bool {
	for _, t := range e.asm.m.Status(task) {
		if !t.Importing && t.State == cluster.MigHandoff {
			return true
		}
	}
	return false
}

// asmImportingTask reports whether this node imports task right now (a
// late snapshot or stream of a failed attempt is not applied).
func (e *ext) asmImportingTask(task string) bool {
	for _, t := range e.asm.m.Status(task) {
		if t.Importing && t.State != cluster.MigFailed && t.State != cluster.MigDone && t.State != cluster.MigCanceled {
			return true
		}
	}
	return false
}

// lookupWithSub finds a command or, for "container|sub" (Redis 7's
// COMMAND INFO form, how clients detect CLUSTER|MIGRATION), a subcommand;
// it returns the command and its full name.
func (s *Server) lookupWithSub(name []byte) (*Command, string) {
	container, sub, ok := strings.Cut(string(name), "|")
	if !ok {
		if cmd := s.Lookup(name); cmd != nil {
			return cmd, cmd.Name
		}
		return nil, ""
	}
	cmd := s.Lookup([]byte(container))
	if cmd == nil {
		return nil, ""
	}
	for _, sc := range cmd.Subcommands {
		if strings.EqualFold(sc.Name, sub) {
			return sc, cmd.Name + "|" + sc.Name
		}
	}
	return nil, ""
}
