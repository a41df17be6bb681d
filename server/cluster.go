package server

// Cluster mode: the owner of the cluster node, routing, and the CLUSTER,
// ASKING, READONLY and READWRITE commands. How it is wired into the engine
// is described once, in doc.go ("Cluster mode and replication").

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redline-dev/redline/server/cluster"
	"github.com/redline-dev/redline/server/cluster/bus"
	"github.com/redline-dev/redline/server/config"
	"github.com/redline-dev/redline/server/internal/planted"
	"github.com/redline-dev/redline/server/keyslot"
)

// flushClusterOutputs runs (server lock held) after a connection's batch of commands,
// before the replies are written: it performs the cluster outputs of the
// batch's CLUSTER commands once, so a pipeline of CLUSTER SETSLOT writes
// and fsyncs nodes.conf once, as Redis does in beforeSleep.
func (s *Server) flushClusterOutputs() {
	if s.cl.pending {
		s.cl.pending = false
		s.nodeReady()
	}
}

// startNode starts cluster mode (cluster-enabled yes: the bus on
// port+10000, nodes.conf) or the link to a configured master (replicaof),
// after Listen and before the connections are served.
func (s *Server) startNode() error {
	if s.cfg.ClusterEnabled {
		if err := s.startCluster(); err != nil {
			return err
		}
		s.trimUnownedOnLoad()
	} else if s.cfg.ReplicaOf != "" {
		f := strings.Fields(s.cfg.ReplicaOf)
		if len(f) == 2 {
			port, _ := strconv.Atoi(f[1])
			s.mu.Lock()
			s.repl.setMaster(f[0], port)
			s.mu.Unlock()
		}
	}
	return nil
}

// stopNode stops the cluster node's and replication's goroutines and links.
func (s *Server) stopNode() {
	select {
	case <-s.clusterDone:
		return
	default:
	}
	close(s.clusterDone)
	if s.cl.bus != nil {
		s.cl.bus.Close()
	}
	s.mu.Lock()
	s.repl.stopReplica()
	s.repl.closeReplicas()
	s.mu.Unlock()
	s.mig.closeAll()
	s.clusterWG.Wait()
}

// clusterConfig is the node's configuration from the server's (at start,
// and again when CONFIG SET changes a cluster-* directive).
func clusterConfig(cfg *config.Config) cluster.Config {
	ccfg := cluster.Config{
		NodeTimeout:           time.Duration(cfg.ClusterNodeTimeout) * time.Millisecond,
		NoFullCoverage:        !cfg.ClusterRequireFullCoverage,
		AllowReadsWhenDown:    cfg.ClusterAllowReadsWhenDown,
		MigrationBarrier:      cfg.ClusterMigrationBarrier,
		NoReplicaMigration:    !cfg.ClusterAllowReplicaMigration,
		ReplicaValidityFactor: cfg.ClusterReplicaValidityFactor,
		ReplPingPeriod:        time.Duration(cfg.ReplPingReplicaPeriod) * time.Second,
		ReplicaNoFailover:     cfg.ClusterReplicaNoFailover,
		AnnounceIP:            cfg.ClusterAnnounceIP,
		Hostname:              cfg.ClusterAnnounceHostname,
		PreferredEndpoint:     cfg.ClusterPreferredEndpointType,
	}
	if ccfg.MigrationBarrier == 0 {
		ccfg.MigrationBarrier = -1
	}
	if ccfg.ReplicaValidityFactor == 0 {
		ccfg.ReplicaValidityFactor = -1
	}
	return ccfg
}

func (s *Server) startCluster() error {
	cfg := s.cfg
	port := cfg.Port
	cport := cfg.ClusterPort
	if cport == 0 {
		cport = port + 10000
	}
	self := cluster.Self{IP: cfg.ClusterAnnounceIP, Port: port, CPort: cport}
	if cfg.ClusterAnnouncePort != 0 {
		self.Port = cfg.ClusterAnnouncePort
	}
	if cfg.ClusterAnnounceBusPort != 0 {
		self.CPort = cfg.ClusterAnnounceBusPort
	}
	ccfg := clusterConfig(cfg)
	path := cfg.ClusterConfigFile
	if !filepath.IsAbs(path) && cfg.Dir != "" {
		path = filepath.Join(cfg.Dir, path)
	}
	var n *cluster.Node
	if data, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(data))) > 0 {
		n, err = cluster.LoadNode(ccfg, string(data), self, time.Now())
		if err != nil {
			return fmt.Errorf("Unrecoverable error: corrupted cluster config file \"%s\": %v", path, err)
		}
		s.Logf('*', "Node configuration loaded, I'm %.40s", n.ID())
	} else {
		n = cluster.NewNode(ccfg, self, time.Now())
		s.Logf('*', "No cluster configuration found, I'm %.40s", n.ID())
	}
	host := "0.0.0.0"
	if len(cfg.Bind) > 0 {
		h := strings.TrimPrefix(cfg.Bind[0], "-")
		if h != "*" {
			host = h
		}
	}
	s.cl.confPath = path
	if len(n.NodesConf()) > 0 {
		// Write it now (a fresh node), as Redis does at start.
		if err := bus.SaveNodesConf(path, n.NodesConf(), true); err != nil {
			return fmt.Errorf("Unable to save the cluster config file %s: %v", path, err)
		}
	}
	s.cl.node, s.cl.view = n, n.View()
	s.cl.bus = bus.New(bus.Options{ListenAddr: net.JoinHostPort(host, strconv.Itoa(cport)), Transport: s.opts.ClusterTransport})
	if err := s.cl.bus.Start(); err != nil {
		return err
	}
	s.applyBusConfig()
	s.mu.Lock()
	s.nodeReady() // the initial Ready
	s.mu.Unlock()
	s.clusterWG.Add(1)
	go s.runCluster()
	return nil
}

// runCluster is the node's clock and mailbox: it feeds what the bus
// receives to Step and a 100 ms ticker to Tick (clusterCron), each with the
// server lock held and followed by the handling of the Ready.
func (s *Server) runCluster() {
	defer s.clusterWG.Done()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-s.clusterDone:
			return
		case in := <-s.cl.bus.Inputs():
			s.mu.Lock()
			switch {
			case in.Msg != nil:
				s.cl.node.Step(*in.Msg, time.Now())
			case in.InClosed != 0:
				s.cl.node.InboundClosed(in.InClosed)
			default:
				s.cl.node.LinkFailed(in.LinkFailed)
			}
			if in.OverLimit {
				s.cl.node.LinkBufferLimitExceeded()
			}
			s.nodeReady()
			s.mu.Unlock()
		case <-t.C:
			s.mu.Lock()
			s.feedReplication()
			s.cl.node.Tick(time.Now())
			s.nodeReady()
			s.mu.Unlock()
		}
	}
}

// ready performs the node's outputs (server lock held): nodes.conf first (a
// vote goes out only once lastVoteEpoch is on disk), then the messages, then
// the events, which may produce outputs of their own (WritesPaused), so it
// repeats until the node has nothing more to say. No event waits in a queue
// and none is dropped.
func (s *Server) nodeReady() {
	for {
		r := s.cl.node.Ready()
		if r.Empty() {
			return
		}
		if r.SaveConfig && s.cl.confPath != "" {
			if err := bus.SaveNodesConf(s.cl.confPath, r.NodesConf, r.Fsync); err != nil {
				s.Logf('#', "Could not save the cluster config file %s: %v", s.cl.confPath, err)
			}
		}
		if r.View != nil {
			s.cl.view = r.View
			s.dropUnservedShardChannels(r.View)
		}
		for _, l := range r.Logs {
			s.Logf('*', "%s", l)
		}
		s.cl.bus.Send(&r)
		for _, ev := range r.Events {
			s.applyEvent(ev)
		}
	}
}

// feedReplication gives the node the replication inputs it needs before a
// Tick (the offset for elections and manual failover, the master link for
// a replica's data age). The replica link goroutine updates them without
// the server lock, hence the atomics.
func (s *Server) feedReplication() {
	r, n := s.repl, s.cl.node
	n.SetReplOffset(r.offsetA.Load())
	if !n.IsMaster() {
		if r.linkUp.Load() {
			n.SetMasterLinkStatus(true, time.UnixMilli(r.lastIOA.Load()))
		} else {
			n.SetMasterLinkStatus(false, linkDownSince(r.downSinceA.Load()))
		}
	}
}

// linkDownSince is the replica link's down time as the cluster node takes
// it: 0 (never synced since start or since it was a master, Redis's
// repl_down_since 0) is the zero time, "since ever".
func linkDownSince(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// applyEvent does what a node event asks of the keyspace and replication
// (server lock held).
func (s *Server) applyEvent(ev cluster.Event) {
	switch ev.Kind {
	case cluster.EventReplicate:
		s.repl.setMaster(ev.IP, ev.Port)
	case cluster.EventBecomeMaster:
		s.repl.becomeMaster()
		s.trimForeign()
	case cluster.EventPauseWrites:
		// The master side of a manual failover: pause writes like CLIENT
		// PAUSE WRITE, then tell the node the offset the replica must reach.
		if planted.On(planted.FailoverNoPause) {
			s.cl.node.WritesPaused(s.repl.offset) // ...and keeps taking writes
			break
		}
		if s.pauseEnd.IsZero() || s.pauseEnd.Before(ev.Until) {
			s.pauseEnd = ev.Until
		}
		s.pauseAll = false
		// Keys are neither expired nor evicted during the pause (Redis
		// pauses with PAUSE_DURING_FAILOVER, which activeExpireCycle,
		// expireIfNeeded and performEvictions honour): a DEL would move
		// the offset past the one the replica is told to reach.
		s.expirePaused = true
		s.applyExpireMode()
		s.cl.node.WritesPaused(s.repl.offset)
	case cluster.EventUnpauseWrites:
		if !s.pauseEnd.IsZero() {
			s.unpause()
		}
	case cluster.EventPublish:
		s.publishLocal(ev.Channel, ev.Payload, ev.Shard)
	case cluster.EventDeleteSlots:
		n := 0
		for _, slot := range ev.Slots {
			n += s.deleteKeysInSlot(slot)
		}
		if n > 0 {
			s.Logf('*', "Deleted %d keys from slots this node no longer serves", n)
		}
	}
}

// clusterReplCron is the cron of cluster mode, replication and maxmemory
// (every 100 ms, server lock held).
func (s *Server) clusterReplCron() {
	s.redirectBlocked()
	s.mig.closeIdle()
	s.evictionCron()
	s.trackingLimitKeys()
	s.repl.cron()
	s.asmTick()
}

// propagatedToReplicas feeds replication and the atomic slot migrations' streams.
func (s *Server) propagatedToReplicas(db int, argv [][]byte) {
	s.asmPropagated(argv)
	s.repl.propagated(db, argv)
}

// replClientClosed drops the replica link of a closed connection.
func (s *Server) replClientClosed(c *Client) {
	if c.repl.replica != nil {
		s.repl.dropReplica(c.repl.replica)
	}
}

// ---- routing ----

// refusal is the error a command gets instead of running, from the node's
// state: loading a full sync, over maxmemory, another node's slot, a
// read-only replica, a paused slot migration; "" lets it run. It runs
// before every command, also while queueing inside MULTI and for each
// redis.call; a refusal inside MULTI makes EXEC fail with EXECABORT.
func (s *Server) refusal(c *Client, cmd *Command, argv [][]byte) string {
	if c.repl.master {
		return s.aofRefusal(c, cmd, argv) // else our master's stream is applied as is
	}
	if s.replLoading {
		if msg := loadingRefusal(cmd, argv); msg != "" {
			return msg
		}
	}
	if s.oom.max > 0 {
		if msg := s.oomRefusal(c, cmd, argv); msg != "" {
			return msg
		}
	}
	if s.trk != nil {
		s.trackingLimitKeys()
	}
	if s.cl.bus != nil {
		if msg := s.route(c, cmd, argv); msg != "" {
			return msg
		}
	}
	// The disk's refusals come after the redirections (a key of another
	// node gets MOVED, not MISCONF), the RDB's first, as Redis's
	// writeCommandsDeniedByDiskError.
	if msg := s.persistRefusal(cmd); msg != "" {
		return msg
	}
	if msg := s.aofRefusal(c, cmd, argv); msg != "" {
		return msg
	}
	if msg := s.repl.checkWrite(c, cmd, argv); msg != "" {
		return msg
	}
	if msg := s.asmPaused(cmd, argv); msg != "" {
		return msg
	}
	s.slotStatsBegin(c, cmd, argv)
	return ""
}

// afterCommand runs after every command a client sent (executed, queued
// or refused): it clears a one-shot ASKING and notes the offset for WAIT.
func (s *Server) afterCommand(c *Client, cmd *Command) {
	s.slotStatsEnd(c)
	if c.Asking && !c.multi && cmd.Name != "asking" {
		c.Asking = false
	}
	if c.conn != nil {
		c.repl.woff = s.repl.offset
	}
}

// appendKeys adds the keys of argv (distinct, in order) to s.cl.keys.
func (s *Server) appendKeys(cmd *Command, argv [][]byte) {
	add := func(k []byte) {
		for _, o := range s.cl.keys {
			if string(o) == string(k) {
				return
			}
		}
		s.cl.keys = append(s.cl.keys, k)
	}
	if cmd.Keys != nil {
		for _, i := range cmd.Keys(argv) {
			if i < len(argv) {
				add(argv[i])
			}
		}
		return
	}
	first, last, step := cmd.keyRange(len(argv))
	for i := first; i <= last; i += step {
		add(argv[i])
	}
}

func (s *Server) route(c *Client, cmd *Command, argv [][]byte) string {
	s.cl.keys = s.cl.keys[:0]
	write := cmd.effectiveFlags(argv)&FlagWrite != 0
	if cmd.Name == "eval" && len(argv) > 1 && len(argv[1]) > 1 && argv[1][0] == '#' && argv[1][1] == '!' {
		// A shebang script that may write is a write (Redis's
		// evalGetCommandFlags): a replica redirects it.
		if _, flags, _, err := scriptShebang(string(argv[1])); err == nil && flags&fnNoWrites == 0 {
			write = true
		}
	}
	isMigrate := cmd.Name == "migrate"
	if cmd.Name == "exec" {
		if !c.multi {
			return ""
		}
		for _, q := range c.queue {
			qc := s.Lookup(q[0])
			if qc == nil {
				continue
			}
			if qc.Flags&FlagWrite != 0 {
				write = true
			}
			s.appendKeys(qc, q)
		}
	} else {
		if cmd.FirstKey <= 0 && cmd.Keys == nil {
			return ""
		}
		s.appendKeys(cmd, argv)
	}
	if len(s.cl.keys) == 0 {
		return ""
	}
	s.cl.slots = s.cl.slots[:0]
	for _, k := range s.cl.keys {
		s.cl.slots = append(s.cl.slots, keyslot.Of(k))
	}
	// Shard Pub/Sub is served by the slot's replicas too, as in Redis.
	asking, readOnly := c.Asking || cmd.Flags&FlagAsking != 0, c.ReadOnly || cmd.Flags&FlagPubSub != 0
	if c.inScript && s.scripts != nil && s.scripts.caller != nil {
		// redis.call runs with the flags of the client that ran the script.
		orig := s.scripts.caller
		if orig.repl.master {
			return ""
		}
		asking, readOnly = orig.Asking, orig.ReadOnly
	}
	s.flushClusterOutputs() // a CLUSTER command earlier in the batch: route on its View
	view := s.cl.view
	req := cluster.Request{Slots: s.cl.slots, Write: write, Asking: asking, ReadOnly: readOnly, Migrate: isMigrate}
	if (len(view.Migrating) > 0 || len(view.Importing) > 0) && cmd.Flags&FlagPubSub == 0 {
		// (A shard channel is not a key: Redis serves SSUBSCRIBE and
		// SPUBLISH where the slot's owner is, without ASK.)
		db := s.dbs[0]
		req.KeyExists = func(i int) bool { return db.Get(s.cl.keys[i]) != nil }
	}
	d := view.Route(req)
	if d.Verdict == cluster.Serve {
		return ""
	}
	if c.inScript {
		switch d.Verdict {
		case cluster.CrossSlot:
			return "ERR Script attempted to access keys that do not hash to the same slot"
		case cluster.Down:
			return "ERR Script attempted to execute a command while the cluster is down"
		case cluster.DownReadOnly:
			return "ERR Script attempted to execute a write command while the cluster is down and readonly"
		}
		return "ERR Script attempted to access a non local key in a cluster node"
	}
	return d.Error()
}
