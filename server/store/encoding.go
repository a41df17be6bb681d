package store

import (
	"slices"
	"sort"
	"strconv"

	"github.com/redline-dev/redline/server/rdb"
)

// Redis 7.0 keeps small hashes and sorted sets in a listpack and sets of
// integers in an intset, and clients see it: HGETALL of a small hash
// replies in insertion order, SMEMBERS of an intset in numeric order, and
// OBJECT ENCODING names the encoding. A value leaves its compact encoding
// for good when a write makes it outgrow the limits of its server's
// configuration (hash-max-listpack-*, set-max-intset-entries,
// zset-max-listpack-*), as in Redis; lowering a limit converts nothing
// until the next write.

// Limits are the encoding limits of a server's configuration.
type Limits struct {
	HashMaxListpackEntries int
	HashMaxListpackValue   int
	SetMaxIntsetEntries    int
	ZSetMaxListpackEntries int
	ZSetMaxListpackValue   int
	ListMaxListpackSize    int // list-max-listpack-size: quicklist nodes (DUMP)
	StreamNodeMaxEntries   int // stream-node-max-entries (0: no limit)
	StreamNodeMaxBytes     int // stream-node-max-bytes (0: no limit)
}

// DefaultLimits are Redis 7.0's defaults, used by objects not (yet)
// stored in a DB.
var DefaultLimits = Limits{
	HashMaxListpackEntries: 512,
	HashMaxListpackValue:   64,
	SetMaxIntsetEntries:    512,
	ZSetMaxListpackEntries: 128,
	ZSetMaxListpackValue:   64,
	ListMaxListpackSize:    -2,
	StreamNodeMaxEntries:   100,
	StreamNodeMaxBytes:     4096,
}

func (o *Object) limits() *Limits {
	if o.lim != nil {
		return o.lim
	}
	return &DefaultLimits
}

// HashSet sets field f to v (v is kept, not copied) and reports whether f
// is new. While the hash is compact a new field goes to the end of the
// reply order and an existing one keeps its place, as in a listpack.
func (o *Object) HashSet(f string, v []byte) bool {
	_, had := o.Hash[f]
	o.Hash[f] = v
	if o.loose {
		return !had
	}
	l := o.limits()
	if len(f) > l.HashMaxListpackValue || len(v) > l.HashMaxListpackValue || len(o.Hash) > l.HashMaxListpackEntries {
		o.loose, o.order = true, nil
		return !had
	}
	if !had {
		o.order = append(o.order, f)
	}
	return !had
}

// HashDel deletes field f and reports whether it was there.
func (o *Object) HashDel(f string) bool {
	if _, had := o.Hash[f]; !had {
		return false
	}
	delete(o.Hash, f)
	if !o.loose {
		if i := slices.Index(o.order, f); i >= 0 {
			o.order = slices.Delete(o.order, i, i+1)
		}
	}
	return true
}

// HashFields returns the fields in the order Redis replies with them:
// insertion order while compact, otherwise (Redis's dict order being its
// own) sorted. The slice must not be modified.
func (o *Object) HashFields() []string {
	// A field written to the map directly rather than through HashSet
	// leaves no order to follow: fall back to sorting.
	if !o.loose && len(o.order) == len(o.Hash) {
		return o.order
	}
	ks := make([]string, 0, len(o.Hash))
	for k := range o.Hash {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// SetAdd adds member m and reports whether it is new.
func (o *Object) SetAdd(m string) bool {
	if _, had := o.Set[m]; had {
		return false
	}
	o.Set[m] = struct{}{}
	if !o.loose {
		if v, isInt := intsetValue(m); !isInt || len(o.Set) > o.limits().SetMaxIntsetEntries {
			o.loose = true
		} else if w := uint8(rdb.IntWidth(v)); w > o.isetWidth {
			o.isetWidth = w
		}
	}
	return true
}

// intsetValue parses m as Redis's string2ll does (canonical decimal only).
func intsetValue(m string) (int64, bool) {
	if len(m) == 0 || len(m) > 20 || m[0] == '+' || (m[0] == '0' && len(m) > 1) || (len(m) > 1 && m[0] == '-' && m[1] == '0') {
		return 0, false
	}
	v, err := strconv.ParseInt(m, 10, 64)
	return v, err == nil
}

// SetMembers returns the members in the order Redis replies with them:
// numeric for an intset, otherwise sorted.
func (o *Object) SetMembers() []string {
	ms := make([]string, 0, len(o.Set))
	for m := range o.Set {
		ms = append(ms, m)
	}
	if o.loose {
		sort.Strings(ms)
		return ms
	}
	sort.Slice(ms, func(i, j int) bool {
		a, _ := intsetValue(ms[i])
		b, _ := intsetValue(ms[j])
		return a < b
	})
	return ms
}

// ZSetNote records that member m was added to a sorted set, so that the
// set leaves the listpack encoding when it outgrows it.
func (o *Object) ZSetNote(m string) {
	if l := o.limits(); !o.loose && (len(m) > l.ZSetMaxListpackValue || o.ZSet.Len() > l.ZSetMaxListpackEntries) {
		o.loose = true
	}
}

// SetRaw records whether a string was last written by a command that
// edits it in place (APPEND, SETRANGE, SETBIT, BITOP), which leaves it raw
// in Redis whatever its length; SET and the like store a fresh value.
func (o *Object) SetRaw(raw bool) { o.loose, o.notInt = raw, false }

// SetNotInt records that a string was stored as Redis stores INCRBYFLOAT's
// result: never integer-encoded.
func (o *Object) SetNotInt() { o.notInt = true }

// Encoding is what OBJECT ENCODING reports.
func (o *Object) Encoding() string {
	switch o.Kind {
	case KindString:
		if o.loose {
			return "raw"
		}
		if _, isInt := intsetValue(string(o.Str)); isInt && !o.notInt {
			return "int"
		}
		if len(o.Str) <= 44 {
			return "embstr"
		}
		return "raw"
	case KindList:
		return "quicklist"
	case KindSet:
		if o.loose {
			return "hashtable"
		}
		return "intset"
	case KindZSet:
		if o.loose {
			return "skiplist"
		}
		return "listpack"
	case KindHash:
		if o.loose {
			return "hashtable"
		}
		return "listpack"
	case KindStream:
		return "stream"
	}
	return ""
}

// SetLimits makes the DB's objects follow l from their next write on; DBs
// of one server share one Limits value.
func (db *DB) SetLimits(l *Limits) {
	db.limits = l
	for _, o := range db.keys {
		o.lim = l
	}
}

// Limits returns the DB's encoding limits (the server may change them).
func (db *DB) Limits() *Limits { return db.limits }

// fit applies l to a value built outside any DB (under DefaultLimits) as it
// is stored: a STORE command's result (ZRANGESTORE, ZUNIONSTORE, SINTERSTORE
// ...) is sized for the destination server's configuration, as Redis sizes
// it, so lowered limits give the big encoding at once.
func (o *Object) fit(l *Limits) {
	if o.loose || l == nil {
		return
	}
	switch o.Kind {
	case KindZSet:
		loose := o.ZSet.Len() > l.ZSetMaxListpackEntries
		for i := 0; !loose && i < o.ZSet.Len(); i++ {
			loose = len(o.ZSet.At(i).Member) > l.ZSetMaxListpackValue
		}
		o.loose = loose
	case KindHash:
		loose := len(o.Hash) > l.HashMaxListpackEntries
		for f, v := range o.Hash {
			if loose {
				break
			}
			loose = len(f) > l.HashMaxListpackValue || len(v) > l.HashMaxListpackValue
		}
		if loose {
			o.loose, o.order = true, nil
		}
	case KindSet:
		o.loose = len(o.Set) > l.SetMaxIntsetEntries
	}
}
