package server

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"time"

	"github.com/redline-dev/redline/server/config"
	"github.com/redline-dev/redline/server/store"
)

const (
	noEviction evictPolicy = iota
	allkeysLRU
	allkeysLFU
	allkeysRandom
	volatileLRU
	volatileLFU
	volatileRandom
	volatileTTL
)

var evictPolicies = map[string]evictPolicy{
	"noeviction": noEviction, "allkeys-lru": allkeysLRU, "allkeys-lfu": allkeysLFU, "allkeys-random": allkeysRandom,
	"volatile-lru": volatileLRU, "volatile-lfu": volatileLFU, "volatile-random": volatileRandom, "volatile-ttl": volatileTTL,
}

func (p evictPolicy) volatile() bool { return p >= volatileLRU }

const errOOM = "OOM command not allowed when used memory > 'maxmemory'."

// usedMemoryStartup is what an empty Redis 7.0.15 reports as
// used_memory_startup on this machine (876064 bytes): the floor of the
// estimate, so limits computed from INFO as Redis's tests do leave the
// same room.
const usedMemoryStartup = 876064

// evictionPoolSize is EVPOOL_SIZE.
const evictionPoolSize = 16

// setMaxmemory reads maxmemory and the eviction settings (start, CONFIG
// SET) and, as Redis's updateMaxmemory, evicts at once when over.
func (s *Server) setMaxmemory() {
	s.oom.max = 0
	if kv := s.cfg.Get("maxmemory", func(p, n string) bool { return p == n }); len(kv) > 0 {
		s.oom.max, _ = config.ParseMemory(kv[0][1])
	}
	s.oom.policy = evictPolicies[s.configValue("maxmemory-policy")]
	s.oom.samples = s.configInt("maxmemory-samples", 5)
	s.oom.tenacity = s.configInt("maxmemory-eviction-tenacity", 10)
	s.oom.pool = s.oom.pool[:0]
	if s.oom.max > 0 {
		s.startMemoryAccounting()
		s.performEvictions()
	}
}

// startMemoryAccounting turns the store's size estimates on (one walk).
func (s *Server) startMemoryAccounting() {
	if s.oom.accounting {
		return
	}
	s.oom.accounting = true
	for _, db := range s.dbs {
		db.SetSizer(memorySize)
	}
}

// memorySize is a value's estimate as Redis holds it, with its expires
// entry.
func memorySize(o *store.Object) int64 {
	n := int64(objectSize(o))
	if o.Kind == store.KindStream {
		n += 64 * int64(o.Len()) // rax nodes and listpack entries, roughly
	}
	if o.ExpireAt != 0 {
		n += 24
	}
	return n
}

// usedMemory is INFO's used_memory: the startup figure plus the keys.
func (s *Server) usedMemory() int64 {
	s.startMemoryAccounting()
	used := int64(usedMemoryStartup)
	for _, db := range s.dbs {
		used += db.UsedMemory()
	}
	return used
}

// rechargeKeys re-estimates the keys a write command named.
func (s *Server) rechargeKeys(db int, cmd *Command, argv [][]byte) {
	d := s.dbs[db]
	if cmd.Keys == nil { // the common case, without KeyIndexes' slice
		first, last, step := cmd.keyRange(len(argv))
		for i := first; i <= last; i += step {
			d.Recharge(argv[i])
		}
		return
	}
	for _, i := range cmd.KeyIndexes(argv) {
		d.Recharge(argv[i])
	}
}

type evictResult uint8

const (
	evictOK      evictResult = iota // under maxmemory (or nothing to do)
	evictRunning                    // over, but the cron keeps evicting
	evictFail                       // over and nothing left to evict
)

// evictionTimeLimit is evictionTimeLimitUs: 50 us per tenacity step up to
// 10, then 15% more per step, no limit at 100.
func (s *Server) evictionTimeLimit() time.Duration {
	t := s.oom.tenacity
	switch {
	case t <= 10:
		return time.Duration(50*t) * time.Microsecond
	case t < 100:
		return time.Duration(500*math.Pow(1.15, float64(t-10))) * time.Microsecond
	}
	return time.Duration(math.MaxInt64)
}

// performEvictions evicts until used memory is under maxmemory.
func (s *Server) performEvictions() evictResult {
	s.oom.pending = false
	if s.oom.max <= 0 || s.loading || (s.repl.isReplica() && s.configValue("replica-ignore-maxmemory") != "no") {
		return evictOK
	}
	// Redis's isSafeToPerformEvictions: while clients are paused (CLIENT
	// PAUSE, a manual failover) the dataset stays as it is.
	if s.clientsPaused(time.Now()) {
		return evictOK
	}
	used := s.usedMemory()
	if used <= s.oom.max {
		return evictOK
	}
	if s.oom.policy == noEviction {
		return evictFail
	}
	toFree := used - s.oom.max
	start := time.Now()
	limit := s.evictionTimeLimit()
	var freed int64
	for keys := 1; freed < toFree; keys++ {
		db, o := s.evictionVictim()
		if o == nil {
			return evictFail // nothing evictable left
		}
		before := s.usedMemory()
		s.evictKey(db, o)
		freed += before - s.usedMemory()
		if keys%16 == 0 && freed < toFree && time.Since(start) > limit {
			s.oom.pending = true
			return evictRunning
		}
	}
	return evictOK
}

// evictionCron goes on with evictions a round left unfinished.
func (s *Server) evictionCron() {
	if s.oom.pending {
		s.performEvictions()
	}
}

// evictKey removes an evicted key as Redis does: DEL (UNLINK with
// lazyfree-lazy-eviction) to the AOF and replicas, the evicted event,
// WATCH and client-side caching invalidation.
func (s *Server) evictKey(db int, o *store.Object) {
	key := o.Key()
	del := "DEL"
	if s.configValue("lazyfree-lazy-eviction") == "yes" {
		del = "UNLINK"
	}
	s.propagate(db, [][]byte{[]byte(del), []byte(key)})
	s.dbs[db].Remove(o)
	s.oom.evicted++
	s.notifyIn(db, notifyEvicted, "evicted", []byte(key))
	if len(s.watchers) > 0 {
		s.touch(db, []byte(key))
	}
	if s.trk != nil {
		s.trackInvalidate(nil, key)
		s.trackFlushBcast()
	}
}

// evictionVictim picks the next key to evict, or nil when there is none.
func (s *Server) evictionVictim() (int, *store.Object) {
	p := s.oom.policy
	volatile := p.volatile()
	if p == allkeysRandom || p == volatileRandom {
		for i := range s.dbs {
			s.oom.nextDB = (s.oom.nextDB + 1) % len(s.dbs)
			db := s.dbs[s.oom.nextDB]
			var o *store.Object
			if volatile {
				o = db.RandomVolatile()
			} else {
				o = db.RandomStored()
			}
			if o != nil {
				return s.oom.nextDB, o
			}
			_ = i
		}
		return 0, nil
	}
	for {
		total := 0
		for i, db := range s.dbs {
			n := db.Len()
			if volatile {
				n = db.VolatileLen()
			}
			if n > 0 {
				s.evictionPoolPopulate(i, db, volatile)
				total += n
			}
		}
		if total == 0 {
			return 0, nil
		}
		// The best candidate is last; ghosts (keys gone since they were
		// sampled) are dropped on the way.
		for k := len(s.oom.pool) - 1; k >= 0; k-- {
			cand := s.oom.pool[k]
			s.oom.pool = append(s.oom.pool[:k], s.oom.pool[k+1:]...)
			o := s.dbs[cand.db].Raw(cand.key)
			if o != nil && (!volatile || o.ExpireAt != 0) {
				return cand.db, o
			}
		}
	}
}

// evictionPoolPopulate samples keys of db into the pool, kept sorted by
// ascending idle score and at most evictionPoolSize long.
func (s *Server) evictionPoolPopulate(dbi int, db *store.DB, volatile bool) {
	p := s.oom.policy
	db.Sample(s.oom.samples, volatile, func(o *store.Object) {
		var idle uint64
		switch p {
		case allkeysLRU, volatileLRU:
			idle = uint64(db.LRUIdleMs(o))
		case allkeysLFU, volatileLFU:
			idle = 255 - uint64(db.Freq(o))
		case volatileTTL:
			idle = math.MaxUint64 - uint64(o.ExpireAt)
		}
		pool := s.oom.pool
		for i := range pool {
			if pool[i].db == dbi && pool[i].key == o.Key() {
				pool = append(pool[:i], pool[i+1:]...)
				break
			}
		}
		k := 0
		for k < len(pool) && pool[k].idle < idle {
			k++
		}
		if k == 0 && len(pool) >= evictionPoolSize {
			s.oom.pool = pool
			return // worse than every candidate of a full pool
		}
		cand := evictCandidate{idle: idle, key: o.Key(), db: dbi}
		if len(pool) < evictionPoolSize {
			pool = append(pool, evictCandidate{})
			copy(pool[k+1:], pool[k:])
			pool[k] = cand
		} else {
			// Full: drop the worst (first) to make room.
			copy(pool[:k-1], pool[1:k])
			pool[k-1] = cand
		}
		s.oom.pool = pool
	})
}

// oomRefusal evicts if needed and is the -OOM reply for a denyoom command
// when used memory stays over maxmemory.
func (s *Server) oomRefusal(c *Client, cmd *Command, argv [][]byte) string {
	if c.inScript {
		// redis.call is judged by the state before the script (Redis's
		// pre_command_oom_state), no eviction in between.
		if s.scripts != nil && s.scripts.allowOOM {
			return ""
		}
		if s.usedMemory() <= s.oom.max || cmd.effectiveFlags(argv)&FlagDenyOOM == 0 {
			return ""
		}
		return errOOM
	}
	if s.performEvictions() != evictFail {
		return ""
	}
	if strings.EqualFold(cmd.Name, "exec") {
		// A transaction with a command that may use memory is refused
		// whole (Redis's mstate.cmd_flags & CMD_DENYOOM): EXECABORT.
		if c.multi {
			for _, q := range c.queue {
				if qc := s.Lookup(q[0]); qc != nil && qc.effectiveFlags(q)&FlagDenyOOM != 0 {
					return errOOM
				}
			}
		}
		return ""
	}
	if s.commandFlags(cmd, argv)&FlagDenyOOM == 0 {
		return ""
	}
	return errOOM
}

// memoryInfo writes INFO memory's figures of used memory and maxmemory:
// used_memory is the estimate eviction compares against maxmemory, the
// heap figures are Go's.
func (s *Server) memoryInfo(sb *strings.Builder, ms *runtime.MemStats) {
	kv := func(sb *strings.Builder, k string, v any) { fmt.Fprintf(sb, "%s:%v\r\n", k, v) }
	used := s.usedMemory()
	if used > s.oom.peak {
		s.oom.peak = used
	}
	kv(sb, "used_memory", used)
	kv(sb, "used_memory_human", humanBytes(uint64(used)))
	kv(sb, "used_memory_rss", ms.Sys)
	kv(sb, "used_memory_rss_human", humanBytes(ms.Sys))
	kv(sb, "used_memory_peak", s.oom.peak)
	kv(sb, "used_memory_peak_human", humanBytes(uint64(s.oom.peak)))
	kv(sb, "used_memory_startup", usedMemoryStartup)
	kv(sb, "used_memory_dataset", used-usedMemoryStartup)
	kv(sb, "used_memory_heap", ms.HeapAlloc)
	kv(sb, "used_memory_lua", 0)
	kv(sb, "maxmemory", s.oom.max)
	kv(sb, "maxmemory_human", humanBytes(uint64(s.oom.max)))
	kv(sb, "maxmemory_policy", s.configValue("maxmemory-policy"))
	kv(sb, "mem_not_counted_for_evict", 0)
	kv(sb, "lazyfree_pending_objects", 0)
	kv(sb, "lazyfreed_objects", 0)
}
