package server

// The replication commands: REPLCONF, PSYNC/SYNC, WAIT, ROLE, REPLICAOF.

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

func cmdReplconf(c *Client, argv [][]byte) {
	r := c.s.repl
	if (len(argv)-1)%2 != 0 {
		c.Error(ErrSyntax)
		return
	}
	ce := &c.repl
	for i := 1; i+1 < len(argv); i += 2 {
		opt := strings.ToLower(string(argv[i]))
		val := string(argv[i+1])
		switch opt {
		case "listening-port":
			p, err := strconv.Atoi(val)
			if err != nil {
				c.Error(ErrNotInt)
				return
			}
			ce.listenPort = p
		case "ip-address":
			ce.listenIP = val
		case "capa", "rdb-only", "rdb-filter-only":
		case "ack", "fack":
			if ce.replica != nil {
				if off, err := strconv.ParseInt(val, 10, 64); err == nil && off > ce.replica.ackOff {
					ce.replica.ackOff = off
				}
				ce.replica.ackTime = time.Now()
				r.notifyAck()
			}
			return // no reply
		case "getack":
			if c.conn == nil && r.isReplica() {
				return // handled by the stream reader
			}
		default:
			c.Error("ERR Unrecognized REPLCONF option: " + cstr(argv[i]))
			return
		}
	}
	c.OK()
}

func cmdPsync(c *Client, argv [][]byte) {
	r := c.s.repl
	s := r.s
	if c.conn == nil {
		c.Error("ERR PSYNC from an internal client")
		return
	}
	ce := &c.repl
	if ce.replica != nil {
		return // already a replica: ignore
	}
	if r.isReplica() && r.state != "connected" {
		c.Error("NOMASTERLINK Can't SYNC while not connected with my master")
		return
	}
	host, _, _ := net.SplitHostPort(c.addr)
	if ce.listenIP != "" {
		host = ce.listenIP
	}
	r.backlogActive = true
	rl := &replicaLink{r: r, c: c, conn: c.conn, ip: host, port: ce.listenPort,
		notify: make(chan struct{}, 1), done: make(chan struct{}), ackTime: time.Now()}
	rl.raw = loopWritable(c.conn)
	var head []byte
	partial := false
	if len(argv) == 3 {
		id := string(argv[1])
		off, err := strconv.ParseInt(string(argv[2]), 10, 64)
		first := r.offset - int64(len(r.backlog)) + 1
		if err == nil && (id == r.replid || (id == r.replid2 && off <= r.secondOffset)) && off >= first && off <= r.offset+1 {
			partial = true
			head = fmt.Appendf(nil, "+CONTINUE %s\r\n", r.replid)
			head = append(head, r.backlog[off-first:]...)
			s.Logf('*', "Partial resynchronization request from %s:%d accepted. Sending %d bytes of backlog starting from offset %d.", host, rl.port, r.offset+1-off, off)
			rl.ackOff = off - 1
		}
	}
	if !partial {
		// As Redis, the dataset goes as an RDB: "$<len>\r\n" and the file,
		// with no CRLF after it (the stream's first byte follows the last
		// byte of the file), so a redis-server replica can sync from us.
		// rdb-key-save-delay paces the transfer per key, as Redis's
		// rdbSaveKeyValuePair delays its diskless child (persist.go).
		delay := time.Duration(s.cfgInt("rdb-key-save-delay")) * time.Microsecond
		snap, ends := s.encodeRDB(delay > 0)
		// The stream after the file starts with a SELECT, as Redis sets
		// slaveseldb to -1 for a new replica (the file's repl-stream-db
		// already told it which database the stream was in).
		s.prop.started = false
		if len(argv) != 1 {
			// PSYNC; SYNC (the pre-PSYNC protocol, which Redis's test
			// suite uses to watch the stream) gets the payload alone.
			head = fmt.Appendf(nil, "+FULLRESYNC %s %d\r\n", r.replid, r.offset)
		}
		head = fmt.Appendf(head, "$%d\r\n", len(snap))
		shift := len(head)
		head = append(head, snap...)
		s.Logf('*', "Full resync requested by replica %s:%d; sending an RDB of %d bytes at offset %d", host, rl.port, len(snap), r.offset)
		if delay > 0 && len(ends) > 0 {
			for i := range ends {
				ends[i] += shift
			}
			rl.paced = &pacedSync{data: head, ends: ends, delay: delay}
			head = nil
		}
	}
	rl.buf = head
	if len(r.replicas) == 0 {
		// Redis pings replicas every repl-ping-replica-period from its
		// cron, not as soon as one attaches.
		r.lastPing = time.Now()
	}
	ce.replica = rl
	r.replicas = append(r.replicas, rl)
	rl.notify <- struct{}{}
	go rl.writeLoop()
}

func cmdWait(c *Client, argv [][]byte) {
	r := c.s.repl
	s := r.s
	want, t, ok := waitArgs(c, argv)
	if !ok {
		return
	}
	if r.isReplica() {
		c.Error("ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.")
		return
	}
	target := c.repl.woff
	n := r.countAcked(target)
	if int64(n) >= want || c.multi || s.prop.depth > 0 || c.inScript || c.conn == nil {
		c.Int(int64(n))
		return
	}
	// Ask the replicas for an ACK now instead of waiting for the next second.
	r.requestAck()
	var deadline <-chan time.Time
	if t > 0 {
		tm := time.NewTimer(time.Duration(t) * time.Millisecond)
		defer tm.Stop()
		deadline = tm.C
	}
	for {
		ch := r.ackCh
		s.mu.Unlock()
		timedOut := false
		select {
		case <-ch:
		case <-deadline:
			timedOut = true
		case <-s.shutdown:
			timedOut = true
		}
		s.mu.Lock()
		n = r.countAcked(target)
		if int64(n) >= want || timedOut || c.killed.Load() {
			break
		}
	}
	c.Int(int64(n))
}

func cmdRole(c *Client, argv [][]byte) {
	r := c.s.repl
	if r.isReplica() {
		c.Array(5)
		c.BulkString("slave")
		c.BulkString(r.masterHost)
		c.Int(int64(r.masterPort))
		c.BulkString(r.state)
		if r.state == "connected" {
			c.Int(r.offset)
		} else {
			c.Int(-1)
		}
		return
	}
	c.Array(3)
	c.BulkString("master")
	c.Int(r.offset)
	c.Array(len(r.replicas))
	for _, rl := range r.replicas {
		c.Array(3)
		c.BulkString(rl.ip)
		c.BulkString(strconv.Itoa(rl.port))
		c.BulkString(strconv.FormatInt(rl.ackOff, 10))
	}
}

func cmdReplicaof(c *Client, argv [][]byte) {
	r := c.s.repl
	if r.s.cfg.ClusterEnabled {
		c.Error("ERR REPLICAOF not allowed in cluster mode.")
		return
	}
	if strings.EqualFold(string(argv[1]), "no") && strings.EqualFold(string(argv[2]), "one") {
		r.becomeMaster()
		c.OK()
		return
	}
	port, err := strconv.Atoi(string(argv[2]))
	if err != nil || port < 0 || port > 65535 {
		c.Error("ERR Invalid master port")
		return
	}
	if r.isReplica() && r.masterHost == string(argv[1]) && r.masterPort == port {
		c.Simple("OK Already connected to specified master")
		return
	}
	r.setMaster(string(argv[1]), port)
	c.OK()
}

// replCommands are the replication commands' specs.
func replCommands() []*Command {
	const admin = FlagAdmin | FlagNoScript | FlagNoMulti | FlagNoAsyncLoading
	return []*Command{
		newCmd("psync", -3, admin, 0, 0, 0, cmdPsync, "server"),
		newCmd("sync", 1, admin, 0, 0, 0, cmdPsync, "server"),
		newCmd("replconf", -1, FlagAdmin|FlagNoScript|FlagLoading|FlagStale|FlagAllowBusy, 0, 0, 0, cmdReplconf, "server"),
		newCmd("wait", 3, FlagNoScript, 0, 0, 0, cmdWait, "generic"),
		newCmd("role", 1, FlagNoScript|FlagLoading|FlagStale|FlagFast, 0, 0, 0, cmdRole, "server"),
		newCmd("replicaof", 3, FlagAdmin|FlagNoScript|FlagStale|FlagNoAsyncLoading, 0, 0, 0, cmdReplicaof, "server"),
		newCmd("slaveof", 3, FlagAdmin|FlagNoScript|FlagStale|FlagNoAsyncLoading, 0, 0, 0, cmdReplicaof, "server"),
	}
}
