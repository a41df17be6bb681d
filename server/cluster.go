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
	"sync"
	"time"

	"github.com/redline-dev/redline/server/cluster"
	"github.com/redline-dev/redline/server/cluster/bus"
	"github.com/redline-dev/redline/server/config"
	"github.com/redline-dev/redline/server/keyslot"
)

// ext is the state of cluster mode and replication: the cluster node with
// its bus (nil without cluster-enabled) and the replication state.
type ext struct {
	s    *Server
	repl *replState
	oom  oomState // maxmemory (evict.go)
	// foreign are slots owned by others that the master's stream wrote
	// (an import under way there), trimmed on promotion (cluster_migration_hide.go).
	foreign map[int]bool

	// The cluster node and everything about it belong to the server lock
	// (s.mu): Step, Tick, CLUSTER commands and the handling of each Ready
	// all run with it held, as Redis runs the bus handlers and clusterCron
	// on its one thread. The bus only moves bytes.
	node     *cluster.Node
	bus      *bus.Bus
	view     *cluster.SlotView // routing snapshot of the last Ready
	confPath string
	pending  bool // a CLUSTER command ran; its outputs wait for the batch's end

	done chan struct{}
	wg   sync.WaitGroup

	// scratch for routing (server lock held)
	slots []int
	keys  [][]byte

	mig migrateConns

	slotStats *slotCounters // CLUSTER SLOT-STATS counters (cluster_slotstats.go)
	asm       *asmRuntime   // CLUSTER MIGRATION tasks (cluster_migration.go)
}

// afterBatch runs (server lock held) after a connection's batch of commands,
// before the replies are written: it performs the cluster outputs of the
// batch's CLUSTER commands once, so a pipeline of CLUSTER SETSLOT writes
// and fsyncs nodes.conf once, as Redis does in beforeSleep.
func (e *ext) afterBatch() {
	if e.pending {
		e.pending = false
		e.ready()
	}
}

// clientExt is the per-connection state of cluster mode and replication.
type clientExt struct {
	woff       int64 // master offset after the client's last command (WAIT)
	replica    *replicaLink
	master     bool   // the connection applying our master's stream
	listenPort int    // REPLCONF listening-port
	listenIP   string // REPLCONF ip-address
}

func cext(c *Client) *clientExt {
	if ce, ok := c.Data.(*clientExt); ok {
		return ce
	}
	ce := &clientExt{}
	c.Data = ce
	return ce
}

// StartNode listens, starts cluster mode (cluster-enabled yes: the bus on
// port+10000, nodes.conf) and replication (replicaof), and serves in the
// background. Close stops everything.
func (s *Server) StartNode() error {
	if err := s.Listen(); err != nil {
		return err
	}
	if err := s.startExt(); err != nil {
		s.closeListeners()
		return err
	}
	s.serveBackground()
	return nil
}

// startExt starts cluster mode and replication as configured: it installs
// the Hooks, registers their commands, and starts the cluster node or the
// link to a configured master.
func (s *Server) startExt() error {
	e := &ext{s: s, done: make(chan struct{})}
	e.repl = newReplState(e)
	e.setMaxmemory()
	s.ext = e
	e.registerCommands()
	s.SetHooks(Hooks{
		PreExecute:   e.preExecute,
		PostExecute:  e.postExecute,
		Propagated:   e.propagated,
		InfoSection:  e.infoSection,
		Cron:         e.cron,
		ClientClosed: e.clientClosed,
	})
	if s.cfg.ClusterEnabled {
		if err := e.startCluster(); err != nil {
			return err
		}
		e.trimUnownedOnLoad()
	} else if s.cfg.ReplicaOf != "" {
		f := strings.Fields(s.cfg.ReplicaOf)
		if len(f) == 2 {
			port, _ := strconv.Atoi(f[1])
			s.mu.Lock()
			e.repl.setMaster(f[0], port)
			s.mu.Unlock()
		}
	}
	return nil
}

func (s *Server) stopExt() {
	e := s.ext
	if e == nil {
		return
	}
	select {
	case <-e.done:
		return
	default:
	}
	close(e.done)
	if e.bus != nil {
		e.bus.Close()
	}
	s.mu.Lock()
	e.repl.stopReplica()
	e.repl.closeReplicas()
	s.mu.Unlock()
	e.mig.closeAll()
	e.wg.Wait()
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

func (e *ext) startCluster() error {
	cfg := e.s.cfg
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
		e.s.Logf('*', "Node configuration loaded, I'm %.40s", n.ID())
	} else {
		n = cluster.NewNode(ccfg, self, time.Now())
		e.s.Logf('*', "No cluster configuration found, I'm %.40s", n.ID())
	}
	host := "0.0.0.0"
	if len(cfg.Bind) > 0 {
		h := strings.TrimPrefix(cfg.Bind[0], "-")
		if h != "*" {
			host = h
		}
	}
	e.confPath = path
	if len(n.NodesConf()) > 0 {
		// Write it now (a fresh node), as Redis does at start.
		if err := bus.SaveNodesConf(path, n.NodesConf(), true); err != nil {
			return fmt.Errorf("Unable to save the cluster config file %s: %v", path, err)
		}
	}
	e.node, e.view = n, n.View()
	e.bus = bus.New(bus.Options{ListenAddr: net.JoinHostPort(host, strconv.Itoa(cport)), Transport: e.s.opts.ClusterTransport})
	if err := e.bus.Start(); err != nil {
		return err
	}
	e.applyBusConfig()
	e.s.mu.Lock()
	e.ready() // the initial Ready
	e.s.mu.Unlock()
	e.wg.Add(1)
	go e.runCluster()
	return nil
}

// runCluster is the node's clock and mailbox: it feeds what the bus
// receives to Step and a 100 ms ticker to Tick (clusterCron), each with the
// server lock held and followed by the handling of the Ready.
func (e *ext) runCluster() {
	defer e.wg.Done()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	s := e.s
	for {
		select {
		case <-e.done:
			return
		case in := <-e.bus.Inputs():
			s.mu.Lock()
			switch {
			case in.Msg != nil:
				e.node.Step(*in.Msg, time.Now())
			case in.InClosed != 0:
				e.node.InboundClosed(in.InClosed)
			default:
				e.node.LinkFailed(in.LinkFailed)
			}
			if in.OverLimit {
				e.node.LinkBufferLimitExceeded()
			}
			e.ready()
			s.mu.Unlock()
		case <-t.C:
			s.mu.Lock()
			e.feedReplication()
			e.node.Tick(time.Now())
			e.ready()
			s.mu.Unlock()
		}
	}
}

// ready performs the node's outputs (server lock held): nodes.conf first (a
// vote goes out only once lastVoteEpoch is on disk), then the messages, then
// the events, which may produce outputs of their own (WritesPaused), so it
// repeats until the node has nothing more to say. No event waits in a queue
// and none is dropped.
func (e *ext) ready() {
	for {
		r := e.node.Ready()
		if r.Empty() {
			return
		}
		if r.SaveConfig && e.confPath != "" {
			if err := bus.SaveNodesConf(e.confPath, r.NodesConf, r.Fsync); err != nil {
				e.s.Logf('#', "Could not save the cluster config file %s: %v", e.confPath, err)
			}
		}
		if r.View != nil {
			e.view = r.View
			e.s.dropUnservedShardChannels(r.View)
		}
		for _, l := range r.Logs {
			e.s.Logf('*', "%s", l)
		}
		e.bus.Send(&r)
		for _, ev := range r.Events {
			e.applyEvent(ev)
		}
	}
}

// feedReplication gives the node the replication inputs it needs before a
// Tick (the offset for elections and manual failover, the master link for
// a replica's data age). The replica link goroutine updates them without
// the server lock, hence the atomics.
func (e *ext) feedReplication() {
	r, n := e.repl, e.node
	n.SetReplOffset(r.offsetA.Load())
	if !n.IsMaster() {
		if r.linkUp.Load() {
			n.SetMasterLinkStatus(true, time.UnixMilli(r.lastIOA.Load()))
		} else {
			n.SetMasterLinkStatus(false, time.UnixMilli(r.downSinceA.Load()))
		}
	}
}

// applyEvent does what a node event asks of the keyspace and replication
// (server lock held).
func (e *ext) applyEvent(ev cluster.Event) {
	s := e.s
	switch ev.Kind {
	case cluster.EventReplicate:
		e.repl.setMaster(ev.IP, ev.Port)
	case cluster.EventBecomeMaster:
		e.repl.becomeMaster()
		e.trimForeign()
	case cluster.EventPauseWrites:
		// The master side of a manual failover: pause writes like CLIENT
		// PAUSE WRITE, then tell the node the offset the replica must reach.
		if s.pauseEnd.IsZero() || s.pauseEnd.Before(ev.Until) {
			s.pauseEnd = ev.Until
		}
		s.pauseAll = false
		e.node.WritesPaused(e.repl.offset)
	case cluster.EventUnpauseWrites:
		if !s.pauseEnd.IsZero() {
			s.unpause()
		}
	case cluster.EventPublish:
		s.publishLocal(ev.Channel, ev.Payload, ev.Shard)
	case cluster.EventDeleteSlots:
		n := 0
		for _, slot := range ev.Slots {
			n += s.DeleteKeysInSlot(slot)
		}
		if n > 0 {
			s.Logf('*', "Deleted %d keys from slots this node no longer serves", n)
		}
	}
}

func (e *ext) cron() {
	e.s.redirectBlocked()
	e.mig.closeIdle()
	e.refreshUsedMemory()
	e.repl.cron()
	e.asmTick()
}

// propagated feeds replication and the atomic slot migrations' streams.
func (e *ext) propagated(db int, argv [][]byte) {
	e.asmPropagated(argv)
	e.repl.propagated(db, argv)
}

func (e *ext) clientClosed(c *Client) {
	if ce, ok := c.Data.(*clientExt); ok && ce.replica != nil {
		e.repl.dropReplica(ce.replica)
	}
}

// ---- routing ----

func (e *ext) preExecute(c *Client, cmd *Command, argv [][]byte) string {
	ce, _ := c.Data.(*clientExt)
	if ce != nil && ce.master {
		return "" // our master's stream is applied as is
	}
	if e.s.replLoading {
		if msg := loadingRefusal(cmd, argv); msg != "" {
			return msg
		}
	}
	if e.oom.max > 0 {
		if msg := e.oomRefusal(c, cmd, argv); msg != "" {
			return msg
		}
	}
	if e.bus != nil {
		if msg := e.route(c, cmd, argv); msg != "" {
			return msg
		}
	}
	if msg := e.repl.checkWrite(c, cmd, argv); msg != "" {
		return msg
	}
	if msg := e.asmPaused(cmd, argv); msg != "" {
		return msg
	}
	e.slotStatsBegin(c, cmd, argv)
	return ""
}

func (e *ext) postExecute(c *Client, cmd *Command) {
	e.slotStatsEnd(c)
	if c.Asking && !c.multi && cmd.Name != "asking" {
		c.Asking = false
	}
	if c.conn != nil {
		ce := cext(c)
		ce.woff = e.repl.offset
	}
}

// appendKeys adds the keys of argv (distinct, in order) to e.keys.
func (e *ext) appendKeys(cmd *Command, argv [][]byte) {
	add := func(k []byte) {
		for _, o := range e.keys {
			if string(o) == string(k) {
				return
			}
		}
		e.keys = append(e.keys, k)
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

func (e *ext) route(c *Client, cmd *Command, argv [][]byte) string {
	s := e.s
	e.keys = e.keys[:0]
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
			e.appendKeys(qc, q)
		}
	} else {
		if cmd.FirstKey <= 0 && cmd.Keys == nil {
			return ""
		}
		e.appendKeys(cmd, argv)
	}
	if len(e.keys) == 0 {
		return ""
	}
	e.slots = e.slots[:0]
	for _, k := range e.keys {
		e.slots = append(e.slots, keyslot.Of(k))
	}
	// Shard Pub/Sub is served by the slot's replicas too, as in Redis.
	asking, readOnly := c.Asking || cmd.Flags&FlagAsking != 0, c.ReadOnly || cmd.Flags&FlagPubSub != 0
	if c.inScript && s.scripts != nil && s.scripts.caller != nil {
		// redis.call runs with the flags of the client that ran the script.
		orig := s.scripts.caller
		if ce, ok := orig.Data.(*clientExt); ok && ce.master {
			return ""
		}
		asking, readOnly = orig.Asking, orig.ReadOnly
	}
	e.afterBatch() // a CLUSTER command earlier in the batch: route on its View
	view := e.view
	req := cluster.Request{Slots: e.slots, Write: write, Asking: asking, ReadOnly: readOnly, Migrate: isMigrate}
	if (len(view.Migrating) > 0 || len(view.Importing) > 0) && cmd.Flags&FlagPubSub == 0 {
		// (A shard channel is not a key: Redis serves SSUBSCRIBE and
		// SPUBLISH where the slot's owner is, without ASK.)
		db := s.dbs[0]
		req.KeyExists = func(i int) bool { return db.Get(e.keys[i]) != nil }
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

// ---- INFO ----

func (e *ext) infoSection(section string) (string, bool) {
	switch section {
	case "replication":
		return e.repl.info(), true
	case "cluster":
		if e.bus == nil {
			return "", false
		}
		return "", false
	}
	return "", false
}
