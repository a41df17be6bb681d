package store

// Access tracking for OBJECT IDLETIME and OBJECT FREQ, as Redis keeps it in
// each object's lru field: the time of the last access (LRU, one-second
// resolution) or a logarithmic access counter that decays by one every
// lfu-decay-time minutes (LFU, when maxmemory-policy is an lfu policy).
// Lookups through Get touch the object; Peek does not (OBJECT, TYPE, TTL,
// EXISTS in Redis 7.0).

// AccessPolicy is what the server's configuration says about tracking.
type AccessPolicy struct {
	LFU       bool // maxmemory-policy is allkeys-lfu or volatile-lfu
	LogFactor int  // lfu-log-factor
	DecayTime int  // lfu-decay-time, minutes
}

// lfuInitVal is the counter of a new object (LFU_INIT_VAL).
const lfuInitVal = 5

func lfuMinutes(nowMs int64) uint16 { return uint16((nowMs / 60000) & 65535) }

// initAccess stamps a new object.
func (db *DB) initAccess(o *Object) {
	o.atime = db.now
	if o.lfuTime == 0 && o.lfuCount == 0 {
		o.lfuCount, o.lfuTime = lfuInitVal, lfuMinutes(db.now)
	}
}

func (db *DB) touch(o *Object) {
	if !db.Access.LFU {
		o.atime = db.now
		return
	}
	c := db.lfuDecay(o)
	if c < 255 {
		base := float64(c) - lfuInitVal
		if base < 0 {
			base = 0
		}
		if db.rnd.Float64() < 1.0/(base*float64(db.Access.LogFactor)+1) {
			c++
		}
	}
	o.lfuCount, o.lfuTime = c, lfuMinutes(db.now)
}

// lfuDecay is the counter after its decay (LFUDecrAndReturn).
func (db *DB) lfuDecay(o *Object) uint8 {
	if db.Access.DecayTime <= 0 {
		return o.lfuCount
	}
	now := lfuMinutes(db.now)
	var elapsed int
	if now >= o.lfuTime {
		elapsed = int(now - o.lfuTime)
	} else {
		elapsed = 65535 - int(o.lfuTime) + int(now)
	}
	periods := elapsed / db.Access.DecayTime
	if periods > int(o.lfuCount) {
		return 0
	}
	return o.lfuCount - uint8(periods)
}

// IdleTime is OBJECT IDLETIME: seconds since the last access.
func (db *DB) IdleTime(o *Object) int64 {
	idle := db.now/1000 - o.atime/1000
	if idle < 0 {
		return 0
	}
	return idle
}

// Freq is OBJECT FREQ: the decayed access counter.
func (db *DB) Freq(o *Object) int64 { return int64(db.lfuDecay(o)) }

// SetIdle sets the idle time (RESTORE IDLETIME, seconds).
func (db *DB) SetIdle(o *Object, seconds int64) { o.atime = db.now - seconds*1000 }

// SetFreq sets the access counter (RESTORE FREQ).
func (db *DB) SetFreq(o *Object, f int64) { o.lfuCount, o.lfuTime = uint8(f), lfuMinutes(db.now) }

// Touch is the access of a TOUCH command.
func (db *DB) Touch(o *Object) { db.touch(o) }

// Peek is Get without touching the object's access time or counter.
func (db *DB) Peek(key []byte) *Object { return db.lookup(string(key), false) }

// lruClockMax is LRU_CLOCK_MAX: Redis keeps the access time in 24 bits of
// seconds, so idle times wrap after about 194 days as they do there.
const lruClockMax = 1<<24 - 1

// LRUIdleMs is estimateObjectIdleTime: milliseconds since the last access
// on the 24-bit seconds clock (the LRU policies' eviction score).
func (db *DB) LRUIdleMs(o *Object) int64 {
	now := (db.clock.NowMs() / 1000) & lruClockMax
	at := (o.atime / 1000) & lruClockMax
	if now >= at {
		return (now - at) * 1000
	}
	return (now + (lruClockMax - at)) * 1000
}
