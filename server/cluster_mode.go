package server

// Cluster mode and replication, wired into the engine (this file, repl.go,
// migrate.go; started by Main and StartNode):
//
//   - cluster-enabled yes starts the cluster bus (server/cluster/bus) on
//     cluster-port or port+10000 around the state machine (server/cluster),
//     loaded from nodes.conf when it exists. nodes.conf is rewritten in place
//     and fsynced from OnReady, before the bus sends the batch's messages.
//   - CLUSTER runs cluster.Exec under the server lock through bus.DoLater;
//     the outputs of a batch of pipelined CLUSTER commands are performed once
//     before the replies are written (afterBatch), like Redis's beforeSleep.
//   - Every keyed command (each queued command for EXEC, each redis.call with
//     the caller's flags) is routed with SlotView.Route: MOVED, ASK, TRYAGAIN,
//     CROSSSLOT, CLUSTERDOWN. ASKING lasts one command (not inside MULTI).
//   - Bus events that need the keyspace (EventReplicate, EventBecomeMaster,
//     EventPauseWrites, EventUnpauseWrites, EventDeleteSlots) go through a
//     channel to eventLoop, which takes the server lock: OnReady and
//     BeforeTick run under the bus lock and never wait for the server lock.
//     BeforeTick feeds SetReplOffset and SetMasterLinkStatus from atomics.
//   - A manual failover pauses writes like CLIENT PAUSE WRITE, then confirms
//     with WritesPaused(master_repl_offset).

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
	"github.com/redline-dev/redline/server/keyslot"
)

// ext is what cluster mode and replication attach to a server: the cluster
// bus (nil without cluster-enabled) and the replication state.
type ext struct {
	s    *Server
	bus  *bus.Bus
	repl *replState

	events chan cluster.Event
	done   chan struct{}
	wg     sync.WaitGroup

	// scratch for routing (server lock held)
	slots []int
	keys  [][]byte

	mig  migrateConns
	opts extOptions

	busPending bool // a CLUSTER command ran without performing its outputs
	confPath   string
}

// afterBatch runs (server lock held) after a connection's batch of commands,
// before the replies are written: it performs the cluster outputs of the
// batch's CLUSTER commands once.
func (e *ext) afterBatch() {
	if e.busPending {
		e.busPending = false
		e.bus.Do(func(n *cluster.Node) error { return nil })
	}
}

// extOptions let tests run whole clusters in one process over an in-memory
// network: the bus transport and the dialer replicas use to reach a master.
type extOptions struct {
	transport  bus.Transport
	dialMaster func(addr string) (net.Conn, error)
}

// extOptionsFor, when set (tests), supplies the options of each server.
var extOptionsFor func(s *Server) extOptions

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

// ClusterBus returns the cluster bus (nil without cluster mode).
func (s *Server) ClusterBus() *bus.Bus {
	if s.ext == nil {
		return nil
	}
	return s.ext.bus
}

func (s *Server) startExt() error {
	e := &ext{s: s, events: make(chan cluster.Event, 1024), done: make(chan struct{})}
	if extOptionsFor != nil {
		e.opts = extOptionsFor(s)
	}
	e.repl = newReplState(e)
	s.ext = e
	e.registerCommands()
	s.SetHooks(Hooks{
		PreExecute:   e.preExecute,
		PostExecute:  e.postExecute,
		Propagated:   e.repl.propagated,
		InfoSection:  e.infoSection,
		Cron:         e.cron,
		ClientClosed: e.clientClosed,
	})
	if s.cfg.ClusterEnabled {
		if err := e.startCluster(); err != nil {
			return err
		}
	} else if s.cfg.ReplicaOf != "" {
		f := strings.Fields(s.cfg.ReplicaOf)
		if len(f) == 2 {
			port, _ := strconv.Atoi(f[1])
			s.mu.Lock()
			e.repl.setMaster(f[0], port)
			s.mu.Unlock()
		}
	}
	e.wg.Add(1)
	go e.eventLoop()
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
	}
	if ccfg.MigrationBarrier == 0 {
		ccfg.MigrationBarrier = -1
	}
	if ccfg.ReplicaValidityFactor == 0 {
		ccfg.ReplicaValidityFactor = -1
	}
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
		if err := writeNodesConf(path, n.NodesConf(), true); err != nil {
			return fmt.Errorf("Unable to save the cluster config file %s: %v", path, err)
		}
	}
	e.bus = bus.New(bus.Options{
		Node:       n,
		ListenAddr: net.JoinHostPort(host, strconv.Itoa(cport)),
		Transport:  e.opts.transport,
		OnReady:    e.onReady,
		BeforeTick: e.beforeTick,
	})
	if err := e.bus.Start(); err != nil {
		return err
	}
	return nil
}

// writeNodesConf rewrites nodes.conf in place like Redis's
// clusterSaveConfig: the new text padded with newlines to the old length,
// one write, fsync when asked, then truncation of the padding. (An atomic
// rename costs a second fsync, of the directory, on every slot change.)
func writeNodesConf(path, text string, fsync bool) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	b := []byte(text)
	if st, err := f.Stat(); err == nil && st.Size() > int64(len(b)) {
		pad := make([]byte, int(st.Size())-len(b))
		for i := range pad {
			pad[i] = '\n'
		}
		b = append(b, pad...)
	}
	if _, err := f.WriteAt(b, 0); err != nil {
		return err
	}
	if fsync {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	if len(b) != len(text) {
		f.Truncate(int64(len(text)))
	}
	return nil
}

// onReady runs under the bus lock: never take the server lock here. It
// saves nodes.conf before the bus sends the batch's messages (a vote goes
// out only once lastVoteEpoch is on disk).
func (e *ext) onReady(r *cluster.Ready) {
	if r.SaveConfig && e.confPath != "" {
		if err := writeNodesConf(e.confPath, r.NodesConf, r.Fsync); err != nil {
			e.s.Logf('#', "Could not save the cluster config file %s: %v", e.confPath, err)
		}
	}
	for _, l := range r.Logs {
		e.s.Logf('*', "%s", l)
	}
	for _, ev := range r.Events {
		select {
		case e.events <- ev:
		default:
			e.s.Logf('#', "cluster event queue full, dropping event %d", ev.Kind)
		}
	}
}

// beforeTick runs under the bus lock: replication inputs from atomics.
func (e *ext) beforeTick(n *cluster.Node) {
	r := e.repl
	n.SetReplOffset(r.offsetA.Load())
	if !n.IsMaster() {
		if r.linkUp.Load() {
			n.SetMasterLinkStatus(true, time.UnixMilli(r.lastIOA.Load()))
		} else {
			n.SetMasterLinkStatus(false, time.UnixMilli(r.downSinceA.Load()))
		}
	}
}

// eventLoop applies cluster events that need the server lock.
func (e *ext) eventLoop() {
	defer e.wg.Done()
	for {
		select {
		case <-e.done:
			return
		case ev := <-e.events:
			e.handleEvent(ev)
		}
	}
}

func (e *ext) handleEvent(ev cluster.Event) {
	s := e.s
	switch ev.Kind {
	case cluster.EventReplicate:
		s.mu.Lock()
		e.repl.setMaster(ev.IP, ev.Port)
		s.mu.Unlock()
	case cluster.EventBecomeMaster:
		s.mu.Lock()
		e.repl.becomeMaster()
		s.mu.Unlock()
	case cluster.EventPauseWrites:
		s.mu.Lock()
		if s.pauseEnd.IsZero() || s.pauseEnd.Before(ev.Until) {
			s.pauseEnd = ev.Until
		}
		s.pauseAll = false
		off := e.repl.offset
		s.mu.Unlock()
		e.bus.Do(func(n *cluster.Node) error { n.WritesPaused(off); return nil })
	case cluster.EventUnpauseWrites:
		s.mu.Lock()
		if !s.pauseEnd.IsZero() {
			s.unpause()
		}
		s.mu.Unlock()
	case cluster.EventDeleteSlots:
		s.mu.Lock()
		n := 0
		for _, slot := range ev.Slots {
			n += s.DeleteKeysInSlot(slot)
		}
		s.mu.Unlock()
		if n > 0 {
			s.Logf('*', "Deleted %d keys from slots this node no longer serves", n)
		}
	}
}

func (e *ext) cron() { e.repl.cron() }

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
	if e.bus != nil {
		if msg := e.route(c, cmd, argv); msg != "" {
			return msg
		}
	}
	return e.repl.checkWrite(c, cmd, argv)
}

func (e *ext) postExecute(c *Client, cmd *Command) {
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
	write := cmd.Flags&FlagWrite != 0
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
	asking, readOnly := c.Asking || cmd.Flags&FlagAsking != 0, c.ReadOnly
	if c.inScript && s.scripts != nil && s.scripts.caller != nil {
		// redis.call runs with the flags of the client that ran the script.
		orig := s.scripts.caller
		if ce, ok := orig.Data.(*clientExt); ok && ce.master {
			return ""
		}
		asking, readOnly = orig.Asking, orig.ReadOnly
	}
	if e.busPending {
		e.afterBatch() // publish the new View before routing on it
	}
	view := e.bus.View()
	req := cluster.Request{Slots: e.slots, Write: write, Asking: asking, ReadOnly: readOnly, Migrate: isMigrate}
	if len(view.Migrating) > 0 || len(view.Importing) > 0 {
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

// ---- commands ----

func (e *ext) registerCommands() {
	s := e.s
	s.Register(&Command{Name: "cluster", Arity: -2, Group: "cluster", Handler: e.cmdCluster,
		Subcommands: clusterSubcommands()})
	s.Register(&Command{Name: "asking", Arity: 1, Flags: FlagFast, Group: "cluster", Handler: e.cmdAsking})
	s.Register(&Command{Name: "readonly", Arity: 1, Flags: FlagFast | FlagLoading | FlagStale, Group: "cluster", Handler: e.cmdReadonly})
	s.Register(&Command{Name: "readwrite", Arity: 1, Flags: FlagFast | FlagLoading | FlagStale, Group: "cluster", Handler: e.cmdReadwrite})
	s.Register(&Command{Name: "migrate", Arity: -6, Flags: FlagWrite, FirstKey: 3, LastKey: 3, Step: 1,
		Keys: migrateKeys, Group: "generic", Handler: e.cmdMigrate})
	e.repl.registerCommands()
}

func clusterSubcommands() []*Command {
	var out []*Command
	for _, n := range []string{"addslots", "addslotsrange", "bumpepoch", "count-failure-reports", "countkeysinslot",
		"delslots", "delslotsrange", "failover", "flushslots", "forget", "getkeysinslot", "help", "info", "keyslot",
		"links", "meet", "myid", "nodes", "replicas", "replicate", "reset", "saveconfig", "set-config-epoch",
		"setslot", "shards", "slaves", "slots"} {
		out = append(out, &Command{Name: n, Arity: -2, Flags: FlagStale})
	}
	return out
}

func (e *ext) cmdAsking(c *Client, argv [][]byte) {
	if e.bus == nil {
		c.Error("ERR This instance has cluster support disabled")
		return
	}
	c.Asking = true
	c.OK()
}

func (e *ext) cmdReadonly(c *Client, argv [][]byte) {
	if e.bus == nil {
		c.Error("ERR This instance has cluster support disabled")
		return
	}
	c.ReadOnly = true
	c.OK()
}

func (e *ext) cmdReadwrite(c *Client, argv [][]byte) {
	if e.bus == nil {
		c.Error("ERR This instance has cluster support disabled")
		return
	}
	c.ReadOnly = false
	c.OK()
}

func (e *ext) cmdCluster(c *Client, argv [][]byte) {
	if e.bus == nil {
		c.Error("ERR This instance has cluster support disabled")
		return
	}
	s := e.s
	args := make([]string, len(argv))
	for i, a := range argv {
		args[i] = string(a)
	}
	db := s.dbs[0]
	env := cluster.Env{
		CountKeysInSlot: db.CountKeysInSlot,
		GetKeysInSlot:   db.KeysInSlot,
		DBEmpty: func() bool {
			for _, d := range s.dbs {
				if d.Len() > 0 {
					return false
				}
			}
			return true
		},
	}
	sub := ""
	if len(args) > 1 {
		sub = strings.ToLower(args[1])
	}
	var r any
	wasReplica := false
	// The outputs (nodes.conf fsync, messages) are performed once per batch
	// of pipelined commands, before the replies go out (afterBatch).
	e.bus.DoLater(func(n *cluster.Node) error {
		wasReplica = !n.IsMaster()
		r = cluster.Exec(n, args, env)
		return nil
	})
	e.busPending = true
	if c.conn == nil {
		e.afterBatch()
	}
	if sub == "reset" && wasReplica {
		if _, isErr := r.(error); !isErr {
			// A replica reset to an empty master forgets its data (Redis).
			e.repl.becomeMaster()
			s.FlushAll()
		}
	}
	writeClusterReply(c, r)
}

func writeClusterReply(c *Client, v any) {
	switch x := v.(type) {
	case nil:
		c.Null()
	case error:
		c.Error(x.Error())
	case cluster.Status:
		c.Simple(string(x))
	case cluster.Verbatim:
		c.Verbatim(string(x))
	case string:
		c.BulkString(x)
	case int64:
		c.Int(x)
	case int:
		c.Int(int64(x))
	case []string:
		c.Array(len(x))
		for _, s := range x {
			c.BulkString(s)
		}
	case []any:
		c.Array(len(x))
		for _, e := range x {
			writeClusterReply(c, e)
		}
	case cluster.Map:
		c.Map(len(x) / 2)
		for _, e := range x {
			writeClusterReply(c, e)
		}
	default:
		c.Error(fmt.Sprintf("ERR internal: reply type %T", v))
	}
}
