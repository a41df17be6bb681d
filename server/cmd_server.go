package server

import (
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redline-dev/redline/server/config"
)

func cmdPing(c *Client, argv [][]byte) {
	if len(argv) > 2 {
		c.Error(ErrArity("ping"))
		return
	}
	if c.inPubSubContext() {
		// Redis answers a subscribed RESP2 client ["pong", <arg>|""].
		c.Array(2)
		c.BulkString("pong")
		if len(argv) == 2 {
			c.Bulk(argv[1])
		} else {
			c.BulkString("")
		}
		return
	}
	if len(argv) == 2 {
		c.Bulk(argv[1])
		return
	}
	c.Simple("PONG")
}

func cmdEcho(c *Client, argv [][]byte) { c.Bulk(argv[1]) }

func cmdSelect(c *Client, argv [][]byte) {
	n, ok := parseInt(argv[1])
	if !ok {
		c.Error(ErrNotInt)
		return
	}
	if c.s.cfg.ClusterEnabled && n != 0 {
		c.Error("ERR SELECT is not allowed in cluster mode")
		return
	}
	if n < 0 || n >= int64(len(c.s.dbs)) {
		c.Error("ERR DB index is out of range")
		return
	}
	c.db = int(n)
	c.OK()
}

func cmdQuit(c *Client, argv [][]byte) {
	c.OK()
	c.closeNow = true
}

func cmdReset(c *Client, argv [][]byte) {
	c.resetMulti()
	c.s.unwatchAll(c)
	c.s.stopMonitor(c)
	c.s.unsubscribeAll(c)
	c.db = 0
	c.proto = 2
	c.name = ""
	c.Asking, c.ReadOnly = false, false
	c.resetAuth()
	c.Simple("RESET")
}

func cmdAuth(c *Client, argv [][]byte) {
	if len(argv) > 3 {
		c.Error(ErrSyntax)
		return
	}
	user, pass := "default", argv[1]
	if len(argv) == 3 {
		user, pass = string(argv[1]), argv[2]
	} else if c.s.acl.Default.NoPass() {
		c.Error("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
		return
	}
	if !c.authenticate(user, pass, argv[0]) {
		c.Error(ErrWrongPass)
		return
	}
	c.OK()
}

func cmdHello(c *Client, argv [][]byte) {
	proto := c.proto
	i := 1
	if len(argv) >= 2 {
		v, ok := parseInt(argv[1])
		if !ok {
			c.Error("ERR Protocol version is not an integer or out of range")
			return
		}
		if v < 2 || v > 3 {
			c.Error("NOPROTO unsupported protocol version")
			return
		}
		proto = int(v)
		i = 2
	}
	var name []byte
	setName := false
	for ; i < len(argv); i++ {
		switch {
		case eq(argv[i], "auth") && i+2 < len(argv):
			if !c.authenticate(string(argv[i+1]), argv[i+2], argv[0]) {
				c.Error(ErrWrongPass)
				return
			}
			i += 2
		case eq(argv[i], "setname") && i+1 < len(argv):
			if !validClientName(argv[i+1]) {
				c.Error("ERR Client names cannot contain spaces, newlines or special characters.")
				return
			}
			name, setName = argv[i+1], true
			i++
		default:
			c.Error("ERR Syntax error in HELLO option '" + cstr(argv[i]) + "'")
			return
		}
	}
	if c.authRequired() {
		c.Error("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
		return
	}
	if setName {
		c.name = string(name)
	}
	c.proto = proto
	mode := "standalone"
	if c.s.cfg.ClusterEnabled {
		mode = "cluster"
	}
	c.Map(7)
	c.BulkString("server")
	c.BulkString("redis")
	c.BulkString("version")
	c.BulkString(config.Version)
	c.BulkString("proto")
	c.Int(int64(proto))
	c.BulkString("id")
	c.Int(c.id)
	c.BulkString("mode")
	c.BulkString(mode)
	c.BulkString("role")
	c.BulkString(c.s.role())
	c.BulkString("modules")
	c.Array(0)
}

func (s *Server) role() string {
	if s.cfg.ReplicaOf != "" {
		return "replica"
	}
	return "master"
}

func cmdTime(c *Client, argv [][]byte) {
	us := c.s.clock.NowUs()
	c.Array(2)
	c.BulkString(strconv.FormatInt(us/1e6, 10))
	c.BulkString(strconv.FormatInt(us%1e6, 10))
}

func cmdBgRewriteAOF(c *Client, argv [][]byte) {
	if c.s.aof == nil {
		// Redis rewrites even with appendonly off; we have nothing to write.
		c.Simple("Background append only file rewriting started")
		return
	}
	c.s.aof.pending = true
	if c.s.persist.bg != nil {
		// As Redis while its RDB child runs: the rewrite waits for it
		// (the cron rewrites once the background save is collected).
		c.Simple("Background append only file rewriting scheduled")
		return
	}
	c.Simple("Background append only file rewriting started")
}

// cmdRedline implements admin commands of this server:
// REDLINE CLOCK-OFFSET [<milliseconds>] reads or sets the clock offset.
func cmdRedline(c *Client, argv [][]byte) {
	switch strings.ToUpper(string(argv[1])) {
	case "CLOCK-OFFSET":
		if len(argv) == 2 {
			c.Int(c.s.clock.Offset())
			return
		}
		if len(argv) != 3 {
			c.Error("ERR wrong number of arguments for 'redline|clock-offset' command")
			return
		}
		ms, ok := parseInt(argv[2])
		if !ok {
			c.Error(ErrNotInt)
			return
		}
		c.s.clock.SetOffset(ms)
		c.s.Logf('*', "Clock offset set to %d ms", ms)
		c.OK()
	default:
		c.Error("ERR unknown subcommand '\" + trunc(argv[1], 128) + \"'. Try REDLINE CLOCK-OFFSET.")
	}
}

// CONFIG

func cmdConfig(c *Client, argv [][]byte) {
	cfg := c.s.cfg
	switch strings.ToUpper(string(argv[1])) {
	case "GET":
		seen := map[string]bool{}
		var out [][2]string
		for _, p := range argv[2:] {
			for _, kv := range cfg.Get(strings.ToLower(string(p)), func(p, n string) bool { return GlobMatch([]byte(p), []byte(n)) }) {
				if !seen[kv[0]] {
					seen[kv[0]] = true
					out = append(out, kv)
				}
			}
		}
		c.Map(len(out))
		for _, kv := range out {
			c.BulkString(kv[0])
			c.BulkString(kv[1])
		}
	case "SET":
		if len(argv)%2 != 0 {
			c.Error(ErrSyntax)
			return
		}
		var pairs [][2]string
		for i := 2; i < len(argv); i += 2 {
			pairs = append(pairs, [2]string{strings.ToLower(string(argv[i])), string(argv[i+1])})
		}
		names, err := cfg.SetMany(pairs, c.s.protectedAllowed(c, "enable-protected-configs"))
		if err != nil {
			c.Error("ERR " + c.s.portSetError(err, pairs).Error())
			return
		}
		for _, name := range names {
			c.s.configChanged(name)
		}
		c.OK()
	case "RESETSTAT":
		c.s.stats = stats{sampleTime: time.Now()}
		for _, cmd := range c.s.commands {
			cmd.calls, cmd.usec, cmd.fails, cmd.rejected = 0, 0, 0, 0
		}
		c.s.resetIntroStats()
		c.OK()
	case "REWRITE":
		if err := c.s.cfg.Rewrite(); err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "ERR ") {
				msg = "ERR Rewriting config file: " + msg
			}
			c.Error(msg)
			return
		}
		c.OK()
	case "HELP":
		c.Array(1)
		c.Simple("CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are: GET, SET, RESETSTAT, REWRITE, HELP.")
	default:
		c.Error("ERR unknown subcommand '\" + trunc(argv[1], 128) + \"'. Try CONFIG HELP.")
	}
}

// configChanged applies runtime changes of directives that need action.
func (s *Server) configChanged(name string) {
	switch name {
	case "maxmemory-policy", "lfu-log-factor", "lfu-decay-time":
		s.applyAccessPolicy()
	case "slowlog-log-slower-than", "slowlog-max-len", "latency-monitor-threshold", "latency-tracking":
		s.applyIntrospection()
	case "hash-max-listpack-entries", "hash-max-listpack-value", "set-max-intset-entries",
		"zset-max-listpack-entries", "zset-max-listpack-value", "list-max-listpack-size",
		"stream-node-max-entries", "stream-node-max-bytes":
		s.applyLimits()
	case "appendonly":
		if s.cfg.AppendOnly && s.aof == nil {
			w, err := openAOFWriter(s)
			if err != nil {
				s.Logf('#', "Can't open the append-only file: %v", err)
				return
			}
			s.aof = w
			s.prop.started = false
			if err := s.rewriteAOF(); err != nil {
				s.Logf('#', "AOF rewrite failed: %v", err)
			}
		} else if !s.cfg.AppendOnly && s.aof != nil {
			s.closeAOF()
		}
	case "requirepass":
		s.acl.UpdateDefaultPassword(s.cfg.RequirePass)
		s.refreshProtected()
	case "protected-mode":
		s.refreshProtected()
	case "client-query-buffer-limit":
		s.setQueryBufLimit()
	case "acl-pubsub-default", "acllog-max-len":
		s.applyACLConfig()
	case "proto-max-bulk-len":
		for _, c := range s.clientList() {
			c.parser.MaxBulk = s.cfg.ProtoMaxBulkLen
		}
	}
	if strings.HasPrefix(name, "maxmemory") {
		s.setMaxmemory()
	}
	if name == "tracking-table-max-keys" && s.trk != nil {
		s.trk.maxKeys = s.configInt(name, 1000000)
	}
	if (strings.HasPrefix(name, "cluster-") || strings.HasPrefix(name, "repl-ping-")) && s.inCluster() {
		s.cl.node.Reconfigure(clusterConfig(s.cfg))
		s.applyBusConfig()
		s.cl.pending = true
	}
}

// CLIENT

// INFO

func cmdInfo(c *Client, argv [][]byte) {
	c.Verbatim(c.s.info(argv[1:]))
}

func (s *Server) info(args [][]byte) string {
	defaults := []string{"server", "clients", "memory", "persistence", "stats", "replication", "cpu", "modules", "errorstats", "cluster", "keyspace"}
	want := map[string]bool{}
	if len(args) == 0 {
		for _, d := range defaults {
			want[d] = true
		}
	}
	for _, a := range args {
		n := strings.ToLower(string(a))
		switch n {
		case "all", "everything", "default":
			for _, d := range append(defaults, "commandstats") {
				if n != "default" || d != "commandstats" {
					want[d] = true
				}
			}
		default:
			want[n] = true
		}
	}
	var b strings.Builder
	section := func(name, title string, body func() string) {
		if !want[name] {
			return
		}
		text := body()
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		b.WriteString("# " + title + "\r\n")
		b.WriteString(text)
	}
	kv := func(sb *strings.Builder, k string, v any) { fmt.Fprintf(sb, "%s:%v\r\n", k, v) }
	now := time.Now()
	section("server", "Server", func() string {
		var sb strings.Builder
		mode := "standalone"
		if s.cfg.ClusterEnabled {
			mode = "cluster"
		}
		kv(&sb, "redis_version", config.Version)
		kv(&sb, "redis_git_sha1", "00000000")
		kv(&sb, "redis_git_dirty", 0)
		kv(&sb, "redis_build_id", "redline")
		kv(&sb, "redis_mode", mode)
		kv(&sb, "os", runtime.GOOS+" "+runtime.GOARCH)
		kv(&sb, "arch_bits", 64)
		kv(&sb, "monotonic_clock", "POSIX clock_gettime")
		kv(&sb, "multiplexing_api", "epoll")
		kv(&sb, "gcc_version", "0.0.0")
		kv(&sb, "go_version", runtime.Version())
		kv(&sb, "process_id", os.Getpid())
		kv(&sb, "process_supervised", "no")
		kv(&sb, "run_id", s.runID)
		kv(&sb, "tcp_port", s.cfg.Port)
		kv(&sb, "server_time_usec", s.clock.NowUs())
		kv(&sb, "uptime_in_seconds", int64(now.Sub(s.started).Seconds()))
		kv(&sb, "uptime_in_days", int64(now.Sub(s.started).Hours()/24))
		kv(&sb, "hz", s.cfg.Hz)
		kv(&sb, "configured_hz", s.cfg.Hz)
		kv(&sb, "lru_clock", (s.clock.NowMs()/1000)&(1<<24-1))
		exe, _ := os.Executable()
		kv(&sb, "executable", exe)
		kv(&sb, "config_file", "")
		kv(&sb, "io_threads_active", 0)
		kv(&sb, "redline_clock_offset_ms", s.clock.Offset())
		return sb.String()
	})
	section("clients", "Clients", func() string {
		var sb strings.Builder
		kv(&sb, "connected_clients", s.nclients.Load())
		kv(&sb, "cluster_connections", 0)
		kv(&sb, "maxclients", s.cfg.MaxClients)
		kv(&sb, "client_recent_max_input_buffer", 0)
		kv(&sb, "client_recent_max_output_buffer", 0)
		kv(&sb, "blocked_clients", s.blk.n+s.pausedClients)
		kv(&sb, "tracking_clients", s.trackingClients())
		kv(&sb, "clients_in_timeout_table", 0)
		return sb.String()
	})
	section("memory", "Memory", func() string {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		var sb strings.Builder
		s.memoryInfo(&sb, &ms)
		scripts, funcs, libs := s.scripts.counts()
		kv(&sb, "number_of_cached_scripts", scripts)
		kv(&sb, "number_of_functions", funcs)
		kv(&sb, "number_of_libraries", libs)
		out, in, peak := s.asmMemoryInfo()
		kv(&sb, "mem_cluster_slot_migration_output_buffer", out)
		kv(&sb, "mem_cluster_slot_migration_input_buffer", in)
		kv(&sb, "mem_cluster_slot_migration_input_buffer_peak", peak)
		kv(&sb, "mem_allocator", "go")
		return sb.String()
	})
	section("persistence", "Persistence", func() string {
		var sb strings.Builder
		s.persistInfo(&sb) // persist.go
		aofOn := 0
		var size, base, rewrites int64
		status := "ok"
		if s.aof != nil {
			aofOn = 1
			size, base, rewrites = s.aof.w.Size(), s.aof.baseSize, s.aof.rewrites
			if s.aof.diskError() != nil {
				status = "err"
			}
		}
		kv(&sb, "aof_enabled", aofOn)
		kv(&sb, "aof_rewrite_in_progress", 0)
		kv(&sb, "aof_rewrite_scheduled", 0)
		kv(&sb, "aof_last_bgrewrite_status", "ok")
		kv(&sb, "aof_rewrites", rewrites)
		kv(&sb, "aof_last_write_status", status)
		if aofOn == 1 {
			kv(&sb, "aof_current_size", size)
			kv(&sb, "aof_base_size", base)
			kv(&sb, "aof_buffer_length", 0)
		}
		return sb.String()
	})
	section("stats", "Stats", func() string {
		var sb strings.Builder
		kv(&sb, "total_connections_received", atomic.LoadInt64(&s.stats.connections))
		kv(&sb, "total_commands_processed", s.stats.commands)
		kv(&sb, "instantaneous_ops_per_sec", s.stats.opsPerSec)
		kv(&sb, "total_net_input_bytes", atomic.LoadInt64(&s.stats.netIn))
		kv(&sb, "total_net_output_bytes", atomic.LoadInt64(&s.stats.netOut))
		kv(&sb, "rejected_connections", atomic.LoadInt64(&s.stats.rejectedConns))
		var expired int64
		for _, db := range s.dbs {
			expired += db.ExpiredKeys
		}
		kv(&sb, "expired_keys", expired)
		kv(&sb, "evicted_keys", s.oom.evicted)
		kv(&sb, "evicted_clients", 0)
		kv(&sb, "keyspace_hits", s.stats.keyspaceHits)
		kv(&sb, "keyspace_misses", s.stats.keyspaceMisses)
		var channels, patterns, shard int
		if s.ps != nil {
			channels, patterns, shard = len(s.ps.channels), len(s.ps.patterns), len(s.ps.shard)
		}
		kv(&sb, "pubsub_channels", channels)
		kv(&sb, "pubsub_patterns", patterns)
		kv(&sb, "pubsubshard_channels", shard)
		kv(&sb, "migrate_cached_sockets", s.mig.cached())
		tk, ti, tp := s.trackingTotals()
		kv(&sb, "tracking_total_keys", tk)
		kv(&sb, "tracking_total_items", ti)
		kv(&sb, "tracking_total_prefixes", tp)
		kv(&sb, "total_error_replies", s.stats.errorReplies)
		kv(&sb, "dump_payload_sanitizations", 0)
		return sb.String()
	})
	section("replication", "Replication", s.repl.info)
	section("cpu", "CPU", func() string {
		u, sys := cpuTimes()
		var sb strings.Builder
		kv(&sb, "used_cpu_sys", fmt.Sprintf("%.6f", sys))
		kv(&sb, "used_cpu_user", fmt.Sprintf("%.6f", u))
		return sb.String()
	})
	section("modules", "Modules", func() string { return "" })
	section("errorstats", "Errorstats", s.errorstatsInfo)
	section("commandstats", "Commandstats", func() string {
		var sb strings.Builder
		for _, cmd := range s.commandList() {
			if cmd.calls == 0 && cmd.rejected == 0 && cmd.fails == 0 {
				continue
			}
			per := 0.0
			if cmd.calls > 0 {
				per = float64(cmd.usec) / float64(cmd.calls)
			}
			fmt.Fprintf(&sb, "cmdstat_%s:calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d\r\n", cmd.Name, cmd.calls, cmd.usec, per, cmd.rejected, cmd.fails)
		}
		return sb.String()
	})
	section("cluster", "Cluster", func() string {
		if s.cfg.ClusterEnabled {
			return "cluster_enabled:1\r\n"
		}
		return "cluster_enabled:0\r\n"
	})
	section("keyspace", "Keyspace", func() string {
		var sb strings.Builder
		for i, db := range s.dbs {
			if db.Len() == 0 {
				continue
			}
			fmt.Fprintf(&sb, "db%d:keys=%d,expires=%d,avg_ttl=%d\r\n", i, db.Len(), db.VolatileLen(), db.AvgTTL())
		}
		return sb.String()
	})
	return b.String()
}

// serverCommands are the connection and server commands' specs.
func serverCommands() []*Command {
	return []*Command{
		newCmd("ping", -1, FlagFast, 0, 0, 0, cmdPing, "connection"),
		newCmd("echo", 2, FlagFast|FlagLoading|FlagStale, 0, 0, 0, cmdEcho, "connection"),
		newCmd("select", 2, FlagLoading|FlagStale|FlagFast, 0, 0, 0, cmdSelect, "connection"),
		newCmd("quit", -1, FlagNoScript|FlagLoading|FlagStale|FlagFast|FlagNoAuth|FlagAllowBusy, 0, 0, 0, cmdQuit, "connection"),
		newCmd("reset", 1, FlagNoScript|FlagLoading|FlagStale|FlagFast|FlagNoAuth|FlagAllowBusy, 0, 0, 0, cmdReset, "connection"),
		newCmd("auth", -2, FlagNoScript|FlagLoading|FlagStale|FlagFast|FlagNoAuth|FlagAllowBusy, 0, 0, 0, cmdAuth, "connection"),
		newCmd("hello", -1, FlagNoScript|FlagLoading|FlagStale|FlagFast|FlagNoAuth|FlagAllowBusy, 0, 0, 0, cmdHello, "connection"),
		newCmd("time", 1, FlagLoading|FlagStale|FlagFast, 0, 0, 0, cmdTime, "server"),
		newCmd("lastsave", 1, FlagLoading|FlagStale|FlagFast, 0, 0, 0, cmdLastSave, "server"),
		newCmd("save", 1, FlagAdmin|FlagNoScript|FlagNoAsyncLoading|FlagNoMulti, 0, 0, 0, cmdSave, "server"),
		newCmd("bgsave", -1, FlagAdmin|FlagNoScript|FlagNoAsyncLoading, 0, 0, 0, cmdBgSave, "server"),
		newCmd("bgrewriteaof", 1, FlagAdmin|FlagNoScript|FlagNoAsyncLoading, 0, 0, 0, cmdBgRewriteAOF, "server"),
		newCmd("shutdown", -1, FlagAdmin|FlagNoScript|FlagLoading|FlagStale|FlagNoMulti|FlagAllowBusy, 0, 0, 0, cmdShutdown, "server"),
		newCmd("info", -1, FlagLoading|FlagStale, 0, 0, 0, cmdInfo, "server"),
		newCmd("redline", -2, FlagAdmin|FlagNoScript|FlagLoading|FlagStale, 0, 0, 0, cmdRedline, "server"),
		newCmd("config", -2, 0, 0, 0, 0, cmdConfig, "server").withSubs(
			sub("get", -3, FlagAdmin|FlagNoScript|FlagLoading|FlagStale), sub("set", -4, FlagAdmin|FlagNoScript|FlagLoading|FlagStale),
			sub("resetstat", 2, FlagAdmin|FlagNoScript|FlagLoading|FlagStale), sub("rewrite", 2, FlagAdmin|FlagNoScript|FlagLoading|FlagStale),
			sub("help", 2, FlagLoading|FlagStale)),
	}
}

// portSetError is CONFIG SET's error for a new port: the listener is bound
// at start here, so a port Redis would move to is refused as immutable;
// one Redis could not listen on fails as Redis's updatePort does (unit/
// introspection's "CONFIG SET rollback on apply error" holds it).
func (s *Server) portSetError(err error, pairs [][2]string) error {
	var se *config.SetError
	if !errors.As(err, &se) || se.Name != "port" || se.Unknown || len(s.listeners) == 0 {
		return err
	}
	host := ""
	if a, ok := s.Addr().(*net.TCPAddr); ok && !a.IP.IsUnspecified() {
		host = a.IP.String()
	}
	for _, p := range pairs {
		if n, perr := strconv.Atoi(p[1]); p[0] == "port" && perr == nil && n >= 0 && n <= 65535 {
			l, lerr := net.Listen("tcp", net.JoinHostPort(host, p[1]))
			if lerr != nil {
				return &config.SetError{Name: "port", Reason: "Unable to listen on this port. Check server logs."}
			}
			l.Close()
		}
	}
	return err
}
