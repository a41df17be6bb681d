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
	"time"

	"github.com/redline-dev/redline/server/cluster"
	"github.com/redline-dev/redline/server/keyslot"
	"github.com/redline-dev/redline/server/store"
)

func (s *Server) asmState() *asmRuntime {
	if s.asm == nil {
		s := s
		s.asm = &asmRuntime{peers: map[string]*asmPeer{}}
		s.asm.m = cluster.NewMigrations(s.cl.node.ID(), cluster.DefaultMigrationConfig(), s.cl.node.SlotOwner,
			func() string { return randomHex(40) }, time.Now())
		s.asm.apply = s.newInternalClient()
		s.asm.apply.repl.master = true
	}
	return s.asm
}

// asmTick runs from cron (lock held).
func (s *Server) asmTick() {
	if s.asm == nil || s.cl.node == nil {
		return
	}
	s.asm.m.Tick(time.Now())
	s.asmOutput(nil)
}

// asmPaused refuses writes on slots paused by a handoff (preExecute).
func (s *Server) asmPaused(cmd *Command, argv [][]byte) string {
	if s.asm == nil || cmd.Flags&FlagWrite == 0 {
		return ""
	}
	if k := cmd.firstKey(argv); k != nil && s.asm.m.Paused(keyslot.Of(k)) {
		return "TRYAGAIN Slot is being migrated, writes are paused for the handoff"
	}
	return ""
}

// asmPropagated streams a write applied here to a migration of its slot.
func (s *Server) asmPropagated(argv [][]byte) {
	if s.asm == nil || len(argv) == 0 || s.asm.m.ActiveTasks() == 0 {
		return
	}
	cmd := s.Lookup(argv[0])
	if cmd == nil {
		return
	}
	k := cmd.firstKey(argv)
	if k == nil {
		return
	}
	payload := appendCommand(nil, argv)
	s.asm.m.SetTime(time.Now())
	s.asm.m.Write(keyslot.Of(k), int64(len(payload)))
	s.asmOutput(payload)
}

// asmOutput performs the machine's output; stream is the payload of the
// STREAM messages it holds (the write just applied).
func (s *Server) asmOutput(stream []byte) {
	a := s.asm
	o := a.m.TakeOutput()
	for _, l := range o.Log {
		s.Logf('*', "Slot migration: %s", l)
	}
	for _, rs := range o.Trim {
		s.asmTrim(rs)
	}
	if len(o.TakeOver) > 0 {
		for _, rs := range o.TakeOver {
			s.cl.node.ClaimSlots(rs, a.sourceEpoch)
		}
		s.nodeReady()
	}
	for _, msg := range o.Msgs {
		var payload []byte
		switch msg.Type {
		case cluster.MigSnapshot:
			payload = s.asmSnapshot(msg.Task)
		case cluster.MigStream:
			payload = stream
		}
		s.asmSend(msg, payload)
	}
	s.saveImportMarker()
	s.asmRefreshHidden()
}

// asmSnapshot is the task's slots as RESTORE commands.
func (s *Server) asmSnapshot(task string) []byte {
	var t *cluster.MigrationTask
	for _, x := range s.asm.m.Status(task) {
		if !x.Importing {
			t = x
		}
	}
	if t == nil {
		return nil
	}
	db := s.dbs[0]
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
func (s *Server) asmTrim(rs []cluster.SlotSpan) {
	db := s.dbs[0]
	s.asm.stats.trimStarted++
	defer func() { s.asm.stats.trimCompleted++ }()
	self := s.cl.node.ID()
	forEachSlot(rs, func(sl int) {
		if s.cl.node.SlotOwner(sl) == self {
			s.Logf('#', "Slot migration: not trimming slot %d: this node owns it", sl)
			return
		}
		for _, k := range db.KeysInSlot(sl, 1<<30) {
			if db.Delete([]byte(k)) {
				s.propagate(0, [][]byte{[]byte("DEL"), []byte(k)})
			}
		}
	})
}

// asmSend queues msg (and its payload) on the connection to its peer.
func (s *Server) asmSend(msg cluster.MigMsg, payload []byte) {
	info, ok := s.cl.node.Lookup(msg.To)
	if !ok {
		s.asm.m.LinkDown(msg.To)
		return
	}
	p := s.asm.peers[msg.To]
	if p == nil {
		p = &asmPeer{queue: make(chan []byte, 1<<16), done: make(chan struct{})}
		s.asm.peers[msg.To] = p
		addr := net.JoinHostPort(info.IP, strconv.Itoa(info.Port))
		s.clusterWG.Add(1)
		go s.asmSender(msg.To, addr, p)
	}
	argv := [][]byte{[]byte("CLUSTER"), []byte("SYNCSLOTS"), []byte(msg.From), []byte(strconv.Itoa(int(msg.Type))),
		[]byte(msg.Task), []byte(strconv.FormatInt(msg.Offset, 10)), []byte(strconv.FormatInt(msg.Bytes, 10)),
		[]byte(cluster.FormatRanges(msg.Ranges)), []byte(msg.Err), payload,
		[]byte(strconv.FormatUint(s.cl.node.ConfigEpoch(), 10))}
	b := appendCommand(nil, argv)
	select {
	case p.queue <- b:
		p.queued.Add(int64(len(b)))
	default: // the peer cannot keep up: the link is as good as broken
		s.asmLinkDown(msg.To, p)
	}
}

// asmLinkDown drops the connection to peer and fails its tasks (lock held).
func (s *Server) asmLinkDown(peer string, p *asmPeer) {
	if s.asm.peers[peer] != p {
		return
	}
	delete(s.asm.peers, peer)
	close(p.done)
	s.asm.m.LinkDown(peer)
	s.asmOutput(nil)
}

// asmSender writes the queued messages to the peer in order, reading (and
// discarding) the replies; any error breaks the link.
func (s *Server) asmSender(peer, addr string, p *asmPeer) {
	defer s.clusterWG.Done()
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	fail := func() {
		s.mu.Lock()
		s.asmLinkDown(peer, p)
		s.mu.Unlock()
	}
	if err != nil {
		fail()
		return
	}
	defer conn.Close()
	rd := bufio.NewReader(conn)
	for {
		select {
		case <-s.clusterDone:
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
				s.Logf('#', "Slot migration: %s refused a message: %s", peer, l)
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
func (s *Server) asmSetslotConflict(args []string) string {
	if s.asm == nil || len(args) < 4 || !strings.EqualFold(args[1], "setslot") {
		return ""
	}
	switch strings.ToLower(args[3]) {
	case "importing", "migrating", "node":
	default:
		return ""
	}
	sl, err := strconv.Atoi(args[2])
	if err != nil || sl < 0 || sl >= cluster.NumSlots || !s.asm.m.Covers(sl) {
		return ""
	}
	return "ERR Slot " + args[2] + " is being moved by a CLUSTER MIGRATION task; cancel it first"
}

// asmHandingOff reports whether this node's source task is in its handoff.
func (s *Server) asmHandingOff(task string) bool {
	for _, t := range s.asm.m.Status(task) {
		if !t.Importing && t.State == cluster.MigHandoff {
			return true
		}
	}
	return false
}

// asmImportingTask reports whether this node imports task right now (a
// late snapshot or stream of a failed attempt is not applied).
func (s *Server) asmImportingTask(task string) bool {
	for _, t := range s.asm.m.Status(task) {
		if t.Importing && t.State != cluster.MigFailed && t.State != cluster.MigDone && t.State != cluster.MigCanceled {
			return true
		}
	}
	return false
}
