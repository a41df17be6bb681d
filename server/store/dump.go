package store

import (
	"errors"
	"math"
	"strconv"

	"github.com/redline-dev/redline/server/rdb"
)

// DUMP payloads are Redis 7.0's: the value in its RDB encoding (type byte,
// then the value as rdbSaveObject writes it), the RDB version (10) and a
// CRC-64 (Jones) of all that, both little-endian. Compact values are dumped
// as the listpack or intset blob Redis holds in memory, built the way
// Redis builds it, so a DUMP of the same value is byte-identical to
// redis-server's for strings, compact hashes, sets and sorted sets, large
// sorted sets and lists built by RPUSH; large hashes and sets follow our
// (sorted) order where Redis follows its hash table's. RESTORE accepts every
// encoding Redis 7.0 loads, old ones (ziplist, zipmap, quicklist v1)
// included, except modules and streams.

// ErrBadPayload is returned by Restore for a payload whose footer (RDB
// version, checksum) is wrong; its text is Redis's RESTORE error.
var ErrBadPayload = errors.New("ERR DUMP payload version or checksum are wrong")

// ErrBadFormat is returned by Restore for a payload whose footer is right
// but whose value cannot be decoded.
var ErrBadFormat = errors.New("ERR Bad data format")

// Dump serialises o's value (not its TTL) as Redis's DUMP does.
func Dump(o *Object) []byte { return rdb.Seal(AppendValue(nil, o, true)) }

// AppendValue appends o's value in its RDB encoding (the type byte, then
// the value as rdbSaveObject writes it), what both DUMP and an RDB file
// hold; compress is rdbcompression (LZF for strings over 20 bytes).
func AppendValue(b []byte, o *Object, compress bool) []byte {
	switch o.Kind {
	case KindStream:
		b = dumpStream(b, o.Stream, compress)
	case KindString:
		b = append(b, rdb.TypeString)
		b = rdb.AppendString(b, o.Str, compress)
	case KindList:
		b = append(b, rdb.TypeListQuicklist2)
		nodes := quicklistNodes(o.List, o.limits().ListMaxListpackSize)
		b = rdb.AppendLen(b, uint64(len(nodes)))
		for _, n := range nodes {
			b = rdb.AppendLen(b, rdb.ContainerPacked)
			b = rdb.AppendString(b, n.Bytes(), compress)
		}
	case KindSet:
		ms := o.SetMembers()
		if !o.loose {
			vals := make([]int64, len(ms))
			for i, m := range ms {
				vals[i], _ = intsetValue(m)
			}
			b = append(b, rdb.TypeSetIntset)
			b = rdb.AppendString(b, rdb.Intset(vals, int(o.isetWidth)), compress)
			break
		}
		b = append(b, rdb.TypeSet)
		b = rdb.AppendLen(b, uint64(len(ms)))
		for _, m := range ms {
			b = rdb.AppendString(b, []byte(m), compress)
		}
	case KindZSet:
		n := o.ZSet.Len()
		if !o.loose {
			lp := rdb.NewListpack()
			for i := 0; i < n; i++ {
				e := o.ZSet.At(i)
				lp.Append([]byte(e.Member))
				appendScore(lp, e.Score)
			}
			b = append(b, rdb.TypeZSetListpack)
			b = rdb.AppendString(b, lp.Bytes(), compress)
			break
		}
		b = append(b, rdb.TypeZSet2)
		b = rdb.AppendLen(b, uint64(n))
		for i := n - 1; i >= 0; i-- {
			e := o.ZSet.At(i)
			b = rdb.AppendString(b, []byte(e.Member), compress)
			b = rdb.AppendBinaryDouble(b, e.Score)
		}
	case KindHash:
		fs := o.HashFields()
		if !o.loose {
			lp := rdb.NewListpack()
			for _, f := range fs {
				lp.Append([]byte(f))
				lp.Append(o.Hash[f])
			}
			b = append(b, rdb.TypeHashListpack)
			b = rdb.AppendString(b, lp.Bytes(), compress)
			break
		}
		b = append(b, rdb.TypeHash)
		b = rdb.AppendLen(b, uint64(len(fs)))
		for _, f := range fs {
			b = rdb.AppendString(b, []byte(f), compress)
			b = rdb.AppendString(b, o.Hash[f], compress)
		}
	}
	return b
}

// appendScore adds a sorted-set score as Redis's zzlInsertAt does: as an
// integer when the double is one (and within ±2^62), else its %.17g text.
func appendScore(lp *rdb.Listpack, f float64) {
	if f >= -(math.MaxInt64/2) && f <= math.MaxInt64/2 && f == math.Trunc(f) {
		lp.AppendInt(int64(f))
		return
	}
	var s []byte
	switch {
	case math.IsInf(f, 1):
		s = []byte("inf")
	case math.IsInf(f, -1):
		s = []byte("-inf")
	default:
		s = strconv.AppendFloat(nil, f, 'g', 17, 64)
	}
	lp.Append(s)
}

// quicklistNodes splits a list into listpack nodes as Redis's
// quicklistPushTail does for a list built by RPUSH.
func quicklistNodes(l *List, fill int) []*rdb.Listpack {
	levels := []int{4096, 8192, 16384, 32768, 65536}
	const safety, overhead = 8192, 8
	var nodes []*rdb.Listpack
	var cur *rdb.Listpack
	for i := 0; i < l.Len(); i++ {
		e := l.At(i)
		ok := false
		if cur != nil {
			sz := cur.Size() + len(e) + overhead
			switch {
			case fill < 0 && -fill-1 < len(levels):
				ok = sz <= levels[-fill-1]
			case sz > safety:
				ok = false
			default:
				ok = fill >= 0 && cur.Len() < fill
			}
		}
		if !ok {
			cur = rdb.NewListpack()
			nodes = append(nodes, cur)
		}
		cur.Append(e)
	}
	return nodes
}

// Restore decodes a DUMP payload into a new object, as a server with
// Redis's default encoding limits would.
func Restore(p []byte) (*Object, error) { return restore(p, &DefaultLimits) }

// Restore decodes a DUMP payload into a new object for db (its encoding
// limits decide the object's encoding).
func (db *DB) Restore(p []byte) (*Object, error) { return restore(p, db.limits) }

func restore(p []byte, lim *Limits) (*Object, error) {
	if _, ok := rdb.Verify(p); !ok {
		return nil, ErrBadPayload
	}
	// Redis decodes from the whole payload: a value running into the
	// footer is read from it, and bytes left over are ignored.
	r := &rdb.Reader{B: p}
	o, err := decodeValue(r, r.Byte(), lim)
	if err != nil || r.Err != nil {
		return nil, ErrBadFormat
	}
	if o.Kind != KindString && o.Kind != KindStream && o.Len() == 0 {
		return nil, ErrBadFormat
	}
	return o, nil
}

var errDup = errors.New("duplicate member")

func decodeValue(r *rdb.Reader, t byte, lim *Limits) (*Object, error) {
	newObject := func(k Kind) *Object { o := NewObject(k); o.lim = lim; return o }
	switch t {
	case rdb.TypeStreamListpack, rdb.TypeStreamListpack2:
		return decodeStream(r, t == rdb.TypeStreamListpack2)
	case rdb.TypeString:
		o := newObject(KindString)
		o.Str = r.String()
		return o, r.Err
	case rdb.TypeList:
		o := newObject(KindList)
		for n := r.Count(); n > 0 && r.Err == nil; n-- {
			o.List.PushBack(r.String())
		}
		return o, r.Err
	case rdb.TypeListQuicklist, rdb.TypeListQuicklist2:
		o := newObject(KindList)
		for n := r.Count(); n > 0 && r.Err == nil; n-- {
			container := uint64(rdb.ContainerPacked)
			if t == rdb.TypeListQuicklist2 {
				container = r.Len()
				if container != rdb.ContainerPacked && container != rdb.ContainerPlain {
					return nil, rdb.ErrFormat
				}
			}
			blob := r.String()
			if r.Err != nil || len(blob) == 0 {
				return nil, rdb.ErrFormat
			}
			if container == rdb.ContainerPlain {
				o.List.PushBack(blob)
				continue
			}
			parse := rdb.ParseListpack
			if t == rdb.TypeListQuicklist {
				parse = rdb.ParseZiplist
			}
			es, err := parse(blob)
			if err != nil {
				return nil, err
			}
			for _, e := range es {
				o.List.PushBack(e)
			}
		}
		return o, r.Err
	case rdb.TypeListZiplist:
		es, err := rdb.ParseZiplist(r.String())
		if err != nil || r.Err != nil {
			return nil, rdb.ErrFormat
		}
		o := newObject(KindList)
		for _, e := range es {
			o.List.PushBack(e)
		}
		return o, nil
	case rdb.TypeSet:
		o := newObject(KindSet)
		n := r.Count()
		if n > lim.SetMaxIntsetEntries {
			o.loose = true
		}
		for ; n > 0 && r.Err == nil; n-- {
			if !o.SetAdd(string(r.String())) && r.Err == nil {
				return nil, errDup
			}
		}
		return o, r.Err
	case rdb.TypeSetIntset:
		vals, w, err := rdb.ParseIntset(r.String())
		if err != nil || r.Err != nil {
			return nil, rdb.ErrFormat
		}
		o := newObject(KindSet)
		for _, v := range vals {
			o.Set[strconv.FormatInt(v, 10)] = struct{}{}
		}
		o.isetWidth = uint8(w)
		o.loose = len(vals) > lim.SetMaxIntsetEntries
		return o, nil
	case rdb.TypeZSet, rdb.TypeZSet2:
		o := newObject(KindZSet)
		maxLen := 0
		for n := r.Count(); n > 0 && r.Err == nil; n-- {
			m := r.String()
			var s float64
			if t == rdb.TypeZSet2 {
				s = r.BinaryDouble()
			} else {
				s = r.OldDouble()
			}
			if r.Err != nil {
				break
			}
			if math.IsNaN(s) || !o.ZSet.Add(string(m), s) {
				return nil, errDup
			}
			maxLen = max(maxLen, len(m))
		}
		o.loose = o.ZSet.Len() > lim.ZSetMaxListpackEntries || maxLen > lim.ZSetMaxListpackValue
		return o, r.Err
	case rdb.TypeZSetListpack, rdb.TypeZSetZiplist:
		es, err := parseBlob(r, t == rdb.TypeZSetListpack)
		if err != nil || len(es)%2 != 0 {
			return nil, rdb.ErrFormat
		}
		o := newObject(KindZSet)
		for i := 0; i < len(es); i += 2 {
			s, err := strconv.ParseFloat(string(es[i+1]), 64)
			if err != nil && !errors.Is(err, strconv.ErrRange) || math.IsNaN(s) || !o.ZSet.Add(string(es[i]), s) {
				return nil, rdb.ErrFormat
			}
		}
		o.loose = o.ZSet.Len() > lim.ZSetMaxListpackEntries
		return o, nil
	case rdb.TypeHash:
		o := newObject(KindHash)
		n := r.Count()
		if n > lim.HashMaxListpackEntries {
			o.loose = true
		}
		for ; n > 0 && r.Err == nil; n-- {
			f, v := r.String(), r.String()
			if r.Err == nil && !o.HashSet(string(f), v) {
				return nil, errDup
			}
		}
		return o, r.Err
	case rdb.TypeHashListpack, rdb.TypeHashZiplist, rdb.TypeHashZipmap:
		var es [][]byte
		var err error
		if t == rdb.TypeHashZipmap {
			es, err = rdb.ParseZipmap(r.String())
		} else {
			es, err = parseBlob(r, t == rdb.TypeHashListpack)
		}
		if err != nil || r.Err != nil || len(es)%2 != 0 {
			return nil, rdb.ErrFormat
		}
		o := newObject(KindHash)
		maxLen := 0
		for i := 0; i < len(es); i += 2 {
			f := string(es[i])
			if _, dup := o.Hash[f]; dup {
				return nil, errDup
			}
			o.Hash[f] = es[i+1]
			o.order = append(o.order, f)
			maxLen = max(maxLen, len(f), len(es[i+1]))
		}
		if len(o.Hash) > lim.HashMaxListpackEntries || (t == rdb.TypeHashZipmap && maxLen > lim.HashMaxListpackValue) {
			o.loose, o.order = true, nil
		}
		return o, nil
	}
	return nil, rdb.ErrFormat
}

func parseBlob(r *rdb.Reader, listpack bool) ([][]byte, error) {
	blob := r.String()
	if r.Err != nil {
		return nil, r.Err
	}
	if listpack {
		return rdb.ParseListpack(blob)
	}
	return rdb.ParseZiplist(blob)
}
