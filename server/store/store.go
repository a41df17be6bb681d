// Package store is the keyspace of the reference server: typed values, key
// expiry on an injectable clock, cursor scanning, random keys and an optional
// per-slot key index for cluster mode.
//
// A DB is not safe for concurrent use: the server serialises access.
package store

import (
	"math/rand"
	"strconv"
	"sync/atomic"
	"time"
)

// Kind is the type of a value, as TYPE reports it.
type Kind uint8

// Value kinds.
const (
	KindString Kind = iota
	KindList
	KindSet
	KindZSet
	KindHash
	KindStream
)

// String returns the name TYPE prints.
func (k Kind) String() string {
	switch k {
	case KindString:
		return "string"
	case KindList:
		return "list"
	case KindSet:
		return "set"
	case KindZSet:
		return "zset"
	case KindHash:
		return "hash"
	case KindStream:
		return "stream"
	}
	return "none"
}

// Object is one value. Exactly one of the payload fields is used, by Kind.
type Object struct {
	Kind     Kind
	Str      []byte
	List     *List
	Set      map[string]struct{}
	ZSet     *ZSet
	Hash     map[string][]byte
	Stream   *Stream
	ExpireAt int64 // unix milliseconds; 0 = no expiry

	key string // the key this object is stored under
	idx int32  // position in DB.order

	// loose: the container left Redis's compact encoding, or the string
	// is raw (encoding.go).
	loose bool
	// notInt: the string was stored without Redis's integer encoding.
	notInt bool
	// order is a compact hash's field order.
	order []string
	// isetWidth is an intset's element width (2, 4 or 8 bytes): it grows
	// with the values added and never shrinks, as in Redis (dump.go).
	isetWidth uint8
	// atime is the last access (unix ms); lfuCount and lfuTime (minutes,
	// 16 bits) are the LFU counter and its last decrement (access.go).
	atime    int64
	lim      *Limits // the encoding limits of the DB holding it (encoding.go)
	lfuCount uint8
	lfuTime  uint16
	// mem is the size estimate charged to the DB; memFull and memLen the
	// last full measurement and the length it saw (memory.go).
	mem, memFull int64
	memLen       int
}

// Key returns the key the object is stored under.
func (o *Object) Key() string { return o.key }

// Len is the number of elements of a container value (bytes for strings).
func (o *Object) Len() int {
	switch o.Kind {
	case KindString:
		return len(o.Str)
	case KindList:
		return o.List.Len()
	case KindSet:
		return len(o.Set)
	case KindZSet:
		return o.ZSet.Len()
	case KindHash:
		return len(o.Hash)
	case KindStream:
		return o.Stream.Len()
	}
	return 0
}

// NewObject returns an empty value of kind k.
func NewObject(k Kind) *Object {
	o := &Object{Kind: k}
	switch k {
	case KindList:
		o.List = &List{}
	case KindSet:
		o.Set = make(map[string]struct{})
	case KindZSet:
		o.ZSet = NewZSet()
	case KindHash:
		o.Hash = make(map[string][]byte)
	case KindStream:
		o.Stream = NewStream()
	}
	return o
}

// Clock is the time source of everything time-dependent in the server
// (expiry, TIME, TTL). Offset shifts it at runtime for clock-skew faults.
type Clock struct {
	now    func() time.Time
	offset atomic.Int64 // milliseconds
	// system: now is time.Now, so NowMsAt may derive the wall clock from
	// a monotonic reading and base.
	system bool
	base   atomic.Pointer[clockBase]
}

// clockBase pairs a wall-clock reading with the monotonic reading taken
// with it.
type clockBase struct{ wallNs, mono int64 }

// rebaseEvery is how long NowMsAt extrapolates the wall clock from one
// time.Now: a step of the system clock is seen within it, as Redis sees one
// at its next cached-time update.
const rebaseEvery = 100 * int64(time.Millisecond)

// NewClock returns a clock reading now (time.Now when nil).
func NewClock(now func() time.Time) *Clock {
	if now == nil {
		return &Clock{now: time.Now, system: true}
	}
	return &Clock{now: now}
}

// NowMsAt is NowMs for the instant of mono, a reading of the runtime's
// monotonic clock (runtime.nanotime) the caller took: the wall clock is
// extrapolated from a time.Now at most rebaseEvery old, which saves the
// wall-clock reading on every command (time.Now reads two clocks). A clock
// with an injected time source reads it as NowMs does.
func (c *Clock) NowMsAt(mono int64) int64 {
	if !c.system {
		return c.NowMs()
	}
	b := c.base.Load()
	if b == nil || mono < b.mono || mono-b.mono > rebaseEvery {
		b = &clockBase{wallNs: time.Now().UnixNano(), mono: nanotime()}
		c.base.Store(b)
	}
	return (b.wallNs+mono-b.mono)/int64(time.Millisecond) + c.offset.Load()
}

// NowMs is the current time in unix milliseconds, offset applied.
func (c *Clock) NowMs() int64 { return c.now().UnixMilli() + c.offset.Load() }

// NowUs is the current time in unix microseconds, offset applied.
func (c *Clock) NowUs() int64 { return c.now().UnixMicro() + c.offset.Load()*1000 }

// SetOffset sets the offset in milliseconds.
func (c *Clock) SetOffset(ms int64) { c.offset.Store(ms) }

// Offset returns the offset in milliseconds.
func (c *Clock) Offset() int64 { return c.offset.Load() }

// Hooks observe keyspace changes the DB itself makes.
type Hooks struct {
	// Expired is called when a key is removed because its TTL passed
	// (lazily or actively), after removal. The server propagates a DEL.
	Expired func(key string)
	// Added is called when a key comes into existence (a new key, not a
	// value replacing a live one), after insertion: the server wakes
	// clients blocked on it (Redis's signalKeyAsReady in dbAdd).
	Added func(key string, o *Object)
	// StreamUnlinked is called when a stream leaves its key (deleted,
	// overwritten, renamed away): clients blocked in XREADGROUP on it are
	// answered (Redis's signalKeyAsReady in dbGenericDelete and dbSetValue).
	StreamUnlinked func(key string)
}

// DB is one logical database.
type DB struct {
	keys     map[string]*Object
	order    []*Object // dense array for SCAN and RANDOMKEY
	volatile map[string]struct{}
	now      int64
	clock    *Clock
	hooks    Hooks
	slots    *slotIndex
	rnd      *rand.Rand
	// limits are the encoding limits objects stored here follow.
	limits *Limits
	// Access is how lookups track accesses (OBJECT IDLETIME / FREQ).
	Access AccessPolicy
	// NoLazyExpire makes lookups return expired keys without deleting them
	// (replicas leave expiry to their primary).
	NoLazyExpire bool
	// ExpiredKeys counts keys removed by expiry.
	ExpiredKeys int64
	// sizer and used are the memory accounting (memory.go).
	sizer Sizer
	used  int64
}

// New returns an empty DB on clock.
func New(clock *Clock, hooks Hooks) *DB {
	db := &DB{
		keys:     make(map[string]*Object),
		volatile: make(map[string]struct{}),
		clock:    clock,
		hooks:    hooks,
		rnd:      rand.New(rand.NewSource(1)),
		limits:   new(Limits),
	}
	*db.limits = DefaultLimits
	db.now = clock.NowMs()
	return db
}

// Clock returns the DB's clock.
func (db *DB) Clock() *Clock { return db.clock }

// Tick refreshes the cached time used for expiry checks. The server calls it
// before each command (a script sees one frozen time, as in Redis).
func (db *DB) Tick() int64 { db.now = db.clock.NowMs(); return db.now }

// TickAt is Tick for a monotonic reading the caller took (Clock.NowMsAt).
func (db *DB) TickAt(mono int64) int64 { db.now = db.clock.NowMsAt(mono); return db.now }

// Now is the cached time of the current command in unix milliseconds.
func (db *DB) Now() int64 { return db.now }

// Len is the number of keys (including expired ones not yet collected).
func (db *DB) Len() int { return len(db.keys) }

// VolatileLen is the number of keys with a TTL.
func (db *DB) VolatileLen() int { return len(db.volatile) }

func (db *DB) expired(o *Object) bool { return o.ExpireAt != 0 && o.ExpireAt <= db.now }

// Get returns the live value at key or nil, expiring it lazily; it counts
// as an access of the value (access.go).
func (db *DB) Get(key []byte) *Object { return db.lookup(string(key), true) }

// GetString is Get for a string key.
func (db *DB) GetString(key string) *Object { return db.lookup(key, true) }

func (db *DB) lookup(key string, touch bool) *Object {
	o := db.keys[key]
	if o == nil {
		return nil
	}
	if db.expired(o) {
		if db.NoLazyExpire {
			return nil
		}
		db.expire(o)
		return nil
	}
	if touch {
		db.touch(o)
	}
	return o
}

func (db *DB) expire(o *Object) {
	db.remove(o)
	db.ExpiredKeys++
	if db.hooks.Expired != nil {
		db.hooks.Expired(o.key)
	}
}

// Add stores o at key, which must not hold a live value (call Get first).
// An expired leftover is replaced.
func (db *DB) Add(key []byte, o *Object) {
	if old := db.keys[string(key)]; old != nil {
		db.remove(old)
	}
	o.key = string(key)
	db.insert(o)
}

func (db *DB) insert(o *Object) {
	if o.lim == nil && db.limits != nil && *db.limits != DefaultLimits {
		o.fit(db.limits)
	}
	o.lim = db.limits
	if o.atime == 0 {
		db.initAccess(o)
	}
	o.idx = int32(len(db.order))
	db.order = append(db.order, o)
	db.keys[o.key] = o
	if o.ExpireAt != 0 {
		db.volatile[o.key] = struct{}{}
	}
	if db.slots != nil {
		db.slots.add(o.key)
	}
	if db.sizer != nil {
		o.mem, o.memLen = 0, -1
		db.charge(o)
	}
	if db.hooks.Added != nil {
		db.hooks.Added(o.key, o)
	}
}

// Set stores o at key, replacing any value. o's ExpireAt is kept as is.
func (db *DB) Set(key []byte, o *Object) {
	if old := db.keys[string(key)]; old != nil {
		if old == o {
			db.SetExpire(o, o.ExpireAt)
			return
		}
		if old.Kind == KindStream && db.hooks.StreamUnlinked != nil {
			db.hooks.StreamUnlinked(old.key)
		}
		// Take over the old slot in place: no churn in order or slots.
		o.lim = db.limits
		if o.atime == 0 {
			db.initAccess(o)
		}
		o.key = old.key
		o.idx = old.idx
		db.order[o.idx] = o
		db.keys[o.key] = o
		if db.sizer != nil {
			db.uncharge(old)
			o.mem, o.memLen = 0, -1
			db.charge(o)
		}
		if old.ExpireAt != 0 && o.ExpireAt == 0 {
			delete(db.volatile, o.key)
		} else if o.ExpireAt != 0 {
			db.volatile[o.key] = struct{}{}
		}
		return
	}
	o.key = string(key)
	db.insert(o)
}

// SetExpire sets (at > 0) or clears (at == 0) the expiry of a stored object.
func (db *DB) SetExpire(o *Object, at int64) {
	if at == 0 {
		if o.ExpireAt != 0 {
			delete(db.volatile, o.key)
		}
	} else if o.ExpireAt == 0 {
		db.volatile[o.key] = struct{}{}
	}
	o.ExpireAt = at
}

// Delete removes key and reports whether a live value was there.
func (db *DB) Delete(key []byte) bool {
	o := db.Get(key)
	if o == nil {
		// A replica leaves expiry to its primary, whose DEL of a key whose
		// time has passed must remove it (Redis's expireIfNeeded never
		// expires a key for the master client); else the key stays until
		// the next full sync (cluster suite 14: a replica restarted from
		// its RDB with keys already expired).
		if raw := db.keys[string(key)]; raw != nil && db.NoLazyExpire {
			db.remove(raw)
			return true
		}
		return false
	}
	db.remove(o)
	return true
}

// Remove deletes a stored object.
func (db *DB) Remove(o *Object) { db.remove(o) }

func (db *DB) remove(o *Object) {
	delete(db.keys, o.key)
	if o.ExpireAt != 0 {
		delete(db.volatile, o.key)
	}
	last := len(db.order) - 1
	if int(o.idx) != last {
		m := db.order[last]
		m.idx = o.idx
		db.order[o.idx] = m
	}
	db.order[last] = nil
	db.order = db.order[:last]
	if db.slots != nil {
		db.slots.remove(o.key)
	}
	if db.sizer != nil {
		db.uncharge(o)
	}
	if o.Kind == KindStream && db.hooks.StreamUnlinked != nil {
		db.hooks.StreamUnlinked(o.key)
	}
}

// Rename moves the value at src to dst (replacing dst). Both live.
func (db *DB) Rename(o *Object, dst []byte) {
	if old := db.Get(dst); old != nil {
		db.remove(old)
	}
	db.remove(o)
	o.key = string(dst)
	db.insert(o)
}

// Flush removes every key and returns how many there were.
func (db *DB) Flush() int {
	n := len(db.keys)
	db.keys = make(map[string]*Object)
	db.order = nil
	db.volatile = make(map[string]struct{})
	if db.slots != nil {
		db.slots = newSlotIndex()
	}
	db.used = 0
	return n
}

// Scan returns up to about count keys starting at cursor and the next cursor
// (0 when done). Keys present for the whole scan are returned at least once.
// fn is called for each live key; it may not modify the DB. Expired keys it
// meets are deleted (lazy expiry).
func (db *DB) Scan(cursor uint64, count int, fn func(o *Object)) uint64 {
	// Walk the dense array from the end: removals swap the last element into
	// the hole, which only moves already-visited elements, and insertions
	// append to the visited end, so nothing present throughout is missed.
	p := uint64(len(db.order))
	if cursor != 0 && cursor < p {
		p = cursor
	}
	if count < 1 {
		count = 10
	}
	for ; p > 0 && count > 0; count-- {
		p--
		o := db.order[p]
		if !db.expired(o) {
			fn(o)
		} else if !db.NoLazyExpire {
			// Expired lazily as Redis's SCAN does; the hole is filled by
			// the last element, already visited.
			db.expire(o)
		}
	}
	return p
}

// Each calls fn for every live key until fn returns false.
func (db *DB) Each(fn func(o *Object) bool) {
	for _, o := range db.order {
		if db.expired(o) {
			continue
		}
		if !fn(o) {
			return
		}
	}
}

// RandomKey returns a random live key, or nil.
func (db *DB) RandomKey() *Object {
	for tries := 0; len(db.order) > 0 && tries < 100; tries++ {
		o := db.order[db.rnd.Intn(len(db.order))]
		if !db.expired(o) {
			return o
		}
		if !db.NoLazyExpire {
			db.expire(o)
		}
	}
	return nil
}

// ActiveExpire samples keys with a TTL and removes expired ones, like Redis's
// activeExpireCycle: up to 20 samples a round, another round while more than
// a quarter of the sample had expired, at most maxRounds rounds. It returns
// how many keys expired and the sum of their FreeEffort.
func (db *DB) ActiveExpire(maxRounds int) (expiredKeys, effort int) {
	if db.NoLazyExpire {
		return 0, 0
	}
	db.Tick()
	total := 0
	for r := 0; r < maxRounds && len(db.volatile) > 0; r++ {
		sampled, expired := 0, 0
		var victims []*Object
		for k := range db.volatile { // map iteration starts at a random point
			o := db.keys[k]
			if o != nil && db.expired(o) {
				victims = append(victims, o)
				expired++
			}
			sampled++
			if sampled >= 20 {
				break
			}
		}
		for _, o := range victims {
			effort += o.FreeEffort()
			db.expire(o)
		}
		total += expired
		if expired*4 <= sampled {
			break
		}
	}
	return total, effort
}

// FreeEffort is Redis's lazyfreeGetFreeEffort: about how many allocations
// Redis releases when it frees the value (1 for a string or a compact
// encoding, the elements of a hashtable or skiplist, the nodes of a
// quicklist or of a stream's radix tree).
func (o *Object) FreeEffort() int {
	switch o.Kind {
	case KindList:
		// A quicklist node holds up to 8 kB (list-max-listpack-size -2):
		// about 128 short elements.
		return o.List.Len()/128 + 1
	case KindSet, KindHash, KindZSet:
		if o.loose {
			return o.Len()
		}
	case KindStream:
		n := len(o.Stream.nodes) + 1
		for _, g := range o.Stream.groups {
			n += 1 + len(g.pel.list)
		}
		return n
	}
	return 1
}

// AvgTTL is the average remaining TTL in ms over keys with an expiry (0 if none).
func (db *DB) AvgTTL() int64 {
	if len(db.volatile) == 0 {
		return 0
	}
	var sum, n int64
	for k := range db.volatile {
		if o := db.keys[k]; o != nil && o.ExpireAt > db.now {
			sum += o.ExpireAt - db.now
			n++
		}
		if n >= 100 {
			break
		}
	}
	if n == 0 {
		return 0
	}
	return sum / n
}

// FormatFloat formats f for storage the way INCRBYFLOAT does (no exponent,
// shortest digits).
func FormatFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// Raw returns the stored object at key even if it has expired (no lazy
// expiry), or nil.
func (db *DB) Raw(key string) *Object { return db.keys[key] }

// Clone returns a deep copy of o, not stored anywhere, with o's expiry and
// encoding (COPY).
func (o *Object) Clone() *Object {
	n := &Object{Kind: o.Kind, ExpireAt: o.ExpireAt, loose: o.loose, notInt: o.notInt, isetWidth: o.isetWidth, lim: o.lim}
	switch o.Kind {
	case KindString:
		n.Str = append([]byte(nil), o.Str...)
	case KindList:
		n.List = &List{}
		for i := 0; i < o.List.Len(); i++ {
			n.List.PushBack(append([]byte(nil), o.List.At(i)...))
		}
	case KindSet:
		n.Set = make(map[string]struct{}, len(o.Set))
		for m := range o.Set {
			n.Set[m] = struct{}{}
		}
	case KindZSet:
		n.ZSet = NewZSet()
		for i := 0; i < o.ZSet.Len(); i++ {
			e := o.ZSet.At(i)
			n.ZSet.Add(e.Member, e.Score)
		}
	case KindHash:
		n.Hash = make(map[string][]byte, len(o.Hash))
		for f, v := range o.Hash {
			n.Hash[f] = append([]byte(nil), v...)
		}
		n.order = append([]string(nil), o.order...)
	case KindStream:
		n.Stream = o.Stream.Clone()
	}
	return n
}

// SwapContents exchanges the keyspaces of db and other (SWAPDB). Each DB
// keeps its clock and hooks, which know its index.
func (db *DB) SwapContents(other *DB) {
	db.keys, other.keys = other.keys, db.keys
	db.order, other.order = other.order, db.order
	db.volatile, other.volatile = other.volatile, db.volatile
	db.slots, other.slots = other.slots, db.slots
	db.used, other.used = other.used, db.used
}

// Has reports whether key holds a value, expired or not, without expiring
// it (WATCH invalidation on SWAPDB).
func (db *DB) Has(key string) bool { return db.keys[key] != nil }
