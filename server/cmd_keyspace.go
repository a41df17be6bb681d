// Keyspace commands (Redis db.c, expire.c): commands on keys whatever their
// type. The key lookup and argument helpers every family uses are the
// engine's (engine_*.go).

package server

import (
	"math"
	"strconv"
	"strings"

	"github.com/redline-dev/redline/server/store"
)

func cmdDel(c *Client, argv [][]byte) {
	var n int64
	for _, k := range argv[1:] {
		if c.kv().Delete(k) {
			c.notify(notifyGeneric, "del", k)
			n++
		}
	}
	c.s.dirty += n
	c.Int(n)
}

func cmdExists(c *Client, argv [][]byte) {
	var n int64
	for _, k := range argv[1:] {
		if c.kv().Peek(k) != nil {
			n++
		} else {
			c.notifyMiss(k)
		}
	}
	c.Int(n)
}

func cmdType(c *Client, argv [][]byte) {
	o := c.kv().Peek(argv[1])
	if o == nil {
		c.notifyMiss(argv[1])
		c.Simple("none")
		return
	}
	c.Simple(o.Kind.String())
}

func expireGeneric(c *Client, argv [][]byte, unit int64, absolute bool) {
	name := c.cmd.Name
	var nx, xx, gt, lt bool
	for _, a := range argv[3:] {
		switch strings.ToUpper(string(a)) {
		case "NX":
			nx = true
		case "XX":
			xx = true
		case "GT":
			gt = true
		case "LT":
			lt = true
		default:
			c.Error("ERR Unsupported option " + cstr(a))
			return
		}
	}
	if nx && (xx || gt || lt) {
		c.Error("ERR NX and XX, GT or LT options at the same time are not compatible")
		return
	}
	if gt && lt {
		c.Error("ERR GT and LT options at the same time are not compatible")
		return
	}
	// Redis checks the options before the time.
	v, ok := parseInt(argv[2])
	if !ok {
		c.Error(ErrNotInt)
		return
	}
	db := c.kv()
	now := db.Now()
	if unit == 1000 {
		if v > math.MaxInt64/1000 || v < math.MinInt64/1000 {
			c.Error("ERR invalid expire time in '" + name + "' command")
			return
		}
		v *= 1000
	}
	if !absolute {
		// Only overflow upwards is an error; a very negative time deletes.
		if v > 0 && v > math.MaxInt64-now {
			c.Error("ERR invalid expire time in '" + name + "' command")
			return
		}
		v += now
	}
	o := db.Get(argv[1])
	if o == nil {
		c.Int(0)
		return
	}
	cur := o.ExpireAt
	if nx && cur != 0 || xx && cur == 0 {
		c.Int(0)
		return
	}
	if gt && (cur == 0 || v <= cur) {
		c.Int(0)
		return
	}
	if lt && cur != 0 && v >= cur {
		c.Int(0)
		return
	}
	if c.s.alreadyExpired(v, now) {
		db.Remove(o)
		c.s.dirty++
		c.notify(notifyGeneric, "del", argv[1])
		c.Propagate([]byte("DEL"), argv[1])
		c.Int(1)
		return
	}
	db.SetExpire(o, v)
	c.s.dirty++
	c.notify(notifyGeneric, "expire", argv[1])
	c.Propagate([]byte("PEXPIREAT"), argv[1], itob(v))
	c.Int(1)
}

func cmdExpire(c *Client, argv [][]byte)    { expireGeneric(c, argv, 1000, false) }
func cmdPExpire(c *Client, argv [][]byte)   { expireGeneric(c, argv, 1, false) }
func cmdExpireAt(c *Client, argv [][]byte)  { expireGeneric(c, argv, 1000, true) }
func cmdPExpireAt(c *Client, argv [][]byte) { expireGeneric(c, argv, 1, true) }

func ttlGeneric(c *Client, argv [][]byte, ms bool) {
	o := c.kv().Peek(argv[1])
	if o == nil {
		c.notifyMiss(argv[1])
		c.Int(-2)
		return
	}
	if o.ExpireAt == 0 {
		c.Int(-1)
		return
	}
	left := o.ExpireAt - c.kv().Now()
	if left < 0 {
		left = 0
	}
	if ms {
		c.Int(left)
	} else {
		c.Int((left + 500) / 1000)
	}
}

func cmdTTL(c *Client, argv [][]byte)  { ttlGeneric(c, argv, false) }
func cmdPTTL(c *Client, argv [][]byte) { ttlGeneric(c, argv, true) }

func expireTimeGeneric(c *Client, argv [][]byte, ms bool) {
	o := c.kv().Peek(argv[1])
	if o == nil {
		c.notifyMiss(argv[1])
		c.Int(-2)
		return
	}
	if o.ExpireAt == 0 {
		c.Int(-1)
		return
	}
	if ms {
		c.Int(o.ExpireAt)
	} else {
		c.Int((o.ExpireAt + 500) / 1000) // rounded, as Redis does
	}
}

func cmdPersist(c *Client, argv [][]byte) {
	o := c.kv().Get(argv[1])
	if o == nil || o.ExpireAt == 0 {
		c.Int(0)
		return
	}
	c.kv().SetExpire(o, 0)
	c.s.dirty++
	c.notify(notifyGeneric, "persist", argv[1])
	c.Int(1)
}

func cmdKeys(c *Client, argv [][]byte) {
	pat := argv[1]
	var out []string
	all := len(pat) == 1 && pat[0] == '*'
	h := c.s.hiding(c.db)
	c.kv().Each(func(o *store.Object) bool {
		if h != nil && h.hides(o.Key()) {
			return true
		}
		if all || GlobMatch(pat, []byte(o.Key())) {
			out = append(out, o.Key())
		}
		return true
	})
	c.Array(len(out))
	for _, k := range out {
		c.BulkString(k)
	}
}

func cmdScan(c *Client, argv [][]byte) {
	cur, ok := parseCursor(argv[1])
	if !ok {
		c.Error("ERR invalid cursor")
		return
	}
	count, pat, typ, ok := parseScanOptions(c, argv[2:], true)
	if !ok {
		return
	}
	var keys []string
	h := c.s.hiding(c.db)
	next := c.kv().Scan(cur, count, func(o *store.Object) {
		if h != nil && h.hides(o.Key()) {
			return
		}
		if pat != nil && !GlobMatch(pat, []byte(o.Key())) {
			return
		}
		if typ != "" && o.Kind.String() != typ {
			return
		}
		keys = append(keys, o.Key())
	})
	c.Array(2)
	c.BulkString(strconv.FormatUint(next, 10))
	c.Array(len(keys))
	for _, k := range keys {
		c.BulkString(k)
	}
}

func renameGeneric(c *Client, argv [][]byte, nx bool) {
	db := c.kv()
	o := db.Get(argv[1])
	if o == nil {
		c.Error(ErrNoKey)
		return
	}
	if string(argv[1]) == string(argv[2]) {
		if nx {
			c.Int(0)
		} else {
			c.OK()
		}
		return
	}
	if nx && db.Get(argv[2]) != nil {
		c.Int(0)
		return
	}
	db.Rename(o, argv[2])
	c.s.dirty++
	c.notify(notifyGeneric, "rename_from", argv[1])
	c.notify(notifyGeneric, "rename_to", argv[2])
	if nx {
		c.Int(1)
	} else {
		c.OK()
	}
}

func cmdRename(c *Client, argv [][]byte)   { renameGeneric(c, argv, false) }
func cmdRenameNX(c *Client, argv [][]byte) { renameGeneric(c, argv, true) }

func cmdRandomKey(c *Client, argv [][]byte) {
	o := c.s.visibleRandomKey(c.db)
	if o == nil {
		c.Null()
		return
	}
	c.BulkString(o.Key())
}

func cmdDBSize(c *Client, argv [][]byte) { c.Int(int64(c.s.visibleLen(c.db))) }

func flushArgs(c *Client, argv [][]byte) bool {
	if len(argv) > 2 || (len(argv) == 2 && !eq(argv[1], "async") && !eq(argv[1], "sync")) {
		c.Error(ErrSyntax)
		return false
	}
	return true
}

func cmdFlushDB(c *Client, argv [][]byte) {
	if !flushArgs(c, argv) {
		return
	}
	c.s.touchAll(c.db)
	c.s.signalFlushed(c.db)
	c.kv().Flush()
	c.s.trackFlushAll()
	c.s.dirty++
	c.OK()
}

func cmdFlushAll(c *Client, argv [][]byte) {
	if !flushArgs(c, argv) {
		return
	}
	c.s.touchAll(-1)
	c.s.signalFlushed(-1)
	for _, db := range c.s.dbs {
		db.Flush()
	}
	c.s.trackFlushAll()
	c.s.dirty++
	c.s.saveAfterFlushAll() // persist.go
	c.OK()
}

func cmdDump(c *Client, argv [][]byte) {
	o := c.kv().Get(argv[1])
	if o == nil {
		c.Null()
		return
	}
	c.Bulk(store.Dump(o))
}

func cmdRestore(c *Client, argv [][]byte) {
	// Redis's order: options, then an existing key, then the TTL, then
	// the payload.
	var replace, absttl bool
	idle, freq := int64(-1), int64(-1)
	for i := 4; i < len(argv); i++ {
		more := i+1 < len(argv)
		switch {
		case eq(argv[i], "replace"):
			replace = true
		case eq(argv[i], "absttl"):
			absttl = true
		case eq(argv[i], "idletime") && more && freq == -1:
			v, ok := parseInt(argv[i+1])
			if !ok {
				c.Error(ErrNotInt)
				return
			}
			if v < 0 {
				c.Error("ERR Invalid IDLETIME value, must be >= 0")
				return
			}
			idle = v
			i++
		case eq(argv[i], "freq") && more && idle == -1:
			v, ok := parseInt(argv[i+1])
			if !ok {
				c.Error(ErrNotInt)
				return
			}
			if v < 0 || v > 255 {
				c.Error("ERR Invalid FREQ value, must be >= 0 and <= 255")
				return
			}
			freq = v
			i++
		default:
			c.Error(ErrSyntax)
			return
		}
	}
	if !replace && c.kv().Get(argv[1]) != nil {
		c.Error("BUSYKEY Target key name already exists.")
		return
	}
	ttl, ok := parseInt(argv[2])
	if !ok {
		c.Error(ErrNotInt)
		return
	}
	if ttl < 0 {
		c.Error("ERR Invalid TTL value, must be >= 0")
		return
	}
	db := c.kv()
	old := db.Get(argv[1])
	o, err := db.Restore(argv[3])
	if err != nil {
		c.Error(err.Error())
		return
	}
	now := db.Now()
	if ttl > 0 {
		if !absttl {
			ttl += now
		}
		if c.s.alreadyExpired(ttl, now) {
			// Already expired: behave as if restored and expired at once.
			if old != nil {
				db.Remove(old)
				c.s.dirty++
				c.notify(notifyGeneric, "del", argv[1])
				c.Propagate([]byte("DEL"), argv[1])
			} else {
				c.Propagate()
			}
			c.OK()
			return
		}
		o.ExpireAt = ttl
	}
	if old != nil {
		// Redis deletes the old value and adds the new one (dbAdd).
		c.notify(notifyNew, "new", argv[1])
	}
	db.Set(argv[1], o)
	c.notify(notifyGeneric, "restore", argv[1])
	if db.Access.LFU && freq >= 0 {
		db.SetFreq(o, freq)
	} else if !db.Access.LFU && idle >= 0 {
		db.SetIdle(o, idle)
	}
	c.s.dirty++
	if o.ExpireAt != 0 && !absttl {
		// As Redis: the relative TTL becomes absolute, ABSTTL is appended,
		// every other argument goes as the client sent it.
		args := append(append([][]byte(nil), argv...), []byte("ABSTTL"))
		args[2] = itob(o.ExpireAt)
		c.Propagate(args...)
	}
	c.OK()
}

func cmdObject(c *Client, argv [][]byte) {
	sub := strings.ToUpper(string(argv[1]))
	if sub == "HELP" && len(argv) == 2 {
		helpReply(c, "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
			"ENCODING <key>",
			"    Return the kind of internal representation used in order to store the value",
			"    associated with a <key>.",
			"FREQ <key>",
			"    Return the access frequency index of the <key>. The returned integer is",
			"    proportional to the logarithm of the recent access frequency of the key.",
			"IDLETIME <key>",
			"    Return the idle time of the <key>, that is the approximated number of",
			"    seconds elapsed since the last access to the key.",
			"REFCOUNT <key>",
			"    Return the number of references of the value associated with the specified",
			"    <key>.",
			"HELP",
			"    Prints this help.")
		return
	}
	if len(argv) != 3 {
		switch sub {
		case "ENCODING", "FREQ", "IDLETIME", "REFCOUNT":
			c.Error("ERR wrong number of arguments for 'object|" + strings.ToLower(sub) + "' command")
		default:
			c.Error("ERR unknown subcommand '\" + trunc(argv[1], 128) + \"'. Try OBJECT HELP.")
		}
		return
	}
	o := c.kv().Peek(argv[2])
	switch sub {
	case "ENCODING", "FREQ", "IDLETIME", "REFCOUNT":
	default:
		c.Error("ERR unknown subcommand '\" + trunc(argv[1], 128) + \"'. Try OBJECT HELP.")
		return
	}
	if o == nil {
		c.Null()
		return
	}
	switch sub {
	case "ENCODING":
		c.BulkString(o.Encoding())
	case "REFCOUNT":
		c.Int(c.s.refCount(o))
	case "IDLETIME":
		if c.kv().Access.LFU {
			c.Error("ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
			return
		}
		c.Int(c.kv().IdleTime(o))
	case "FREQ":
		if !c.kv().Access.LFU {
			c.Error("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
			return
		}
		c.Int(c.kv().Freq(o))
	}
}

func cmdTouch(c *Client, argv [][]byte) {
	var n int64
	for _, k := range argv[1:] {
		if c.kv().Get(k) != nil {
			n++
		}
	}
	c.Int(n)
}

// parseDBIndex parses a database number as Redis's getIntFromObjectOrReply
// and selectDb do; notInt is the error for a non-integer.
func parseDBIndex(c *Client, b []byte, notInt string) (int, bool) {
	n, ok := parseInt(b)
	if !ok {
		c.Error(notInt)
		return 0, false
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		if notInt == ErrNotInt {
			c.Error("ERR value is out of range, value must between -2147483648 and 2147483647")
		} else {
			c.Error(notInt)
		}
		return 0, false
	}
	if n < 0 || n >= int64(len(c.s.dbs)) {
		c.Error("ERR DB index is out of range")
		return 0, false
	}
	return int(n), true
}

const errSameObject = "ERR source and destination objects are the same"

// COPY source destination [DB destination-db] [REPLACE]
func cmdCopy(c *Client, argv [][]byte) {
	dstDB, replace := c.db, false
	for i := 3; i < len(argv); i++ {
		switch {
		case eq(argv[i], "replace"):
			replace = true
		case eq(argv[i], "db") && i+1 < len(argv):
			n, ok := parseDBIndex(c, argv[i+1], ErrNotInt)
			if !ok {
				return
			}
			dstDB = n
			i++
		default:
			c.Error(ErrSyntax)
			return
		}
	}
	if c.s.cfg.ClusterEnabled && (c.db != 0 || dstDB != 0) {
		c.Error("ERR Copying to another database is not allowed in cluster mode")
		return
	}
	if dstDB == c.db && string(argv[1]) == string(argv[2]) {
		c.Error(errSameObject)
		return
	}
	o := c.kv().Get(argv[1])
	if o == nil {
		c.Int(0)
		return
	}
	dst := c.s.dbs[dstDB]
	if dst.Get(argv[2]) != nil {
		if !replace {
			c.Int(0)
			return
		}
		dst.Delete(argv[2])
	}
	dst.Add(argv[2], o.Clone())
	c.s.dirty++
	c.s.notifyIn(dstDB, notifyGeneric, "copy_to", argv[2])
	if dstDB != c.db && len(c.s.watchers) > 0 {
		c.s.touch(dstDB, argv[2]) // exec touches keys of the current DB only
	}
	c.Int(1)
}

// MOVE key db
func cmdMove(c *Client, argv [][]byte) {
	if c.s.cfg.ClusterEnabled {
		c.Error("ERR MOVE is not allowed in cluster mode")
		return
	}
	dstDB, ok := parseDBIndex(c, argv[2], ErrNotInt)
	if !ok {
		return
	}
	if dstDB == c.db {
		c.Error(errSameObject)
		return
	}
	src, dst := c.kv(), c.s.dbs[dstDB]
	o := src.Get(argv[1])
	if o == nil || dst.Get(argv[1]) != nil {
		c.Int(0)
		return
	}
	src.Remove(o)
	dst.Add(argv[1], o)
	c.s.dirty++
	c.notify(notifyGeneric, "move_from", argv[1])
	c.s.notifyIn(dstDB, notifyGeneric, "move_to", argv[1])
	if len(c.s.watchers) > 0 {
		c.s.touch(dstDB, argv[1])
	}
	c.Int(1)
}

// SWAPDB index1 index2
func cmdSwapDB(c *Client, argv [][]byte) {
	if c.s.cfg.ClusterEnabled {
		c.Error("ERR SWAPDB is not allowed in cluster mode")
		return
	}
	a, ok := parseDBIndex(c, argv[1], "ERR invalid first DB index")
	if !ok {
		return
	}
	b, ok := parseDBIndex(c, argv[2], "ERR invalid second DB index")
	if !ok {
		return
	}
	if a != b {
		// A watcher of a key that exists on either side sees it change.
		for k, ws := range c.s.watchers {
			if (k.db == a || k.db == b) && (c.s.dbs[a].Has(k.key) || c.s.dbs[b].Has(k.key)) {
				for _, w := range ws {
					w.watchBad = true
				}
			}
		}
		c.s.dbs[a].SwapContents(c.s.dbs[b])
		c.s.signalSwapped(a, b)
	}
	c.s.dirty++
	c.OK()
}

// keyspaceCommands are the generic (keyspace) family's specs.
func keyspaceCommands() []*Command {
	return []*Command{
		newCmd("del", -2, wr, 1, -1, 1, cmdDel, "generic"),
		newCmd("unlink", -2, wrf, 1, -1, 1, cmdDel, "generic"),
		newCmd("exists", -2, rof, 1, -1, 1, cmdExists, "generic"),
		newCmd("type", 2, rof, 1, 1, 1, cmdType, "generic"),
		newCmd("touch", -2, rof, 1, -1, 1, cmdTouch, "generic"),
		newCmd("expire", -3, wrf, 1, 1, 1, cmdExpire, "generic"),
		newCmd("pexpire", -3, wrf, 1, 1, 1, cmdPExpire, "generic"),
		newCmd("expireat", -3, wrf, 1, 1, 1, cmdExpireAt, "generic"),
		newCmd("pexpireat", -3, wrf, 1, 1, 1, cmdPExpireAt, "generic"),
		newCmd("expiretime", 2, rof, 1, 1, 1, func(c *Client, a [][]byte) { expireTimeGeneric(c, a, false) }, "generic"),
		newCmd("pexpiretime", 2, rof, 1, 1, 1, func(c *Client, a [][]byte) { expireTimeGeneric(c, a, true) }, "generic"),
		newCmd("ttl", 2, rof, 1, 1, 1, cmdTTL, "generic"),
		newCmd("pttl", 2, rof, 1, 1, 1, cmdPTTL, "generic"),
		newCmd("persist", 2, wrf, 1, 1, 1, cmdPersist, "generic"),
		newCmd("keys", 2, ro, 0, 0, 0, cmdKeys, "generic"),
		newCmd("scan", -2, ro, 0, 0, 0, cmdScan, "generic"),
		newCmd("rename", 3, wr, 1, 2, 1, cmdRename, "generic"),
		newCmd("renamenx", 3, wrf, 1, 2, 1, cmdRenameNX, "generic"),
		newCmd("randomkey", 1, ro, 0, 0, 0, cmdRandomKey, "generic"),
		newCmd("dbsize", 1, rof, 0, 0, 0, cmdDBSize, "server"),
		newCmd("flushall", -1, wr, 0, 0, 0, cmdFlushAll, "server"),
		newCmd("flushdb", -1, wr, 0, 0, 0, cmdFlushDB, "server"),
		newCmd("dump", 2, ro, 1, 1, 1, cmdDump, "generic"),
		newCmd("object", -2, ro, 2, 2, 1, cmdObject, "generic").withSubs(
			sub("help", 2, FlagLoading|FlagStale), sub("freq", 3, ro).withKey(2), sub("idletime", 3, ro).withKey(2),
			sub("encoding", 3, ro).withKey(2), sub("refcount", 3, ro).withKey(2)),
		newCmd("restore", -4, w, 1, 1, 1, cmdRestore, "generic"),
		newCmd("copy", -3, w, 1, 2, 1, cmdCopy, "generic"),
		newCmd("move", 3, wrf, 1, 1, 1, cmdMove, "generic"),
		newCmd("swapdb", 3, wrf, 0, 0, 0, cmdSwapDB, "server"),
		newCmd("restore-asking", -4, w|FlagAsking, 1, 1, 1, cmdRestore, "server"),
	}
}

// refCount is OBJECT REFCOUNT as Redis 7.0 answers it: a string holding
// an integer in [0, 10000) is one of Redis's shared integers (refcount
// INT_MAX) unless maxmemory is set with an LRU or LFU policy
// (tryObjectEncoding, MAXMEMORY_FLAG_NO_SHARED_INTEGERS); every other
// value has the one reference of its key.
func (s *Server) refCount(o *store.Object) int64 {
	if o.Kind != store.KindString || o.Encoding() != "int" {
		return 1
	}
	n, err := strconv.ParseInt(string(o.Str), 10, 64)
	if err != nil || n < 0 || n >= 10000 {
		return 1
	}
	policy := s.configValue("maxmemory-policy")
	if s.configValue("maxmemory") != "0" && (strings.HasSuffix(policy, "-lru") || strings.HasSuffix(policy, "-lfu")) {
		return 1
	}
	return math.MaxInt32
}
