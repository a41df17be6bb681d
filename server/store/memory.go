package store

// Memory accounting for maxmemory: each stored object carries the estimate
// of its size last charged to its DB, and the DB keeps the sum, so the
// server can compare used memory against maxmemory after every command in
// O(1) and see an eviction's effect at once (Go's heap figures only drop
// after a garbage collection, which would make every eviction look like it
// freed nothing). Accounting is off until the server sets a Sizer
// (SetSizer): the default configuration pays nothing for it.
//
// Containers are measured in full when they are first charged and again
// when their length has moved by more than an eighth since the last full
// measurement; in between their estimate scales with the length, so a
// command on a large container costs O(1) amortised.

// Sizer estimates the bytes of a value as Redis would hold it.
type Sizer func(o *Object) int64

// keyOverhead is a key's dict entry and sds header beside its bytes.
const keyOverhead = 24 + 16

// SetSizer turns accounting on with size, charging every key already
// stored (one walk), or off with nil.
func (db *DB) SetSizer(size Sizer) {
	db.sizer = size
	db.used = 0
	if size == nil {
		return
	}
	for _, o := range db.order {
		o.memLen = -1
		db.charge(o)
	}
}

// UsedMemory is the sum of the estimates of the stored keys (0 while
// accounting is off).
func (db *DB) UsedMemory() int64 { return db.used }

// Recharge re-estimates the value at key after a command changed it.
func (db *DB) Recharge(key []byte) {
	if db.sizer == nil {
		return
	}
	if o := db.keys[string(key)]; o != nil {
		db.charge(o)
	}
}

func (db *DB) charge(o *Object) {
	if db.sizer == nil {
		return
	}
	var est int64
	n := o.Len()
	if o.Kind == KindString || o.memLen <= 0 || n > o.memLen+o.memLen/8 || n < o.memLen-o.memLen/8 {
		est = db.sizer(o) + int64(len(o.key)) + keyOverhead
		o.memFull, o.memLen = est, n
		if o.Kind == KindString || n == 0 {
			o.memLen = -1 // measure again next time
		}
	} else {
		est = o.memFull * int64(n) / int64(o.memLen)
	}
	db.used += est - o.mem
	o.mem = est
}

// uncharge takes a removed object's estimate off the DB.
func (db *DB) uncharge(o *Object) {
	db.used -= o.mem
	o.mem = 0
}

// Sample calls fn for up to n keys picked at random, among the keys with a
// TTL when volatile (dictGetSomeKeys over the dict or the expires dict).
// Expired keys not yet collected are sampled too, as in Redis.
func (db *DB) Sample(n int, volatile bool, fn func(o *Object)) {
	if volatile {
		// Random positions of the dense array first: ranging over a map
		// that had many keys deleted walks its empty buckets, which made
		// an eviction round slow after thousands of evictions.
		for tries := 4 * n; tries > 0 && n > 0 && len(db.order) > 0; tries-- {
			if o := db.order[db.rnd.Intn(len(db.order))]; o.ExpireAt != 0 {
				fn(o)
				n--
			}
		}
		// Map iteration starts at a random bucket.
		for k := range db.volatile {
			if n <= 0 {
				return
			}
			if o := db.keys[k]; o != nil {
				fn(o)
			}
			n--
		}
		return
	}
	// Independent positions: neighbours in order were stored at about the
	// same time, which would bias an LRU sample.
	for ; n > 0 && len(db.order) > 0; n-- {
		fn(db.order[db.rnd.Intn(len(db.order))])
	}
}

// RandomStored is a random stored key, expired or not, or nil
// (dictGetFairRandomKey for allkeys-random).
func (db *DB) RandomStored() *Object {
	if len(db.order) == 0 {
		return nil
	}
	return db.order[db.rnd.Intn(len(db.order))]
}

// RandomVolatile is a random key with a TTL, or nil (volatile-random).
func (db *DB) RandomVolatile() *Object {
	for tries := 0; tries < 16 && len(db.order) > 0; tries++ {
		if o := db.order[db.rnd.Intn(len(db.order))]; o.ExpireAt != 0 {
			return o
		}
	}
	for k := range db.volatile {
		return db.keys[k]
	}
	return nil
}
