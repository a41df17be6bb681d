package server

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redline-dev/redline/server/internal/planted"
	"github.com/redline-dev/redline/server/resp"
)

func newReplState(s *Server) *replState {
	r := &replState{s: s, replid: randomHex(40), replid2: strings.Repeat("0", 40), secondOffset: -1,
		ackCh: make(chan struct{}), state: "connect"}
	// downSinceA 0: never synced since start, down "since ever", as Redis's
	// repl_down_since 0 (INFO's master_link_down_since_seconds -1; the
	// failover rule's data age unbounded: such a replica never takes over
	// while cluster-replica-validity-factor is above 0).
	return r
}

// ---- the stream (master side) ----

// propagated is the engine's hook: every applied write, in order.
func (r *replState) propagated(db int, argv [][]byte) {
	if r.isReplica() {
		return // a replica's stream is its master's, copied verbatim
	}
	if !r.backlogActive {
		return
	}
	if planted.On(planted.ReplSkipIncrby) && strings.EqualFold(string(argv[0]), "incrby") {
		return // applied and acknowledged here, never sent to a replica
	}
	r.enc = appendCommand(r.enc[:0], argv)
	r.feed(r.enc)
}

func appendCommand(b []byte, argv [][]byte) []byte {
	b = resp.AppendArray(b, len(argv))
	for _, a := range argv {
		b = resp.AppendBulk(b, a)
	}
	return b
}

// feed appends stream bytes to the backlog and to every replica.
func (r *replState) feed(b []byte) {
	r.backlogActive = true
	size := int(r.s.cfg.ReplBacklogSize)
	if size <= 0 {
		size = 1 << 20
	}
	r.backlog = append(r.backlog, b...)
	if planted.On(planted.PsyncWrongOffset) {
		r.plantedLastLen = int64(len(b)) // one command: what a wrong PSYNC offset replays
	}
	if len(r.backlog) > 2*size {
		nb := make([]byte, size, 2*size+len(b))
		copy(nb, r.backlog[len(r.backlog)-size:])
		r.backlog = nb
	}
	r.offset += int64(len(b))
	r.offsetA.Store(r.offset)
	var slow []*replicaLink
	if len(r.replicas) > 0 {
		r.unflushed.Store(true)
	}
	for _, rl := range r.replicas {
		rl.mu.Lock()
		rl.buf = append(rl.buf, b...)
		pending := len(rl.buf)
		rl.mu.Unlock()
		if pending > replicaOutputLimit {
			slow = append(slow, rl)
		}
		if !r.loopFeed {
			rl.wake()
		}
	}
	for _, rl := range slow {
		r.s.Logf('#', "Client replica %s:%d scheduled to be closed ASAP for overcoming of output buffer limits.", rl.ip, rl.port)
		r.dropReplica(rl)
	}
}

// replicaOutputLimit is Redis's default client-output-buffer-limit for
// replicas (hard limit 256 MB).
const replicaOutputLimit = 256 << 20

// replWriteGap is the least time between two writes to a replica (see
// writeLoop).
const replWriteGap = time.Millisecond

func (rl *replicaLink) writeLoop() {
	timeout := time.Duration(rl.r.s.cfg.ReplTimeout) * time.Second
	gap := time.NewTimer(time.Hour)
	gap.Stop()
	defer gap.Stop()
	var last time.Time
	if rl.paced != nil && !rl.paced.send(rl, timeout) {
		return
	}
	rl.live.Store(true)
	for {
		select {
		case <-rl.done:
			rl.flushAndClose()
			return
		case <-rl.notify:
		}
		// While writes keep coming, let the other connections' writes pile
		// up for replWriteGap after the previous write: one write (and one
		// read and apply batch on the replica) per burst instead of one per
		// command, like Redis's once-per-event-loop replica write. An
		// isolated write goes out at once. Writes of clients served by an
		// event loop do not wait for this: the loop writes them itself
		// before their replies (flushFromLoop).
		if d := replWriteGap - time.Since(last); d > 0 {
			gap.Reset(d)
			select {
			case <-rl.done:
				rl.flushAndClose()
				return
			case <-gap.C:
			}
		} else {
			runtime.Gosched()
		}
		deadline := time.Now().Add(timeout)
		rl.conn.SetWriteDeadline(deadline)
		if !rl.drain(deadline) {
			rl.conn.Close()
			return
		}
		last = time.Now()
	}
}

// drain writes what was taken and what buf holds until both are empty;
// false when the link broke or the deadline passed. It holds wmu only
// while it takes and writes without waiting, never while it waits for the
// socket, and it waits outside the descriptor's write lock
// (waitWritable), so an event loop's writeNow never waits on a slow or
// cut-off replica.
func (rl *replicaLink) drain(deadline time.Time) bool {
	if rl.raw == nil {
		// No event loop writes to this link (TLS): plain blocking writes.
		rl.wmu.Lock()
		defer rl.wmu.Unlock()
		rl.mu.Lock()
		b := rl.buf
		rl.buf = nil
		rl.mu.Unlock()
		return len(b) == 0 || writeConn(rl.conn, b) == nil
	}
	for {
		rl.wmu.Lock()
		if rl.poff == len(rl.pbuf) {
			rl.mu.Lock()
			spare := rl.pbuf[:0]
			if cap(spare) > 4<<20 {
				spare = nil
			}
			rl.pbuf, rl.buf, rl.poff = rl.buf, spare, 0
			rl.mu.Unlock()
		}
		if rl.poff == len(rl.pbuf) {
			rl.wmu.Unlock()
			return true
		}
		n, err := tryWrite(rl.raw, rl.pbuf[rl.poff:])
		rl.poff += n
		full := rl.poff < len(rl.pbuf)
		rl.wmu.Unlock()
		if err != nil || (full && waitWritable(rl.raw, deadline) != nil) {
			return false
		}
	}
}

// wake tells writeLoop there is something to write.
func (rl *replicaLink) wake() {
	select {
	case rl.notify <- struct{}{}:
	default:
	}
}

// close ends the link once what was propagated before it has been written:
// Redis writes a replica's output in the event-loop turn of the command
// that produced it, so a replica (or a replication-stream reader) it lets
// go has everything up to that command. writeLoop writes the rest (within
// a second) and closes the connection.
func (rl *replicaLink) close() {
	rl.once.Do(func() { close(rl.done) })
}

// closeAbruptly ends the link at once, dropping what was not written (a replica
// over its output limit, a broken link).
func (rl *replicaLink) closeAbruptly() {
	rl.close()
	rl.conn.Close()
}

func (rl *replicaLink) flushAndClose() {
	deadline := time.Now().Add(time.Second)
	rl.conn.SetWriteDeadline(deadline)
	rl.drain(deadline)
	rl.conn.Close()
}

// loopWriteMax bounds what an event loop writes to a replica itself: a
// full sync's file or a replica far behind is writeLoop's to send.
const loopWriteMax = 256 << 10

// flushFromLoop writes to each replica's socket what the stream holds for
// it, from an event loop at the end of a pass, before the pass's replies
// (eventLoop.process). links is the caller's scratch slice.
func (r *replState) flushFromLoop(links *[]*replicaLink) {
	r.unflushed.Store(false)
	r.s.mu.Lock()
	*links = append((*links)[:0], r.replicas...)
	r.s.mu.Unlock()
	for i, rl := range *links {
		rl.writeNow()
		(*links)[i] = nil
	}
}

// writeNow writes what the socket takes of the link's stream without
// waiting. A link that has not finished a paced full sync is left to
// writeLoop, as is what the socket does not take now.
func (rl *replicaLink) writeNow() {
	if rl.raw == nil || !rl.live.Load() {
		rl.wake()
		return
	}
	rl.wmu.Lock()
	defer rl.wmu.Unlock()
	if rl.poff < len(rl.pbuf) {
		n, _ := tryWrite(rl.raw, rl.pbuf[rl.poff:])
		rl.poff += n
		if rl.poff < len(rl.pbuf) {
			rl.wake() // the socket is full: writeLoop waits for it
			return
		}
	}
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if len(rl.buf) == 0 {
		return
	}
	if len(rl.buf) <= loopWriteMax {
		n, _ := tryWrite(rl.raw, rl.buf)
		rl.buf = rl.buf[:copy(rl.buf, rl.buf[n:])]
	}
	if len(rl.buf) > 0 {
		rl.wake()
	}
}

func (r *replState) dropReplica(rl *replicaLink) {
	for i, x := range r.replicas {
		if x == rl {
			r.replicas = append(r.replicas[:i], r.replicas[i+1:]...)
			break
		}
	}
	rl.closeAbruptly()
	r.s.Logf('*', "Connection with replica %s:%d lost.", rl.ip, rl.port)
}

func (r *replState) closeReplicas() {
	for _, rl := range r.replicas {
		rl.close()
	}
	r.replicas = nil
}

// manualFailoverPaused reports whether writes are paused for a cluster
// manual failover. As Redis's replicationCron, no PING goes to the replicas
// then: it would move the offsets past the one the master announced, which
// the replica must reach exactly (clusterHandleManualFailover compares for
// equality), and the failover would time out unpromoted.
func (s *Server) manualFailoverPaused(now time.Time) bool {
	if s.cl.node == nil || s.cl.node.ManualFailoverDeadline().IsZero() {
		return false
	}
	return s.clientsPaused(now)
}

// cron runs every 100 ms with the server lock held.
func (r *replState) cron() {
	now := time.Now()
	if len(r.replicas) > 0 && !r.isReplica() {
		period := time.Duration(r.s.cfg.ReplPingReplicaPeriod) * time.Second
		if r.lastPing.IsZero() {
			// The first PING comes a period after the first replica, not
			// at once: Redis's test suite reads a SYNC stream expecting
			// only the commands it ran (repl-ping-replica-period 3600).
			r.lastPing = now
		}
		if now.Sub(r.lastPing) >= period && !r.s.manualFailoverPaused(now) {
			r.lastPing = now
			r.feed(appendCommand(r.enc[:0], [][]byte{[]byte("PING")}))
		}
	}
	r.sendPendingAck()
	timeout := time.Duration(r.s.cfg.ReplTimeout) * time.Second
	for _, rl := range append([]*replicaLink(nil), r.replicas...) {
		if now.Sub(rl.ackTime) > timeout {
			r.s.Logf('#', "Disconnecting timedout replica: %s:%d", rl.ip, rl.port)
			r.dropReplica(rl)
		}
	}
}

// requestAck asks the replicas for an ACK (REPLCONF GETACK *, part of the
// stream, so it moves the replication offset). While clients are paused it
// waits for the pause's end, as Redis's beforeSleep does: during a manual
// failover the master has told its replica the offset to reach, and a
// GETACK fed after that (a WAIT is no write, so it runs during the pause)
// put the master's offset past it; the replica never saw the offsets equal
// and the failover timed out.
func (r *replState) requestAck() {
	if r.s.clientsPaused(time.Now()) {
		r.ackPending = true
		return
	}
	r.ackPending = false
	r.feed(appendCommand(r.enc[:0], [][]byte{[]byte("REPLCONF"), []byte("GETACK"), []byte("*")}))
}

// sendPendingAck sends the GETACK a WAIT asked for during a pause, once the
// pause is over and if this node is still a master (server lock held).
func (r *replState) sendPendingAck() {
	if r.ackPending && !r.isReplica() && !r.s.clientsPaused(time.Now()) {
		r.requestAck()
	}
}

func (r *replState) notifyAck() {
	close(r.ackCh)
	r.ackCh = make(chan struct{})
}

// countAcked is how many replicas acknowledged target (WAIT).
func (r *replState) countAcked(target int64) int {
	n := 0
	for _, rl := range r.replicas {
		if rl.ackOff >= target || planted.On(planted.WaitEarlyAck) {
			n++
		}
	}
	return n
}

// checkWrite refuses writes on a read-only replica and below
// min-replicas-to-write, and, with replica-serve-stale-data no, commands
// without the stale flag on a replica whose master link is down (server
// lock held).
func (r *replState) checkWrite(c *Client, cmd *Command, argv [][]byte) string {
	f := r.s.commandFlags(cmd, argv)
	write := f&FlagWrite != 0
	stale := f&FlagStale != 0 // may run on a replica whose link is down
	if cmd.Name == "exec" && c.multi {
		for _, q := range c.queue {
			if qc := r.s.Lookup(q[0]); qc != nil {
				write = write || qc.Flags&FlagWrite != 0
				stale = stale && qc.Flags&FlagStale != 0
			}
		}
	}
	cfg := r.s.cfg
	if write && r.isReplica() && cfg.ReplicaReadOnly {
		return "READONLY You can't write against a read only replica."
	}
	if write && !r.isReplica() && cfg.MinReplicasToWrite > 0 && r.goodReplicas() < cfg.MinReplicasToWrite {
		return "NOREPLICAS Not enough good replicas to write."
	}
	if !stale && r.isReplica() && !cfg.ReplicaServeStaleData && !(r.state == "connected" && r.linkUp.Load()) {
		return "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."
	}
	return ""
}

func (r *replState) goodReplicas() int {
	lag := time.Duration(r.s.cfg.MinReplicasMaxLag) * time.Second
	n := 0
	now := time.Now()
	for _, rl := range r.replicas {
		if now.Sub(rl.ackTime) <= lag {
			n++
		}
	}
	return n
}

// ---- INFO ----

func (r *replState) info() string {
	var b strings.Builder
	kv := func(k string, v any) { fmt.Fprintf(&b, "%s:%v\r\n", k, v) }
	now := time.Now()
	if r.isReplica() {
		kv("role", "slave")
		kv("master_host", r.masterHost)
		kv("master_port", r.masterPort)
		up := r.state == "connected" && r.linkUp.Load()
		if up {
			kv("master_link_status", "up")
			kv("master_last_io_seconds_ago", (now.UnixMilli()-r.lastIOA.Load())/1000)
		} else {
			kv("master_link_status", "down")
			kv("master_last_io_seconds_ago", -1)
		}
		kv("master_sync_in_progress", b2i(r.state == "sync"))
		kv("slave_read_repl_offset", r.offset)
		kv("slave_repl_offset", r.offset)
		if !up {
			down := int64(-1)
			if since := r.downSinceA.Load(); since != 0 {
				down = (now.UnixMilli() - since) / 1000
			}
			kv("master_link_down_since_seconds", down)
		}
		kv("slave_priority", r.s.cfg.ReplicaPriority)
		kv("slave_read_only", b2i(r.s.cfg.ReplicaReadOnly))
		kv("replica_announced", 1)
	} else {
		kv("role", "master")
	}
	kv("connected_slaves", len(r.replicas))
	if r.s.cfg.MinReplicasToWrite > 0 {
		kv("min_slaves_good_slaves", r.goodReplicas())
	}
	for i, rl := range r.replicas {
		fmt.Fprintf(&b, "slave%d:ip=%s,port=%d,state=online,offset=%d,lag=%d\r\n", i, rl.ip, rl.port, rl.ackOff, int64(now.Sub(rl.ackTime).Seconds()))
	}
	kv("master_failover_state", "no-failover")
	kv("master_replid", r.replid)
	kv("master_replid2", r.replid2)
	kv("master_repl_offset", r.offset)
	kv("second_repl_offset", r.secondOffset)
	kv("repl_backlog_active", map[bool]int{false: 0, true: 1}[r.backlogActive])
	kv("repl_backlog_size", r.s.cfg.ReplBacklogSize)
	kv("repl_backlog_first_byte_offset", r.offset-int64(len(r.backlog))+1)
	kv("repl_backlog_histlen", len(r.backlog))
	return b.String()
}

// ---- role changes (server lock held) ----

// setMaster makes this node a replica of host:port.
func (r *replState) setMaster(host string, port int) {
	if r.masterHost == host && r.masterPort == port && r.stopCh != nil {
		return
	}
	r.stopReplica()
	r.s.disconnectBlocked() // clients blocked on a master, now a replica
	wasMaster := !r.isReplica()
	r.masterHost, r.masterPort = host, port
	r.s.cfg.ReplicaOf = host + " " + strconv.Itoa(port)
	r.s.setReplicaMode(true)
	if wasMaster {
		// Our own history becomes the cached master's: a PSYNC can continue
		// from it if the new master's history contains it.
		r.s.Logf('*', "Before turning into a replica, using my own master parameters to synthesize a cached master: I may be able to synchronize with the new master with just a partial transfer.")
	}
	r.closeReplicas()
	r.state = "connect"
	r.gen++
	r.stopCh = make(chan struct{})
	r.s.Logf('*', "Connecting to MASTER %s:%d", host, port)
	go r.replicaLoop(r.gen, host, port, r.stopCh)
}

// becomeMaster stops replicating and keeps the data under a new replid; the
// old one stays valid (replid2) up to the current offset.
func (r *replState) becomeMaster() {
	if !r.isReplica() {
		return
	}
	r.stopReplica()
	r.masterHost, r.masterPort = "", 0
	r.s.cfg.ReplicaOf = ""
	r.s.setReplicaMode(false)
	r.replid2 = r.replid
	r.secondOffset = r.offset + 1
	r.replid = randomHex(40)
	r.state = "connect"
	// As Redis's replicationUnsetMaster: a replica again later is down
	// since ever until it syncs.
	r.downSinceA.Store(0)
	r.gen++
	// Sub-replicas must learn the new replid.
	r.closeReplicas()
	r.s.Logf('*', "MASTER MODE enabled (new replication ID %s, previous %s valid up to offset %d)", r.replid, r.replid2, r.secondOffset-1)
}

func (r *replState) stopReplica() {
	if r.stopCh != nil {
		close(r.stopCh)
		r.stopCh = nil
	}
	if r.linkConn != nil {
		r.linkConn.Close()
		r.linkConn = nil
	}
	if r.linkUp.Load() {
		r.linkUp.Store(false)
		r.downSinceA.Store(time.Now().UnixMilli())
	}
	r.masterCl = nil
}

// ---- replica side ----

func (r *replState) replicaLoop(gen int64, host string, port int, stop chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-r.s.shutdown:
			return
		default:
		}
		err := r.syncWithMaster(gen, host, port, stop)
		r.s.mu.Lock()
		current := r.gen == gen
		if current {
			if r.linkUp.Load() {
				r.linkUp.Store(false)
				r.downSinceA.Store(time.Now().UnixMilli())
			}
			r.state = "connect"
			r.linkConn = nil
		}
		r.s.mu.Unlock()
		if !current {
			return
		}
		if err != nil {
			r.s.Logf('#', "Replication with MASTER %s:%d: %v", host, port, err)
		}
		select {
		case <-stop:
			return
		case <-r.s.shutdown:
			return
		case <-time.After(time.Second):
		}
	}
}

var errStale = errors.New("master changed")

type masterConn struct {
	conn net.Conn
	rd   *bufio.Reader
	wmu  sync.Mutex
}

func (m *masterConn) send(argv ...string) error {
	var b []byte
	b = resp.AppendArray(b, len(argv))
	for _, a := range argv {
		b = resp.AppendBulkString(b, a)
	}
	m.wmu.Lock()
	defer m.wmu.Unlock()
	m.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err := m.conn.Write(b)
	return err
}

func (m *masterConn) line(timeout time.Duration) (string, error) {
	m.conn.SetReadDeadline(time.Now().Add(timeout))
	l, err := m.rd.ReadString('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimRight(l, "\r\n"), nil
}

// nonEmptyLine is line after the empty lines a master sends as keepalives.
func (m *masterConn) nonEmptyLine(timeout time.Duration) (string, error) {
	for {
		l, err := m.line(timeout)
		if err != nil || l != "" {
			return l, err
		}
	}
}

// eofMarkLen is the length of a diskless transfer's end mark
// (CONFIG_RUN_ID_SIZE).
const eofMarkLen = 40

// readSyncPayload reads a full sync's RDB in either of Redis's forms:
// "$<len>\r\n" and len bytes, or, from a diskless master,
// "$EOF:<40-byte mark>\r\n", the file, and the mark again. Nothing follows
// the mark before the replica's first ACK (a diskless master starts the
// stream on it), so the end is found as Redis's readSyncBulkPayload finds
// it: the last bytes read are the mark.
func readSyncPayload(m *masterConn, timeout time.Duration) ([]byte, error) {
	hdr, err := m.nonEmptyLine(timeout)
	if err != nil {
		return nil, err
	}
	switch {
	case strings.HasPrefix(hdr, "-"):
		return nil, errors.New("MASTER aborted replication with an error: " + hdr[1:])
	case !strings.HasPrefix(hdr, "$"):
		return nil, fmt.Errorf("Bad protocol from MASTER, the first byte is not '$' (we received '%s'), are you sure the host and port are right?", hdr)
	case strings.HasPrefix(hdr, "$EOF:") && len(hdr) >= 5+eofMarkLen:
		mark := []byte(hdr[5 : 5+eofMarkLen])
		var data []byte
		buf := make([]byte, 64<<10)
		for {
			m.conn.SetReadDeadline(time.Now().Add(timeout))
			n, err := m.rd.Read(buf)
			data = append(data, buf[:n]...)
			if n > 0 && bytes.HasSuffix(data, mark) {
				return data[:len(data)-eofMarkLen], nil
			}
			if err != nil {
				return nil, err
			}
		}
	}
	n, err := strconv.Atoi(hdr[1:])
	if err != nil || n < 0 {
		return nil, fmt.Errorf("bad full sync payload header %q", hdr)
	}
	data := make([]byte, n)
	for at := 0; at < n; {
		// The deadline is per read, as Redis's repl-timeout counts from
		// the last data received.
		m.conn.SetReadDeadline(time.Now().Add(timeout))
		k, err := m.rd.Read(data[at:])
		at += k
		if err != nil && at < n {
			return nil, err
		}
	}
	return data, nil
}

func (r *replState) syncWithMaster(gen int64, host string, port int, stop chan struct{}) error {
	s := r.s
	timeout := time.Duration(s.cfg.ReplTimeout) * time.Second
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	var conn net.Conn
	var err error
	if d := s.opts.DialMaster; d != nil {
		conn, err = d(addr)
	} else {
		conn, err = net.DialTimeout("tcp", addr, 5*time.Second)
	}
	if err != nil {
		return err
	}
	defer conn.Close()
	s.mu.Lock()
	if r.gen != gen {
		s.mu.Unlock()
		return errStale
	}
	r.linkConn = conn
	r.state = "connecting"
	s.mu.Unlock()
	m := &masterConn{conn: conn, rd: bufio.NewReaderSize(conn, 64<<10)}
	if s.cfg.MasterAuth != "" && s.cfg.MasterUser != "" {
		m.send("AUTH", s.cfg.MasterUser, s.cfg.MasterAuth) // an ACL user (masteruser)
		if l, err := m.line(timeout); err != nil || !strings.HasPrefix(l, "+") {
			return fmt.Errorf("Unable to AUTH to MASTER: %s %v", l, err)
		}
	} else if s.cfg.MasterAuth != "" {
		m.send("AUTH", s.cfg.MasterAuth)
		if l, err := m.line(timeout); err != nil || !strings.HasPrefix(l, "+") {
			return fmt.Errorf("Unable to AUTH to MASTER: %s %v", l, err)
		}
	}
	m.send("PING")
	if l, err := m.line(timeout); err != nil {
		return err
	} else if strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "-NOAUTH") && !strings.HasPrefix(l, "-NOPERM") && !strings.HasPrefix(l, "-ERR operation not permitted") {
		// Redis accepts other errors here too.
	} else if strings.HasPrefix(l, "-NOAUTH") {
		return errors.New("MASTER aborted replication with an error: " + l[1:])
	}
	lport := s.cfg.Port
	if s.cfg.ClusterAnnouncePort != 0 {
		lport = s.cfg.ClusterAnnouncePort
	}
	m.send("REPLCONF", "listening-port", strconv.Itoa(lport))
	if _, err := m.line(timeout); err != nil {
		return err
	}
	if s.cfg.ClusterAnnounceIP != "" {
		m.send("REPLCONF", "ip-address", s.cfg.ClusterAnnounceIP)
		if _, err := m.line(timeout); err != nil {
			return err
		}
	}
	m.send("REPLCONF", "capa", "eof", "capa", "psync2")
	if _, err := m.line(timeout); err != nil {
		return err
	}
	s.mu.Lock()
	id, off := r.replid, r.offset+1
	if planted.On(planted.PsyncWrongOffset) {
		off -= r.plantedLastLen // one command early: it is applied twice
	}
	s.mu.Unlock()
	m.send("PSYNC", id, strconv.FormatInt(off, 10))
	// A master may send empty lines to keep the link alive before its
	// reply, as a diskless redis-server does while it waits for more
	// replicas (repl-diskless-sync-delay).
	l, err := m.nonEmptyLine(timeout)
	if err != nil {
		return err
	}
	switch {
	case strings.HasPrefix(l, "+FULLRESYNC"):
		f := strings.Fields(l)
		if len(f) != 3 {
			return fmt.Errorf("bad FULLRESYNC reply %q", l)
		}
		moff, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return fmt.Errorf("bad FULLRESYNC offset %q", l)
		}
		s.mu.Lock()
		if r.gen == gen {
			r.state = "sync"
			// Redis discards its cached master here: until the new
			// dataset is loaded the replica's offset is 0, which keeps it
			// out of CLUSTER SLOTS and shows it "loading" in CLUSTER SHARDS.
			r.offsetA.Store(0)
		}
		s.mu.Unlock()
		s.Logf('*', "Full resync from master: %s:%d", f[1], moff)
		data, err := s.receiveSync(func() ([]byte, error) { return readSyncPayload(m, timeout) })
		if err != nil {
			return err
		}
		s.mu.Lock()
		if r.gen != gen {
			s.mu.Unlock()
			return errStale
		}
		// As Redis's replicationAttachToNewMaster: sub-replicas cannot
		// continue a history this node drops, they sync again with us.
		r.closeReplicas()
		s.Logf('*', "MASTER <-> REPLICA sync: Flushing old data")
		// As emptyData: keys, blocked clients' keys, tracking, functions.
		s.flushAll()
		s.signalFlushed(-1)
		s.trackFlushAll()
		s.scripts.fns = nil
		s.Logf('*', "MASTER <-> REPLICA sync: Loading DB in memory")
		streamDB, err := r.loadSync(gen, data)
		if err != nil {
			s.mu.Unlock()
			if err == errStale {
				return err
			}
			return fmt.Errorf("Failed trying to load the MASTER synchronization DB: %v", err)
		}
		mc := s.newInternalClient()
		mc.repl.master = true
		mc.db = streamDB
		r.masterCl = mc
		r.replid = f[1]
		r.replid2 = strings.Repeat("0", 40)
		r.secondOffset = -1
		r.offset = moff
		r.offsetA.Store(moff)
		r.backlog = r.backlog[:0]
		if s.aof != nil {
			// As restartAOFAfterSYNC: the AOF is rewritten from the new
			// dataset (the loaded keys never went through propagation).
			if err := s.rewriteAOFFrom(s.snapshotForSync); err != nil {
				s.Logf('#', "Failed enabling the AOF after successful master synchronization: %v", err)
			}
		}
		s.mu.Unlock()
		s.Logf('*', "MASTER <-> REPLICA sync: Finished with success")
		// The first ACK at once, as Redis's replica after a diskless
		// transfer: a diskless redis-server master puts a replica online
		// (starts its stream) only on its first ACK.
		m.send("REPLCONF", "ACK", strconv.FormatInt(moff, 10))
	case strings.HasPrefix(l, "+CONTINUE"):
		f := strings.Fields(l)
		s.mu.Lock()
		if r.gen != gen {
			s.mu.Unlock()
			return errStale
		}
		if len(f) == 2 && f[1] != r.replid {
			r.replid2 = r.replid
			r.secondOffset = r.offset + 1
			r.replid = f[1]
		}
		if r.masterCl == nil {
			mc := s.newInternalClient()
			mc.repl.master = true
			r.masterCl = mc
		}
		s.mu.Unlock()
		s.Logf('*', "Successful partial resynchronization with master.")
	default:
		return fmt.Errorf("unexpected reply to PSYNC: %q", l)
	}
	s.mu.Lock()
	if r.gen != gen {
		s.mu.Unlock()
		return errStale
	}
	r.state = "connected"
	r.lastIOA.Store(time.Now().UnixMilli())
	r.linkUp.Store(true)
	mc := r.masterCl
	s.mu.Unlock()
	s.Logf('*', "MASTER <-> REPLICA sync: Master accepted a Partial/Full Resynchronization, link up")

	// ACK every second.
	ackStop := make(chan struct{})
	defer close(ackStop)
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ackStop:
				return
			case <-t.C:
				m.send("REPLCONF", "ACK", strconv.FormatInt(r.offsetA.Load(), 10))
			}
		}
	}()
	return r.readStream(gen, m, mc, timeout)
}

// applyCommands runs a RESP command stream with the client mc (lock held)
// and returns how many commands it ran.
func applyCommands(s *Server, mc *Client, data []byte) int {
	var p resp.Parser
	p.MaxBulk = 1 << 40
	var args [][]byte
	n := 0
	for len(data) > 0 {
		var m int
		var err error
		args, m, _, err = p.Parse(data, args)
		if err != nil || m == 0 {
			break
		}
		data = data[m:]
		if len(args) == 0 {
			continue
		}
		s.execInternal(mc, args)
		n++
	}
	return n
}

func (r *replState) readStream(gen int64, m *masterConn, mc *Client, timeout time.Duration) error {
	s := r.s
	var p resp.Parser
	p.MaxBulk = 1 << 40
	buf := make([]byte, 64<<10)
	start, end := 0, 0
	var args [][]byte
	for {
		if end == len(buf) {
			if start > 0 {
				copy(buf, buf[start:end])
				end -= start
				start = 0
			} else {
				nb := make([]byte, 2*len(buf))
				copy(nb, buf[:end])
				buf = nb
			}
		}
		m.conn.SetReadDeadline(time.Now().Add(timeout))
		n, err := m.rd.Read(buf[end:])
		if n > 0 {
			end += n
			r.lastIOA.Store(time.Now().UnixMilli())
		}
		if err != nil {
			return err
		}
		getack := false
		s.mu.Lock()
		if r.gen != gen {
			s.mu.Unlock()
			return errStale
		}
		for start < end {
			var used, need int
			args, used, need, err = p.Parse(buf[start:end], args)
			if err != nil {
				s.mu.Unlock()
				return err
			}
			if used == 0 {
				if need > len(buf)-start {
					nb := make([]byte, need+len(buf))
					copy(nb, buf[start:end])
					end -= start
					start = 0
					buf = nb
				}
				break
			}
			raw := buf[start : start+used]
			start += used
			if len(args) >= 2 && strings.EqualFold(string(args[0]), "replconf") && strings.EqualFold(string(args[1]), "getack") {
				getack = true
			} else if isImportAnnouncement(args) {
				s.noteImportAnnouncement(args)
			} else if planted.On(planted.ReplicaReorder) && r.plantedHold(mc, args) {
				// held, or run after the command that followed it
			} else if len(args) > 0 {
				s.execInternal(mc, args)
				if s.cl.node != nil {
					s.noteForeignWrite(args)
				}
			}
			r.feed(raw)
		}
		if planted.On(planted.ReplicaReorder) {
			r.plantedRelease(mc)
		}
		s.mu.Unlock()
		if start == end {
			start, end = 0, 0
		}
		if getack {
			m.send("REPLCONF", "ACK", strconv.FormatInt(r.offsetA.Load(), 10))
		}
	}
}
