package server

import (
	"strings"
)

func parseFlags(s string) Flag {
	var f Flag
	for _, n := range strings.Fields(s) {
		for i, fn := range flagNames {
			if fn == n {
				f |= 1 << i
			}
		}
	}
	return f
}

func (s *Server) reg(name string, arity int, flags string, first, last, step int, h Handler, group string) *Command {
	cmd := &Command{Name: name, Arity: arity, Flags: parseFlags(flags), FirstKey: first, LastKey: last, Step: step, Handler: h, Group: group}
	s.addCommand(cmd)
	return cmd
}

func sub(name string, arity int, flags string) *Command {
	return &Command{Name: name, Arity: arity, Flags: parseFlags(flags)}
}

// registerCommands fills the command table. Arity, flags and key positions
// follow Redis 7.0's COMMAND output.
func registerCommands(s *Server) {
	const (
		w   = "write denyoom"
		wf  = "write denyoom fast"
		wr  = "write"
		wrf = "write fast"
		ro  = "readonly"
		rof = "readonly fast"
	)
	// strings
	s.reg("get", 2, rof, 1, 1, 1, cmdGet, "string")
	s.reg("set", -3, w, 1, 1, 1, cmdSet, "string")
	s.reg("setnx", 3, wf, 1, 1, 1, cmdSetNX, "string")
	s.reg("setex", 4, w, 1, 1, 1, cmdSetEX, "string")
	s.reg("psetex", 4, w, 1, 1, 1, cmdPSetEX, "string")
	s.reg("getset", 3, wf, 1, 1, 1, cmdGetSet, "string")
	s.reg("getdel", 2, wrf, 1, 1, 1, cmdGetDel, "string")
	s.reg("mget", -2, rof, 1, -1, 1, cmdMGet, "string")
	s.reg("mset", -3, w, 1, -1, 2, cmdMSet, "string")
	s.reg("msetnx", -3, w, 1, -1, 2, cmdMSetNX, "string")
	s.reg("append", 3, wf, 1, 1, 1, cmdAppend, "string")
	s.reg("strlen", 2, rof, 1, 1, 1, cmdStrlen, "string")
	s.reg("getex", -2, wrf, 1, 1, 1, cmdGetEx, "string")
	s.reg("getrange", 4, ro, 1, 1, 1, cmdGetRange, "string")
	s.reg("substr", 4, ro, 1, 1, 1, cmdGetRange, "string")
	s.reg("setrange", 4, w, 1, 1, 1, cmdSetRange, "string")
	s.reg("incr", 2, wf, 1, 1, 1, cmdIncr, "string")
	s.reg("decr", 2, wf, 1, 1, 1, cmdDecr, "string")
	s.reg("incrby", 3, wf, 1, 1, 1, cmdIncrBy, "string")
	s.reg("decrby", 3, wf, 1, 1, 1, cmdDecrBy, "string")
	s.reg("incrbyfloat", 3, wf, 1, 1, 1, cmdIncrByFloat, "string")
	s.reg("lcs", -3, ro, 1, 2, 1, cmdLCS, "string")
	// bitmaps
	s.reg("setbit", 4, w, 1, 1, 1, cmdSetBit, "bitmap")
	s.reg("getbit", 3, rof, 1, 1, 1, cmdGetBit, "bitmap")
	s.reg("bitcount", -2, ro, 1, 1, 1, cmdBitCount, "bitmap")
	s.reg("bitpos", -3, ro, 1, 1, 1, cmdBitPos, "bitmap")
	s.reg("bitop", -4, w, 2, -1, 1, cmdBitOp, "bitmap")
	registerHLL(s)
	registerBitfield(s)
	registerSort(s)
	// generic
	s.reg("del", -2, wr, 1, -1, 1, cmdDel, "generic")
	s.reg("unlink", -2, wrf, 1, -1, 1, cmdDel, "generic")
	s.reg("exists", -2, rof, 1, -1, 1, cmdExists, "generic")
	s.reg("type", 2, rof, 1, 1, 1, cmdType, "generic")
	s.reg("touch", -2, rof, 1, -1, 1, cmdTouch, "generic")
	s.reg("expire", -3, wrf, 1, 1, 1, cmdExpire, "generic")
	s.reg("pexpire", -3, wrf, 1, 1, 1, cmdPExpire, "generic")
	s.reg("expireat", -3, wrf, 1, 1, 1, cmdExpireAt, "generic")
	s.reg("pexpireat", -3, wrf, 1, 1, 1, cmdPExpireAt, "generic")
	s.reg("expiretime", 2, rof, 1, 1, 1, func(c *Client, a [][]byte) { expireTimeGeneric(c, a, false) }, "generic")
	s.reg("pexpiretime", 2, rof, 1, 1, 1, func(c *Client, a [][]byte) { expireTimeGeneric(c, a, true) }, "generic")
	s.reg("ttl", 2, rof, 1, 1, 1, cmdTTL, "generic")
	s.reg("pttl", 2, rof, 1, 1, 1, cmdPTTL, "generic")
	s.reg("persist", 2, wrf, 1, 1, 1, cmdPersist, "generic")
	s.reg("keys", 2, ro, 0, 0, 0, cmdKeys, "generic")
	s.reg("scan", -2, ro, 0, 0, 0, cmdScan, "generic")
	s.reg("rename", 3, wr, 1, 2, 1, cmdRename, "generic")
	s.reg("renamenx", 3, wrf, 1, 2, 1, cmdRenameNX, "generic")
	s.reg("randomkey", 1, ro, 0, 0, 0, cmdRandomKey, "generic")
	s.reg("dbsize", 1, rof, 0, 0, 0, cmdDBSize, "server")
	s.reg("flushall", -1, wr, 0, 0, 0, cmdFlushAll, "server")
	s.reg("flushdb", -1, wr, 0, 0, 0, cmdFlushDB, "server")
	s.reg("dump", 2, ro, 1, 1, 1, cmdDump, "generic")
	s.reg("object", -2, ro, 2, 2, 1, cmdObject, "generic")
	s.reg("restore", -4, w, 1, 1, 1, cmdRestore, "generic")
	s.reg("copy", -3, w, 1, 2, 1, cmdCopy, "generic")
	s.reg("move", 3, wrf, 1, 1, 1, cmdMove, "generic")
	s.reg("swapdb", 3, wrf, 0, 0, 0, cmdSwapDB, "server")
	s.reg("restore-asking", -4, w+" asking", 1, 1, 1, cmdRestore, "server")
	// hashes
	s.reg("hset", -4, wf, 1, 1, 1, cmdHSet, "hash")
	s.reg("hmset", -4, wf, 1, 1, 1, cmdHSet, "hash")
	s.reg("hsetnx", 4, wf, 1, 1, 1, cmdHSetNX, "hash")
	s.reg("hget", 3, rof, 1, 1, 1, cmdHGet, "hash")
	s.reg("hmget", -3, rof, 1, 1, 1, cmdHMGet, "hash")
	s.reg("hgetall", 2, ro, 1, 1, 1, cmdHGetAll, "hash")
	s.reg("hdel", -3, wrf, 1, 1, 1, cmdHDel, "hash")
	s.reg("hincrby", 4, wf, 1, 1, 1, cmdHIncrBy, "hash")
	s.reg("hincrbyfloat", 4, wf, 1, 1, 1, cmdHIncrByFloat, "hash")
	s.reg("hlen", 2, rof, 1, 1, 1, cmdHLen, "hash")
	s.reg("hstrlen", 3, rof, 1, 1, 1, cmdHStrlen, "hash")
	s.reg("hexists", 3, rof, 1, 1, 1, cmdHExists, "hash")
	s.reg("hkeys", 2, ro, 1, 1, 1, cmdHKeys, "hash")
	s.reg("hvals", 2, ro, 1, 1, 1, cmdHVals, "hash")
	s.reg("hrandfield", -2, ro, 1, 1, 1, cmdHRandField, "hash")
	s.reg("hscan", -3, ro, 1, 1, 1, cmdHScan, "hash")
	// sets
	s.reg("sadd", -3, wf, 1, 1, 1, cmdSAdd, "set")
	s.reg("srem", -3, wrf, 1, 1, 1, cmdSRem, "set")
	s.reg("smembers", 2, ro, 1, 1, 1, cmdSMembers, "set")
	s.reg("sismember", 3, rof, 1, 1, 1, cmdSIsMember, "set")
	s.reg("smismember", -3, rof, 1, 1, 1, cmdSMIsMember, "set")
	s.reg("scard", 2, rof, 1, 1, 1, cmdSCard, "set")
	s.reg("spop", -2, wrf, 1, 1, 1, cmdSPop, "set")
	s.reg("sinter", -2, ro, 1, -1, 1, cmdSetAlgebra, "set")
	s.reg("sunion", -2, ro, 1, -1, 1, cmdSetAlgebra, "set")
	s.reg("sdiff", -2, ro, 1, -1, 1, cmdSetAlgebra, "set")
	s.reg("sinterstore", -3, w, 1, -1, 1, cmdSetAlgebraStore, "set")
	s.reg("sunionstore", -3, w, 1, -1, 1, cmdSetAlgebraStore, "set")
	s.reg("sdiffstore", -3, w, 1, -1, 1, cmdSetAlgebraStore, "set")
	s.reg("sintercard", -3, ro+" movablekeys", 0, 0, 0, cmdSInterCard, "set").Keys = numKeysAt(1)
	s.reg("smove", 4, wrf, 1, 2, 1, cmdSMove, "set")
	s.reg("srandmember", -2, ro, 1, 1, 1, cmdSRandMember, "set")
	s.reg("sscan", -3, ro, 1, 1, 1, cmdSScan, "set")
	// lists
	s.reg("lpush", -3, wf, 1, 1, 1, cmdLPush, "list")
	s.reg("rpush", -3, wf, 1, 1, 1, cmdRPush, "list")
	s.reg("lpop", -2, wrf, 1, 1, 1, cmdLPop, "list")
	s.reg("rpop", -2, wrf, 1, 1, 1, cmdRPop, "list")
	s.reg("lrange", 4, ro, 1, 1, 1, cmdLRange, "list")
	s.reg("llen", 2, rof, 1, 1, 1, cmdLLen, "list")
	s.reg("lindex", 3, ro, 1, 1, 1, cmdLIndex, "list")
	s.reg("lpushx", -3, wf, 1, 1, 1, func(c *Client, a [][]byte) { pushxGeneric(c, a, true) }, "list")
	s.reg("rpushx", -3, wf, 1, 1, 1, func(c *Client, a [][]byte) { pushxGeneric(c, a, false) }, "list")
	s.reg("lset", 4, w, 1, 1, 1, cmdLSet, "list")
	s.reg("lrem", 4, wr, 1, 1, 1, cmdLRem, "list")
	s.reg("ltrim", 4, wr, 1, 1, 1, cmdLTrim, "list")
	s.reg("lpos", -3, ro, 1, 1, 1, cmdLPos, "list")
	s.reg("linsert", 5, w, 1, 1, 1, cmdLInsert, "list")
	s.reg("lmove", 5, w, 1, 2, 1, cmdLMove, "list")
	s.reg("rpoplpush", 3, w, 1, 2, 1, cmdLMove, "list")
	// sorted sets
	s.reg("zadd", -4, wf, 1, 1, 1, cmdZAdd, "sorted-set")
	s.reg("zincrby", 4, wf, 1, 1, 1, cmdZIncrBy, "sorted-set")
	s.reg("zscore", 3, rof, 1, 1, 1, cmdZScore, "sorted-set")
	s.reg("zcard", 2, rof, 1, 1, 1, cmdZCard, "sorted-set")
	s.reg("zcount", 4, rof, 1, 1, 1, cmdZCount, "sorted-set")
	s.reg("zrem", -3, wrf, 1, 1, 1, cmdZRem, "sorted-set")
	s.reg("zpopmin", -2, wrf, 1, 1, 1, cmdZPop, "sorted-set")
	s.reg("zpopmax", -2, wrf, 1, 1, 1, cmdZPop, "sorted-set")
	s.reg("zrank", 3, rof, 1, 1, 1, cmdZRank, "sorted-set")
	s.reg("zrevrank", 3, rof, 1, 1, 1, cmdZRank, "sorted-set")
	s.reg("zrange", -4, ro, 1, 1, 1, cmdZRange, "sorted-set")
	s.reg("zrevrange", -4, ro, 1, 1, 1, cmdZRange, "sorted-set")
	s.reg("zrangebyscore", -4, ro, 1, 1, 1, cmdZRange, "sorted-set")
	s.reg("zrevrangebyscore", -4, ro, 1, 1, 1, cmdZRange, "sorted-set")
	s.reg("zrangebylex", -4, ro, 1, 1, 1, cmdZRange, "sorted-set")
	s.reg("zrevrangebylex", -4, ro, 1, 1, 1, cmdZRange, "sorted-set")
	s.reg("zrangestore", -5, w, 1, 2, 1, cmdZRange, "sorted-set")
	s.reg("zlexcount", 4, rof, 1, 1, 1, cmdZLexCount, "sorted-set")
	s.reg("zremrangebyrank", 4, wr, 1, 1, 1, cmdZRemRange, "sorted-set")
	s.reg("zremrangebyscore", 4, wr, 1, 1, 1, cmdZRemRange, "sorted-set")
	s.reg("zremrangebylex", 4, wr, 1, 1, 1, cmdZRemRange, "sorted-set")
	s.reg("zmscore", -3, rof, 1, 1, 1, cmdZMScore, "sorted-set")
	s.reg("zrandmember", -2, ro, 1, 1, 1, cmdZRandMember, "sorted-set")
	for _, n := range []string{"zunion", "zinter", "zdiff"} {
		s.reg(n, -3, ro+" movablekeys", 0, 0, 0, cmdZSetAlgebra, "sorted-set").Keys = numKeysAt(1)
		store := s.reg(n+"store", -4, w+" movablekeys", 1, 1, 1, cmdZSetAlgebra, "sorted-set")
		store.Keys = func(argv [][]byte) []int { return append([]int{1}, numKeysAt(2)(argv)...) }
	}
	s.reg("zscan", -3, ro, 1, 1, 1, cmdZScan, "sorted-set")
	s.reg("zintercard", -3, ro+" movablekeys", 0, 0, 0, cmdZSetAlgebra, "sorted-set").Keys = numKeysAt(1)
	// transactions
	s.reg("multi", 1, "noscript loading stale fast allow_busy", 0, 0, 0, cmdMulti, "transactions")
	s.reg("exec", 1, "noscript loading stale skip_slowlog", 0, 0, 0, cmdExec, "transactions")
	s.reg("discard", 1, "noscript loading stale fast allow_busy", 0, 0, 0, cmdDiscard, "transactions")
	s.reg("watch", -2, "noscript loading stale fast allow_busy", 1, -1, 1, cmdWatch, "transactions")
	s.reg("unwatch", 1, "noscript loading stale fast allow_busy", 0, 0, 0, cmdUnwatch, "transactions")
	// scripting
	evalKeys := func(argv [][]byte) []int {
		if len(argv) < 3 {
			return nil
		}
		n, ok := parseInt(argv[2])
		if !ok || n <= 0 || n > int64(len(argv)-3) {
			return nil
		}
		out := make([]int, n)
		for i := range out {
			out[i] = 3 + i
		}
		return out
	}
	for _, n := range []string{"eval", "evalsha", "eval_ro", "evalsha_ro"} {
		h := cmdEval
		if strings.HasPrefix(n, "evalsha") {
			h = cmdEvalSHA
		}
		flags := "noscript stale skip_monitor no_mandatory_keys movablekeys"
		if strings.HasSuffix(n, "_ro") {
			flags += " readonly"
		}
		cmd := s.reg(n, -3, flags, 0, 0, 0, h, "scripting")
		cmd.Keys = evalKeys
	}
	s.reg("script", -2, "noscript", 0, 0, 0, cmdScript, "scripting").Subcommands = []*Command{
		sub("load", 3, "noscript stale"), sub("exists", -3, "noscript stale"), sub("flush", -2, "noscript"),
		sub("kill", 2, "noscript allow_busy"), sub("help", 2, "loading stale"),
	}
	// connection / server
	s.reg("ping", -1, "fast", 0, 0, 0, cmdPing, "connection")
	s.reg("echo", 2, "fast loading stale", 0, 0, 0, cmdEcho, "connection")
	s.reg("select", 2, "loading stale fast", 0, 0, 0, cmdSelect, "connection")
	s.reg("quit", -1, "noscript loading stale fast no_auth allow_busy", 0, 0, 0, cmdQuit, "connection")
	s.reg("monitor", 1, "admin noscript loading stale", 0, 0, 0, cmdMonitor, "server")
	s.reg("reset", 1, "noscript loading stale fast no_auth allow_busy", 0, 0, 0, cmdReset, "connection")
	s.reg("auth", -2, "noscript loading stale fast no_auth allow_busy", 0, 0, 0, cmdAuth, "connection")
	s.reg("hello", -1, "noscript loading stale fast no_auth allow_busy", 0, 0, 0, cmdHello, "connection")
	s.reg("time", 1, "loading stale fast", 0, 0, 0, cmdTime, "server")
	s.reg("lastsave", 1, "loading stale fast", 0, 0, 0, cmdLastSave, "server")
	s.reg("save", 1, "admin noscript no_async_loading no_multi", 0, 0, 0, cmdSave, "server")
	s.reg("bgsave", -1, "admin noscript no_async_loading", 0, 0, 0, cmdBgSave, "server")
	s.reg("bgrewriteaof", 1, "admin noscript no_async_loading", 0, 0, 0, cmdBgRewriteAOF, "server")
	s.reg("shutdown", -1, "admin noscript loading stale no_multi allow_busy", 0, 0, 0, cmdShutdown, "server")
	s.reg("debug", -2, "admin noscript loading stale", 0, 0, 0, cmdDebug, "server").Protected = true
	s.reg("info", -1, "loading stale", 0, 0, 0, cmdInfo, "server")
	s.reg("redline", -2, "admin noscript loading stale", 0, 0, 0, cmdRedline, "server")
	s.reg("config", -2, "", 0, 0, 0, cmdConfig, "server").Subcommands = []*Command{
		sub("get", -3, "admin noscript loading stale"), sub("set", -4, "admin noscript loading stale"),
		sub("resetstat", 2, "admin noscript loading stale"), sub("rewrite", 2, "admin noscript loading stale"),
		sub("help", 2, "loading stale"),
	}
	s.reg("client", -2, "", 0, 0, 0, cmdClient, "connection").Subcommands = []*Command{
		sub("id", 2, "noscript loading stale"), sub("setname", 3, "noscript loading stale"),
		sub("getname", 2, "noscript loading stale"), sub("list", -2, "admin noscript loading stale"),
		sub("kill", -3, "admin noscript loading stale"), sub("pause", -3, "admin noscript loading stale"),
		sub("unpause", 2, "admin noscript loading stale"), sub("setinfo", 4, "noscript loading stale"),
		sub("info", 2, "noscript loading stale"), sub("no-evict", 3, "admin noscript loading stale"),
		sub("reply", 3, "noscript loading stale"), sub("help", 2, "loading stale"),
		sub("tracking", -3, "noscript loading stale"), sub("caching", 3, "noscript loading stale"),
		sub("getredir", 2, "noscript loading stale"), sub("trackinginfo", 2, "noscript loading stale"),
	}
	s.reg("command", -1, "loading stale", 0, 0, 0, cmdCommand, "server").Subcommands = []*Command{
		sub("count", 2, "loading stale"), sub("info", -2, "loading stale"), sub("docs", -2, "loading stale"),
		sub("list", -2, "loading stale"), sub("getkeys", -4, "loading stale"), sub("help", 2, "loading stale"),
		sub("getkeysandflags", -4, "loading stale"),
	}
}
