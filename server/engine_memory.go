// Memory estimates of values as Redis 7.0 would hold them (MEMORY USAGE,
// maxmemory accounting).

package server

import (
	"math/bits"

	"github.com/redline-dev/redline/server/store"
)

// jemallocClass rounds an allocation up to jemalloc's size classes.
func jemallocClass(n int) int {
	if n <= 8 {
		return 8
	}
	if n <= 128 {
		return (n + 15) &^ 15
	}
	// four classes per power of two above 128
	p := 1 << (bits.Len(uint(n-1)) - 1)
	step := p / 4
	return (n + step - 1) / step * step
}

// objectSize estimates the memory of a value as Redis 7.0 would hold it
// (robj, sds headers, listpacks, dict entries, jemalloc rounding): an
// estimate for MEMORY USAGE, not a measurement of this server.
func objectSize(o *store.Object) int {
	const robj, dictEntry = 16, 24
	sds := func(n int) int { return jemallocClass(n + 4) }
	switch o.Kind {
	case store.KindString:
		switch o.Encoding() {
		case "int":
			return robj
		case "embstr":
			return jemallocClass(robj + 4 + len(o.Str))
		}
		return robj + sds(len(o.Str))
	case store.KindList:
		n := 0
		for i := 0; i < o.List.Len(); i++ {
			n += len(o.List.At(i)) + 2
		}
		return robj + 40 + 32*(1+n/8192) + jemallocClass(n+7)
	case store.KindSet:
		if o.Encoding() == "intset" {
			return robj + jemallocClass(8+8*o.Len())
		}
		n := robj + 96 + 8*o.Len()
		for m := range o.Set {
			n += dictEntry + sds(len(m))
		}
		return n
	case store.KindZSet:
		if o.Encoding() == "listpack" {
			n := 7
			for i := 0; i < o.ZSet.Len(); i++ {
				n += len(o.ZSet.At(i).Member) + 12
			}
			return robj + jemallocClass(n)
		}
		n := robj + 96 + 8*o.Len()
		for i := 0; i < o.ZSet.Len(); i++ {
			n += dictEntry + sds(len(o.ZSet.At(i).Member)) + 48
		}
		return n
	case store.KindHash:
		if o.Encoding() == "listpack" {
			n := 7
			for f, v := range o.Hash {
				n += len(f) + len(v) + 4
			}
			return robj + jemallocClass(n)
		}
		n := robj + 96 + 8*o.Len()
		for f, v := range o.Hash {
			n += dictEntry + sds(len(f)) + sds(len(v))
		}
		return n
	}
	return robj
}
