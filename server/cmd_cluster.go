package server

// The cluster commands: CLUSTER (and its Redis 8 subcommands SLOT-STATS,
// MIGRATION, SYNCSLOTS), ASKING, READONLY, READWRITE and MIGRATE.

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redline-dev/redline/server/cluster"
	"github.com/redline-dev/redline/server/internal/planted"
	"github.com/redline-dev/redline/server/store"
)

// cmdAsking lets the next command of c run on a slot being imported (ASK).
func cmdAsking(c *Client, argv [][]byte) {
	c.Asking = true
	c.OK()
}

// cmdReadonly lets c read from a replica the slots of its master.
func cmdReadonly(c *Client, argv [][]byte) {
	c.ReadOnly = true
	c.OK()
}

// cmdReadwrite ends READONLY.
func cmdReadwrite(c *Client, argv [][]byte) {
	c.ReadOnly = false
	c.OK()
}

// cmdCluster runs the CLUSTER subcommands without a handler of their own
// through cluster.Exec.
func cmdCluster(c *Client, argv [][]byte) {
	s := c.s
	args := stringArgs(argv)
	if msg := s.asmSetslotConflict(args); msg != "" {
		c.Error(msg)
		return
	}
	count, get := s.clusterKeysEnv()
	env := cluster.Env{
		CountKeysInSlot: count,
		GetKeysInSlot:   get,
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
	wasReplica := !s.cl.node.IsMaster()
	r := cluster.Exec(s.cl.node, args, env)
	// The outputs (nodes.conf fsync, messages) are performed once per batch
	// of pipelined commands, before the replies go out (afterBatch).
	s.cl.pending = true
	if c.conn == nil {
		s.flushClusterOutputs()
	}
	if sub == "reset" && wasReplica {
		if _, isErr := r.(error); !isErr {
			// A replica reset to an empty master forgets its data (Redis).
			s.repl.becomeMaster()
			s.flushAll()
		}
	}
	if v, ok := r.(cluster.Verbatim); ok && sub == "info" {
		r = cluster.Verbatim(string(v) + s.asmClusterInfo())
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

// cmdSlotStats runs CLUSTER SLOT-STATS; the errors are Redis 8.2's.
func (s *Server) cmdSlotStats(c *Client, args []string) {
	metrics := s.activeSlotMetrics()
	switch {
	case len(args) == 5 && strings.EqualFold(args[2], "slotsrange"):
		start, err := parseSlotArg(args[3])
		if err == nil {
			var end int
			if end, err = parseSlotArg(args[4]); err == nil {
				if start > end {
					c.Error(fmt.Sprintf("ERR Start slot number %d is greater than end slot number %d", start, end))
					return
				}
				var slots []int
				for slot := start; slot <= end; slot++ {
					if s.myShardOwns(slot) {
						slots = append(slots, slot)
					}
				}
				s.writeSlotStats(c, slots, metrics)
				return
			}
		}
		c.Error(err.Error())
	case len(args) >= 4 && strings.EqualFold(args[2], "orderby"):
		var by *slotMetric
		for i := range metrics {
			if strings.EqualFold(args[3], metrics[i].name) {
				by = &metrics[i]
			}
		}
		if by == nil {
			c.Error("ERR Unrecognized sort metric for ORDERBY.")
			return
		}
		limit, desc := cluster.NumSlots, true
		limits, orders := 0, 0
		for i := 4; i < len(args); i++ {
			switch w := strings.ToLower(args[i]); {
			case w == "limit" && i+1 < len(args):
				n, err := strconv.ParseInt(args[i+1], 10, 64)
				if err != nil || n < 1 || n > cluster.NumSlots {
					c.Error("ERR Limit has to lie in between 1 and 16384 (maximum number of slots).")
					return
				}
				limit = int(n)
				limits++
				i++
			case w == "asc" || w == "desc":
				desc = w == "desc"
				orders++
			default:
				c.Error("ERR syntax error")
				return
			}
			if limits > 1 || orders > 1 {
				c.Error("ERR Multiple filters of the same type are disallowed.")
				return
			}
		}
		type sv struct {
			slot int
			v    int64
		}
		var all []sv
		for slot := 0; slot < cluster.NumSlots; slot++ {
			if s.myShardOwns(slot) {
				all = append(all, sv{slot, by.value(s, slot)})
			}
		}
		// Ties go to the lower slot number in both directions (documented).
		sort.SliceStable(all, func(i, j int) bool {
			if all[i].v != all[j].v {
				return (all[i].v > all[j].v) == desc
			}
			return all[i].slot < all[j].slot
		})
		if len(all) > limit {
			all = all[:limit]
		}
		slots := make([]int, len(all))
		for i, x := range all {
			slots[i] = x.slot
		}
		s.writeSlotStats(c, slots, metrics)
	default:
		c.Error("ERR unknown subcommand or wrong number of arguments for '" + trunc([]byte(args[1]), 128) + "'. Try CLUSTER HELP.")
	}
}

// writeSlotStats writes one [slot, {metric: value, ...}] pair per slot.
func (s *Server) writeSlotStats(c *Client, slots []int, metrics []slotMetric) {
	c.Array(len(slots))
	for _, slot := range slots {
		c.Array(2)
		c.Int(int64(slot))
		c.Map(len(metrics))
		for _, m := range metrics {
			c.BulkString(m.name)
			c.Int(m.value(s, slot))
		}
	}
}

// cmdSyncSlots receives one migration message from a peer.
func cmdSyncSlots(c *Client, argv [][]byte) {
	s := c.s
	if len(argv) != 11 {
		c.Error("ERR wrong number of arguments for 'cluster|syncslots' command")
		return
	}
	typ, err1 := strconv.Atoi(string(argv[3]))
	off, err2 := strconv.ParseInt(string(argv[5]), 10, 64)
	n, err3 := strconv.ParseInt(string(argv[6]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || typ < 0 || typ > int(cluster.MigAbort) {
		c.Error("ERR malformed SYNCSLOTS message")
		return
	}
	var ranges []cluster.SlotSpan
	if f := strings.Fields(string(argv[7])); len(f) > 0 {
		var args []string
		for _, r := range f {
			a, b, _ := strings.Cut(r, "-")
			args = append(args, a, b)
		}
		var err error
		if ranges, err = cluster.ParseSlotRanges(args); err != nil {
			c.Error(err.Error())
			return
		}
	}
	a := s.asmState()
	msg := cluster.MigMsg{Type: cluster.MigMsgType(typ), From: string(argv[2]), To: s.cl.node.ID(), Task: string(argv[4]),
		Ranges: ranges, Offset: off, Bytes: n, Err: string(argv[8])}
	if f := asmMsgFlag(msg.Type); f != 0 {
		c.asmFlag = f
	}
	if (msg.Type == cluster.MigSnapshot || msg.Type == cluster.MigStream) && s.asmImportingTask(msg.Task) {
		s.announceImport(msg.Task)
		applyCommands(s, a.apply, argv[9])
		a.stats.inputPeak = max(a.stats.inputPeak, int64(len(argv[9])))
	}
	a.m.SetTime(time.Now())
	if msg.Type == cluster.MigEOF {
		a.sourceEpoch, _ = strconv.ParseUint(string(argv[10]), 10, 64)
	}
	if msg.Type == cluster.MigTakenOver && s.asmHandingOff(msg.Task) {
		// The destination's claim, applied before writes resume here: they
		// must find the slots gone (MOVED), not write into keys about to be
		// trimmed. The destination's bumped epoch makes the bus agree.
		forEachSlot(msg.Ranges, func(sl int) {
			s.cl.node.SetSlot(sl, cluster.SetSlotNode, msg.From, 0) // CLUSTER SETSLOT NODE, with no key count as before
		})
		s.nodeReady()
	}
	a.m.Step(msg)
	s.asmOutput(nil)
	c.OK()
}

// cmdMigration runs CLUSTER MIGRATION IMPORT | STATUS | CANCEL (Redis 8.4
// argument checks and replies).
func (s *Server) cmdMigration(c *Client, args []string) {
	arity := "ERR wrong number of arguments for 'cluster|migration' command"
	if len(args) < 4 {
		c.Error(arity)
		return
	}
	if !s.cl.node.IsMaster() {
		c.Error("ERR CLUSTER MIGRATION can only be sent to a primary")
		return
	}
	a := s.asmState()
	switch strings.ToLower(args[2]) {
	case "import":
		rs, err := cluster.ParseSlotRanges(args[3:])
		if err != nil {
			c.Error(err.Error())
			return
		}
		a.m.SetTime(time.Now())
		id, err := a.m.Import(rs)
		if err != nil {
			c.Error(err.Error())
			return
		}
		s.asmOutput(nil)
		c.BulkString(id)
	case "status", "cancel":
		id := ""
		switch {
		case strings.EqualFold(args[3], "id") && len(args) == 5:
			id = args[4]
		case strings.EqualFold(args[3], "all") && len(args) == 4:
		case strings.EqualFold(args[3], "id") || strings.EqualFold(args[3], "all"):
			c.Error(arity)
			return
		default:
			c.Error("ERR unknown argument")
			return
		}
		if strings.EqualFold(args[2], "cancel") {
			a.m.SetTime(time.Now())
			n := a.m.Cancel(id)
			s.asmOutput(nil)
			c.Int(int64(n))
			return
		}
		tasks := a.m.Status(id)
		if id != "" && len(tasks) == 0 {
			c.Array(0)
			return
		}
		c.Array(len(tasks))
		for _, t := range tasks {
			writeTaskStatus(c, t)
		}
	default:
		c.Error("ERR unknown argument")
	}
}

// writeTaskStatus writes STATUS's 12-field map (numbers as bulk strings,
// as Redis 8.4 does).
func writeTaskStatus(c *Client, t *cluster.MigrationTask) {
	num := func(v int64) string { return strconv.FormatInt(v, 10) }
	fields := []string{"id", t.ID, "slots_range", cluster.FormatRanges(t.Ranges), "source", t.Source, "dest", t.Dest,
		"operation", t.Operation(), "state", t.State, "last_error", t.LastError, "retries", num(t.Retries),
		"create_time", num(t.CreateTime), "start_time", num(t.StartTime), "done_time", num(t.DoneTime),
		"write_pause_ms", num(t.WritePauseMs())}
	c.Map(len(fields) / 2)
	for _, f := range fields {
		c.BulkString(f)
	}
}

func cmdMigrate(c *Client, argv [][]byte) {
	s := c.s
	var copyKeys, replace bool
	var user, pass string
	auth := false
	firstKey, numKeys := 3, 1
	for i := 6; i < len(argv); i++ {
		more := len(argv) - i - 1
		switch strings.ToLower(string(argv[i])) {
		case "copy":
			copyKeys = true
		case "replace":
			replace = true
		case "auth":
			if more < 1 {
				c.Error(ErrSyntax)
				return
			}
			auth, pass = true, string(argv[i+1])
			i++
		case "auth2":
			if more < 2 {
				c.Error(ErrSyntax)
				return
			}
			auth, user, pass = true, string(argv[i+1]), string(argv[i+2])
			i += 2
		case "keys":
			if len(argv[3]) != 0 {
				c.Error("ERR When using MIGRATE KEYS option, the key argument must be set to the empty string")
				return
			}
			firstKey = i + 1
			numKeys = len(argv) - i - 1
			i = len(argv)
		default:
			c.Error(ErrSyntax)
			return
		}
	}
	port, ok := parseInt(argv[2])
	if !ok {
		c.Error(ErrNotInt)
		return
	}
	dbid, ok := parseInt(argv[4])
	if !ok {
		c.Error(ErrNotInt)
		return
	}
	tmo, ok := parseInt(argv[5])
	if !ok {
		c.Error(ErrNotInt)
		return
	}
	if tmo <= 0 {
		tmo = 1000
	}
	timeout := time.Duration(tmo) * time.Millisecond
	db := c.kv()
	now := db.Tick()
	type item struct {
		key []byte
		o   *store.Object
	}
	var items []item
	for j := firstKey; j < firstKey+numKeys && j < len(argv); j++ {
		if o := db.Get(argv[j]); o != nil {
			items = append(items, item{argv[j], o})
		}
	}
	if len(items) == 0 {
		c.Simple("NOKEY")
		return
	}
	addr := net.JoinHostPort(string(argv[1]), strconv.FormatInt(port, 10))
	mc, err := s.mig.get(addr, timeout)
	if err != nil {
		c.Error("IOERR error or timeout connecting to the client")
		return
	}
	restore := "RESTORE"
	if s.cfg.ClusterEnabled {
		restore = "RESTORE-ASKING"
	}
	var b []byte
	expect := 0
	if auth {
		if user != "" {
			b = appendCommand(b, [][]byte{[]byte("AUTH"), []byte(user), []byte(pass)})
		} else {
			b = appendCommand(b, [][]byte{[]byte("AUTH"), []byte(pass)})
		}
		expect++
	}
	selecting := mc.db != dbid
	if selecting {
		b = appendCommand(b, [][]byte{[]byte("SELECT"), itob(dbid)})
		expect++
	}
	for i, it := range items {
		if planted.On(planted.MigrateLoseLastKey) && i > 0 && i == len(items)-1 {
			b = appendCommand(b, [][]byte{[]byte("PING")}) // its +PONG is taken for the RESTORE's +OK
			continue
		}
		ttl := int64(0)
		if it.o.ExpireAt != 0 {
			ttl = it.o.ExpireAt - now
			if ttl < 1 {
				ttl = 1
			}
		}
		args := [][]byte{[]byte(restore), it.key, itob(ttl), store.Dump(it.o)}
		if replace {
			args = append(args, []byte("REPLACE"))
		}
		b = appendCommand(b, args)
	}
	mc.conn.SetWriteDeadline(time.Now().Add(timeout))
	if _, err := mc.conn.Write(b); err != nil {
		s.mig.drop(addr)
		c.Error("IOERR error or timeout writing to target instance")
		return
	}
	mc.conn.SetReadDeadline(time.Now().Add(timeout))
	for i := 0; i < expect; i++ {
		l, err := readReply(mc.rd)
		if err != nil {
			s.mig.drop(addr)
			c.Error("IOERR error or timeout reading to target instance")
			return
		}
		if strings.HasPrefix(l, "-") {
			// Read the rest so the connection stays in sync, then fail.
			for j := i + 1; j < expect+len(items); j++ {
				readReply(mc.rd)
			}
			s.mig.drop(addr)
			c.Error("ERR Target instance replied with error: " + l[1:])
			return
		}
	}
	if selecting {
		mc.db = dbid
	}
	var errMsg string
	var deleted [][]byte
	for _, it := range items {
		l, err := readReply(mc.rd)
		if err != nil {
			s.mig.drop(addr)
			errMsg = "IOERR error or timeout reading to target instance"
			break
		}
		if strings.HasPrefix(l, "-") {
			if errMsg == "" {
				errMsg = "ERR Target instance replied with error: " + l[1:]
			}
			continue
		}
		if !copyKeys {
			if o := db.Get(it.key); o != nil {
				db.Remove(o)
				s.dirty++
				c.notify(notifyGeneric, "del", it.key)
				deleted = append(deleted, it.key)
			}
		}
	}
	if len(deleted) > 0 {
		c.Propagate(append([][]byte{[]byte("DEL")}, deleted...)...)
	} else {
		c.Propagate()
	}
	if errMsg != "" {
		c.Error(errMsg)
		return
	}
	c.OK()
}

// stringArgs copies argv as strings (the CLUSTER parsers take strings).
func stringArgs(argv [][]byte) []string {
	args := make([]string, len(argv))
	for i, a := range argv {
		args[i] = string(a)
	}
	return args
}

// clusterOnly runs h only in cluster mode (CLUSTER and its subcommands,
// ASKING, READONLY, READWRITE).
func clusterOnly(h Handler) Handler {
	return func(c *Client, argv [][]byte) {
		if c.s.cl.bus == nil {
			c.Error("ERR This instance has cluster support disabled")
			return
		}
		h(c, argv)
	}
}

// clusterCommands are the cluster commands' specs. CLUSTER's subcommands
// carry Redis 7.0's arities (and Redis 8's for SLOT-STATS, MIGRATION and
// the peers' SYNCSLOTS, which have handlers of their own); the others run
// CLUSTER's handler, cluster.Exec.
func clusterCommands() []*Command {
	const st = FlagStale
	return []*Command{
		newCmd("cluster", -2, 0, 0, 0, 0, clusterOnly(cmdCluster), "cluster").withSubs(
			sub("addslots", -3, FlagAdmin|FlagStale|FlagNoAsyncLoading), sub("addslotsrange", -4, FlagAdmin|FlagStale|FlagNoAsyncLoading), sub("bumpepoch", 2, FlagAdmin|FlagStale|FlagNoAsyncLoading),
			sub("count-failure-reports", 3, FlagAdmin|FlagStale), sub("countkeysinslot", 3, st), sub("delslots", -3, FlagAdmin|FlagStale|FlagNoAsyncLoading),
			sub("delslotsrange", -4, FlagAdmin|FlagStale|FlagNoAsyncLoading), sub("failover", -2, FlagAdmin|FlagStale|FlagNoAsyncLoading), sub("flushslots", 2, FlagAdmin|FlagStale|FlagNoAsyncLoading), sub("forget", 3, FlagAdmin|FlagStale|FlagNoAsyncLoading),
			sub("getkeysinslot", 4, st), sub("help", 2, FlagLoading|FlagStale), sub("info", 2, st), sub("keyslot", 3, st),
			sub("links", 2, st), sub("meet", -4, FlagAdmin|FlagStale|FlagNoAsyncLoading), sub("myid", 2, st), sub("nodes", 2, st), sub("replicas", 3, FlagAdmin|FlagStale),
			sub("replicate", 3, FlagAdmin|FlagStale|FlagNoAsyncLoading), sub("reset", -2, FlagAdmin|FlagNoScript|FlagStale), sub("saveconfig", 2, FlagAdmin|FlagStale|FlagNoAsyncLoading), sub("set-config-epoch", 3, FlagAdmin|FlagStale|FlagNoAsyncLoading),
			sub("setslot", -4, FlagAdmin|FlagStale|FlagNoAsyncLoading), sub("shards", 2, st), sub("slaves", 3, FlagAdmin|FlagStale), sub("slots", 2, st),
			sub("slot-stats", -4, st).withHandler(clusterOnly(func(c *Client, argv [][]byte) { c.s.cmdSlotStats(c, stringArgs(argv)) })),
			sub("migration", -4, st).withHandler(clusterOnly(func(c *Client, argv [][]byte) { c.s.cmdMigration(c, stringArgs(argv)) })),
			sub("syncslots", 11, st).withHandler(clusterOnly(cmdSyncSlots))),
		newCmd("asking", 1, FlagFast, 0, 0, 0, clusterOnly(cmdAsking), "cluster"),
		newCmd("readonly", 1, FlagFast|FlagLoading|FlagStale, 0, 0, 0, clusterOnly(cmdReadonly), "cluster"),
		newCmd("readwrite", 1, FlagFast|FlagLoading|FlagStale, 0, 0, 0, clusterOnly(cmdReadwrite), "cluster"),
		newCmd("migrate", -6, FlagWrite|FlagMovableKeys, 3, 3, 1, cmdMigrate, "generic").withKeys(migrateKeys).
			withACL("@keyspace", "@write", "@slow", "@dangerous").withRedisInfoSpecs(""),
	}
}
