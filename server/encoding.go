package server

import (
	"strconv"

	"github.com/redline-dev/redline/server/store"
)

// objectEncoding is the encoding Redis 7.0 would report for o (OBJECT
// ENCODING, DEBUG OBJECT). This server stores every value one way; Redis's
// suites check the compact encodings Redis picks by size, so they are
// derived from the same limits (hash-max-listpack-*, zset-max-listpack-*,
// set-max-intset-entries). Redis never converts back to the compact
// encoding when a value shrinks; this reports by the current size.
func (s *Server) objectEncoding(o *store.Object) string {
	switch o.Kind {
	case store.KindString:
		if _, ok := parseInt(o.Str); ok && len(o.Str) <= 20 {
			return "int"
		} else if len(o.Str) <= 44 {
			return "embstr"
		}
		return "raw"
	case store.KindList:
		return "quicklist"
	case store.KindSet:
		if int64(len(o.Set)) > s.configInt("set-max-intset-entries") {
			return "hashtable"
		}
		for m := range o.Set {
			if v, ok := parseInt([]byte(m)); !ok || strconv.FormatInt(v, 10) != m {
				return "hashtable"
			}
		}
		return "intset"
	case store.KindHash:
		if int64(len(o.Hash)) > s.configInt("hash-max-listpack-entries") {
			return "hashtable"
		}
		max := int(s.configInt("hash-max-listpack-value"))
		for f, v := range o.Hash {
			if len(f) > max || len(v) > max {
				return "hashtable"
			}
		}
		return "listpack"
	case store.KindZSet:
		if int64(o.ZSet.Len()) > s.configInt("zset-max-listpack-entries") {
			return "skiplist"
		}
		max := int(s.configInt("zset-max-listpack-value"))
		for i := 0; i < o.ZSet.Len(); i++ {
			if len(o.ZSet.At(i).Member) > max {
				return "skiplist"
			}
		}
		return "listpack"
	}
	return "raw"
}

// configInt reads an integer directive as CONFIG GET reports it (0 when it
// is not an integer).
func (s *Server) configInt(name string) int64 {
	kv := s.cfg.Get(name, func(p, n string) bool { return p == n })
	if len(kv) == 0 {
		return 0
	}
	v, _ := strconv.ParseInt(kv[0][1], 10, 64)
	return v
}
