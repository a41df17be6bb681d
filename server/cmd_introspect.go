package server

import (
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/redline-dev/redline/server/config"
)

// LOLWUT [VERSION v]: Redis 7.0's own art is its version line; 5 and 6
// draw in Redis's spirit (random squares and a skyline).
func cmdLolwut(c *Client, argv [][]byte) {
	ver := int64(7)
	if len(argv) >= 3 && strings.EqualFold(string(argv[1]), "version") {
		v, ok := parseInt(argv[2])
		if !ok {
			c.Error(ErrNotInt)
			return
		}
		ver = int64(uint32(v))
	}
	var art string
	switch ver {
	case 5, 6:
		var b strings.Builder
		r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 6))
		for y := 0; y < 10; y++ {
			for x := 0; x < 33; x++ {
				if r.IntN(10) < y {
					b.WriteRune('⠿')
				} else {
					b.WriteRune('⠀')
				}
			}
			b.WriteByte('\n')
		}
		if ver == 5 {
			art = b.String() + "\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. " + config.Version + "\n"
		} else {
			art = b.String() + "\nDedicated to the 8 bit game developers of past and present.\nOriginal 8 bit image from Plaguemon by hikikomori. Redis ver. " + config.Version + "\n"
		}
	default:
		art = "Redis ver. " + config.Version + "\n"
	}
	c.Verbatim(art)
}

func cmdMemory(c *Client, argv [][]byte) {
	s := c.s
	switch strings.ToUpper(string(argv[1])) {
	case "HELP":
		helpReply(c, "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
			"DOCTOR",
			"    Return memory problems reports.",
			"MALLOC-STATS",
			"    Return internal statistics report from the memory allocator.",
			"PURGE",
			"    Attempt to purge dirty pages for reclamation by the allocator.",
			"STATS",
			"    Return information about the memory usage of the server.",
			"USAGE <key> [SAMPLES <count>]",
			"    Return memory in bytes used by <key> and its value. Nested values are",
			"    sampled up to <count> times (default: 5, 0 means sample all).",
			"HELP",
			"    Prints this help.")
	case "USAGE":
		for j := 3; j < len(argv); j++ {
			if strings.EqualFold(string(argv[j]), "samples") && j+1 < len(argv) {
				n, ok := parseInt(argv[j+1])
				if !ok {
					c.Error(ErrNotInt)
					return
				}
				if n < 0 {
					c.Error(ErrSyntax)
					return
				}
				j++
				continue
			}
			c.Error(ErrSyntax)
			return
		}
		o := c.kv().Peek(argv[2])
		if o == nil {
			c.Null()
			return
		}
		c.Int(int64(objectSize(o) + jemallocClass(len(argv[2])+4) + 24))
	case "STATS":
		s.memoryStats(c)
	case "DOCTOR":
		var dataset int
		for _, db := range s.dbs {
			dataset += db.Len()
		}
		if dataset == 0 {
			c.Verbatim("Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n")
			return
		}
		c.Verbatim("Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n")
	case "MALLOC-STATS":
		c.BulkString("Stats not supported for the current allocator")
	case "PURGE":
		debug.FreeOSMemory()
		c.OK()
	}
}

// memoryStats is MEMORY STATS with the Go runtime's figures where Redis
// gives its allocator's, and estimates of Redis's overheads.
func (s *Server) memoryStats(c *Client) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	alloc := int64(ms.HeapAlloc)
	s.intro.peak = max(s.intro.peak, alloc)
	if s.intro.startup == 0 {
		s.intro.startup = alloc
	}
	type dbo struct {
		id          int
		main, expir int64
	}
	var dbs []dbo
	var keys int64
	var overhead int64
	for i, db := range s.dbs {
		if db.Len() == 0 {
			continue
		}
		keys += int64(db.Len())
		d := dbo{i, int64(db.Len())*(24+8) + 96, int64(db.VolatileLen())*(24+8) + 96}
		overhead += d.main + d.expir
		dbs = append(dbs, d)
	}
	clients := int64(s.nclients.Load()) * 20496
	overhead += s.intro.startup + clients
	dataset := max(alloc-overhead, 0)
	perKey := int64(0)
	if keys > 0 {
		perKey = (alloc - s.intro.startup) / keys
	}
	pct := func(a, b int64) float64 {
		if b == 0 {
			return 0
		}
		return float64(a) * 100 / float64(b)
	}
	rss := int64(ms.HeapSys)
	c.Map(27 + len(dbs))
	kvi := func(k string, v int64) { c.BulkString(k); c.Int(v) }
	kvf := func(k string, v float64) { c.BulkString(k); c.Double(v) }
	kvi("peak.allocated", s.intro.peak)
	kvi("total.allocated", alloc)
	kvi("startup.allocated", s.intro.startup)
	kvi("replication.backlog", 0)
	kvi("clients.slaves", 0)
	kvi("clients.normal", clients)
	kvi("cluster.links", 0)
	kvi("aof.buffer", 0)
	kvi("lua.caches", 0)
	kvi("functions.caches", 0)
	for _, d := range dbs {
		c.BulkString("db." + strconv.Itoa(d.id))
		c.Map(3)
		kvi("overhead.hashtable.main", d.main)
		kvi("overhead.hashtable.expires", d.expir)
		kvi("overhead.hashtable.slot-to-keys", 0)
	}
	kvi("overhead.total", overhead)
	kvi("keys.count", keys)
	kvi("keys.bytes-per-key", perKey)
	kvi("dataset.bytes", dataset)
	kvf("dataset.percentage", pct(dataset, alloc-s.intro.startup))
	kvf("peak.percentage", pct(alloc, s.intro.peak))
	kvi("allocator.allocated", alloc)
	kvi("allocator.active", int64(ms.HeapInuse))
	kvi("allocator.resident", rss)
	kvf("allocator-fragmentation.ratio", float64(ms.HeapInuse)/float64(max(alloc, 1)))
	kvi("allocator-fragmentation.bytes", int64(ms.HeapInuse)-alloc)
	kvf("allocator-rss.ratio", float64(rss)/float64(max(int64(ms.HeapInuse), 1)))
	kvi("allocator-rss.bytes", rss-int64(ms.HeapInuse))
	kvf("rss-overhead.ratio", float64(ms.Sys)/float64(max(rss, 1)))
	kvi("rss-overhead.bytes", int64(ms.Sys)-rss)
	kvf("fragmentation", float64(ms.Sys)/float64(max(alloc, 1)))
	kvi("fragmentation.bytes", int64(ms.Sys)-alloc)
}

func cmdSlowlog(c *Client, argv [][]byte) {
	in := &c.s.intro
	switch strings.ToUpper(string(argv[1])) {
	case "GET":
		count := int64(10)
		if len(argv) == 3 {
			n, ok := parseInt(argv[2])
			if !ok || n < -1 {
				c.Error("ERR count should be greater than or equal to -1")
				return
			}
			count = n
			if n == -1 {
				count = int64(len(in.slowlog))
			}
		} else if len(argv) > 3 {
			c.Error("ERR wrong number of arguments for 'slowlog|get' command")
			return
		}
		n := min(int(count), len(in.slowlog))
		c.Array(n)
		for _, e := range in.slowlog[:n] {
			c.Array(6)
			c.Int(e.id)
			c.Int(e.at)
			c.Int(e.usec)
			c.Array(len(e.argv))
			for _, a := range e.argv {
				c.BulkString(a)
			}
			c.BulkString(e.addr)
			c.BulkString(e.name)
		}
	case "LEN":
		c.Int(int64(len(in.slowlog)))
	case "RESET":
		in.slowlog = nil
		c.OK()
	case "HELP":
		helpReply(c, "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
			"GET [<count>]",
			"    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
			"    Entries are made of:",
			"    id, timestamp, time in microseconds, arguments array, client IP and port,",
			"    client name",
			"LEN",
			"    Return the length of the slowlog.",
			"RESET",
			"    Reset the slowlog.",
			"HELP",
			"    Prints this help.")
	}
}

func cmdLatency(c *Client, argv [][]byte) {
	s := c.s
	in := &s.intro
	switch strings.ToUpper(string(argv[1])) {
	case "LATEST":
		names := in.eventNames()
		c.Array(len(names))
		for _, n := range names {
			ev := in.events[n]
			last := ev.samples[len(ev.samples)-1]
			c.Array(4)
			c.BulkString(n)
			c.Int(last.at)
			c.Int(last.ms)
			c.Int(ev.max)
		}
	case "HISTORY":
		ev := in.events[string(argv[2])]
		if ev == nil {
			c.Array(0)
			return
		}
		c.Array(len(ev.samples))
		for _, sm := range ev.samples {
			c.Array(2)
			c.Int(sm.at)
			c.Int(sm.ms)
		}
	case "RESET":
		n := 0
		if len(argv) == 2 {
			n = len(in.events)
			in.events = nil
		} else {
			for _, a := range argv[2:] {
				if _, ok := in.events[string(a)]; ok {
					delete(in.events, string(a))
					n++
				}
			}
		}
		c.Int(int64(n))
	case "GRAPH":
		ev := in.events[string(argv[2])]
		if ev == nil || len(ev.samples) == 0 {
			c.Error("ERR No samples available for event '" + cstr(argv[2]) + "'")
			return
		}
		c.Verbatim(latencyGraph(string(argv[2]), ev))
	case "DOCTOR":
		c.Verbatim(in.doctor())
	case "HISTOGRAM":
		s.latencyHistogram(c, argv[2:])
	case "HELP":
		helpReply(c, "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
			"DOCTOR",
			"    Return a human readable latency analysis report.",
			"GRAPH <event>",
			"    Return an ASCII latency graph for the <event> class.",
			"HISTORY <event>",
			"    Return time-latency samples for the <event> class.",
			"LATEST",
			"    Return the latest latency samples for all events.",
			"RESET [<event> ...]",
			"    Reset latency data of one or more <event> classes.",
			"    (default: reset all data for all event classes)",
			"HISTOGRAM [COMMAND ...]",
			"    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
			"    If no commands are specified then all histograms are replied.",
			"HELP",
			"    Prints this help.")
	}
}

func cmdMonitor(c *Client, argv [][]byte) {
	if c.denyBlocking() {
		c.Error("ERR MONITOR isn't allowed for DENY BLOCKING client")
		return
	}
	if c.monitor {
		return
	}
	c.subscriberOf()
	c.monitor = true
	c.s.monitors = append(c.s.monitors, c)
	c.OK()
}

// introspectionCommands are the specs of SLOWLOG, LATENCY, MEMORY, MONITOR
// and LOLWUT.
func introspectionCommands() []*Command {
	return []*Command{
		newCmd("slowlog", -2, 0, 0, 0, 0, cmdSlowlog, "server").withSubs(
			sub("reset", 2, FlagAdmin|FlagLoading|FlagStale), sub("len", 2, FlagAdmin|FlagLoading|FlagStale),
			sub("help", 2, FlagLoading|FlagStale), sub("get", -2, FlagAdmin|FlagLoading|FlagStale)),
		newCmd("latency", -2, 0, 0, 0, 0, cmdLatency, "server").withSubs(
			sub("help", 2, FlagLoading|FlagStale), sub("doctor", 2, FlagAdmin|FlagNoScript|FlagLoading|FlagStale),
			sub("reset", -2, FlagAdmin|FlagNoScript|FlagLoading|FlagStale), sub("histogram", -2, FlagAdmin|FlagNoScript|FlagLoading|FlagStale),
			sub("latest", 2, FlagAdmin|FlagNoScript|FlagLoading|FlagStale), sub("graph", 3, FlagAdmin|FlagNoScript|FlagLoading|FlagStale),
			sub("history", 3, FlagAdmin|FlagNoScript|FlagLoading|FlagStale)),
		newCmd("memory", -2, 0, 0, 0, 0, cmdMemory, "server").withSubs(
			sub("help", 2, FlagLoading|FlagStale), sub("usage", -3, FlagReadonly).withKey(2), sub("doctor", 2, 0),
			sub("malloc-stats", 2, 0), sub("stats", 2, 0), sub("purge", 2, 0)),
		newCmd("monitor", 1, FlagAdmin|FlagNoScript|FlagLoading|FlagStale, 0, 0, 0, cmdMonitor, "server"),
		newCmd("lolwut", -1, FlagReadonly|FlagFast, 0, 0, 0, cmdLolwut, "server"),
	}
}
