package store

import (
	"encoding/binary"
	"errors"
	"strconv"

	"github.com/redline-dev/redline/server/rdb"
)

// Streams in DUMP payloads are Redis 7.0's RDB_TYPE_STREAM_LISTPACKS_2:
// each node as its 128-bit master ID and a listpack laid out as
// t_stream.c's (master entry, then entries delta-encoded against it), the
// metadata, then the groups with their PELs and consumers. A node holds
// only its live entries here (Redis keeps deleted ones flagged until the
// node empties), so a dump after XDEL or a partial trim is Redis's value
// but not its bytes. RESTORE also reads Redis 5-6.2's
// RDB_TYPE_STREAM_LISTPACKS.

const (
	streamFlagDeleted    = 1
	streamFlagSameFields = 2
)

func appendRawID(b []byte, id StreamID) []byte {
	b = binary.BigEndian.AppendUint64(b, id.Ms)
	return binary.BigEndian.AppendUint64(b, id.Seq)
}

func dumpStream(b []byte, s *Stream, compress bool) []byte {
	b = append(b, rdb.TypeStreamListpack2)
	b = rdb.AppendLen(b, uint64(len(s.nodes)))
	for _, n := range s.nodes {
		b = rdb.AppendString(b, appendRawID(nil, n.master), false)
		lp := rdb.NewListpack()
		lp.AppendInt(int64(len(n.ents)))
		lp.AppendInt(0)
		lp.AppendInt(int64(len(n.fields)))
		for _, f := range n.fields {
			lp.Append(f)
		}
		lp.AppendInt(0)
		for _, e := range n.ents {
			same := len(e.Fields)/2 == len(n.fields)
			for i := 0; same && i < len(n.fields); i++ {
				same = string(n.fields[i]) == string(e.Fields[2*i])
			}
			flags := int64(0)
			if same {
				flags = streamFlagSameFields
			}
			lp.AppendInt(flags)
			lp.AppendInt(int64(e.ID.Ms - n.master.Ms))
			lp.AppendInt(int64(e.ID.Seq - n.master.Seq))
			cnt := int64(len(e.Fields)/2 + 3)
			if same {
				for i := 1; i < len(e.Fields); i += 2 {
					lp.Append(e.Fields[i])
				}
			} else {
				lp.AppendInt(int64(len(e.Fields) / 2))
				for _, f := range e.Fields {
					lp.Append(f)
				}
				cnt += int64(len(e.Fields)/2 + 1)
			}
			lp.AppendInt(cnt)
		}
		b = rdb.AppendString(b, lp.Bytes(), compress)
	}
	b = rdb.AppendLen(b, uint64(s.length))
	b = rdb.AppendLen(b, s.LastID.Ms)
	b = rdb.AppendLen(b, s.LastID.Seq)
	b = rdb.AppendLen(b, s.FirstID.Ms)
	b = rdb.AppendLen(b, s.FirstID.Seq)
	b = rdb.AppendLen(b, s.MaxDeletedEntryID.Ms)
	b = rdb.AppendLen(b, s.MaxDeletedEntryID.Seq)
	b = rdb.AppendLen(b, uint64(s.EntriesAdded))
	gs := s.Groups()
	b = rdb.AppendLen(b, uint64(len(gs)))
	for _, g := range gs {
		b = rdb.AppendString(b, []byte(g.Name), compress)
		b = rdb.AppendLen(b, g.LastID.Ms)
		b = rdb.AppendLen(b, g.LastID.Seq)
		b = rdb.AppendLen(b, uint64(g.EntriesRead))
		b = rdb.AppendLen(b, uint64(len(g.pel.list)))
		for _, p := range g.pel.list {
			b = appendRawID(b, p.ID)
			b = binary.LittleEndian.AppendUint64(b, uint64(p.DeliveryTime))
			b = rdb.AppendLen(b, uint64(p.DeliveryCount))
		}
		cs := g.Consumers()
		b = rdb.AppendLen(b, uint64(len(cs)))
		for _, c := range cs {
			b = rdb.AppendString(b, []byte(c.Name), compress)
			b = binary.LittleEndian.AppendUint64(b, uint64(c.SeenTime))
			b = rdb.AppendLen(b, uint64(len(c.pel.list)))
			for _, p := range c.pel.list {
				b = appendRawID(b, p.ID)
			}
		}
	}
	return b
}

var errStream = errors.New("bad stream")

func readRawID(r *rdb.Reader) StreamID {
	raw := r.Raw(16)
	if len(raw) != 16 {
		return StreamID{}
	}
	return StreamID{binary.BigEndian.Uint64(raw), binary.BigEndian.Uint64(raw[8:])}
}

func lpInt(es [][]byte, i int) (int64, bool) {
	if i >= len(es) {
		return 0, false
	}
	v, err := strconv.ParseInt(string(es[i]), 10, 64)
	return v, err == nil
}

// decodeStreamNode rebuilds one node from its listpack.
func decodeStreamNode(master StreamID, blob []byte) (*streamNode, error) {
	es, err := rdb.ParseListpack(blob)
	if err != nil {
		return nil, err
	}
	count, ok1 := lpInt(es, 0)
	deleted, ok2 := lpInt(es, 1)
	nf, ok3 := lpInt(es, 2)
	if !ok1 || !ok2 || !ok3 || nf < 0 || int(3+nf) >= len(es) {
		return nil, errStream
	}
	n := &streamNode{master: master, deleted: int(deleted)}
	n.fields = es[3 : 3+nf]
	i := int(3 + nf + 1) // past the master entry's 0
	for k := int64(0); k < count+deleted; k++ {
		flags, ok1 := lpInt(es, i)
		msd, ok2 := lpInt(es, i+1)
		seqd, ok3 := lpInt(es, i+2)
		if !ok1 || !ok2 || !ok3 {
			return nil, errStream
		}
		i += 3
		var fields [][]byte
		if flags&streamFlagSameFields != 0 {
			if i+int(nf) > len(es) {
				return nil, errStream
			}
			for j := 0; j < int(nf); j++ {
				fields = append(fields, n.fields[j], es[i+j])
			}
			i += int(nf)
		} else {
			m, ok := lpInt(es, i)
			if !ok || m < 0 || i+1+2*int(m) > len(es) {
				return nil, errStream
			}
			fields = append(fields, es[i+1:i+1+2*int(m)]...)
			i += 1 + 2*int(m)
		}
		i++ // lp-count
		n.total++
		if flags&streamFlagDeleted != 0 {
			continue
		}
		id := StreamID{master.Ms + uint64(msd), master.Seq + uint64(seqd)}
		if len(n.ents) > 0 && id.Cmp(n.ents[len(n.ents)-1].ID) <= 0 {
			return nil, errStream
		}
		n.ents = append(n.ents, StreamEntry{ID: id, Fields: fields})
	}
	if len(n.ents) != int(count) {
		return nil, errStream
	}
	n.bytes = len(blob) - lpIntSize(count) - lpIntSize(deleted)
	return n, nil
}

func decodeStream(r *rdb.Reader, v2 bool) (*Object, error) {
	o := NewObject(KindStream)
	s := o.Stream
	nodes := r.Count()
	for ; nodes > 0 && r.Err == nil; nodes-- {
		key := r.String()
		if len(key) != 16 {
			return nil, errStream
		}
		master := StreamID{binary.BigEndian.Uint64(key), binary.BigEndian.Uint64(key[8:])}
		blob := r.String()
		if r.Err != nil {
			return nil, r.Err
		}
		n, err := decodeStreamNode(master, blob)
		if err != nil {
			return nil, err
		}
		if len(s.nodes) > 0 {
			prev := s.nodes[len(s.nodes)-1]
			if master.Cmp(prev.master) <= 0 || (len(n.ents) > 0 && len(prev.ents) > 0 && n.ents[0].ID.Cmp(prev.ents[len(prev.ents)-1].ID) <= 0) {
				return nil, errStream
			}
		}
		if len(n.ents) > 0 {
			s.nodes = append(s.nodes, n)
			s.length += len(n.ents)
		}
	}
	length := r.Len()
	s.LastID = StreamID{r.Len(), r.Len()}
	if v2 {
		s.FirstID = StreamID{r.Len(), r.Len()}
		s.MaxDeletedEntryID = StreamID{r.Len(), r.Len()}
		s.EntriesAdded = int64(r.Len())
	} else {
		s.EntriesAdded = int64(length)
		s.FirstID, _ = s.First()
	}
	if r.Err != nil || length != uint64(s.length) {
		return nil, errStream
	}
	groups := r.Count()
	for ; groups > 0 && r.Err == nil; groups-- {
		name := r.String()
		last := StreamID{r.Len(), r.Len()}
		var er int64
		if v2 {
			er = int64(r.Len())
		} else {
			er = s.EstimateDistance(last)
		}
		if r.Err != nil {
			return nil, r.Err
		}
		g := s.CreateGroup(string(name), last, er)
		if g == nil {
			return nil, errStream
		}
		pels := r.Count()
		for ; pels > 0 && r.Err == nil; pels-- {
			id := readRawID(r)
			t := r.Raw(8)
			cnt := r.Len()
			if r.Err != nil {
				return nil, r.Err
			}
			if g.pel.get(id) != nil {
				return nil, errStream
			}
			g.pel.insert(&StreamNACK{ID: id, DeliveryTime: int64(binary.LittleEndian.Uint64(t)), DeliveryCount: int64(cnt)})
		}
		cons := r.Count()
		for ; cons > 0 && r.Err == nil; cons-- {
			cname := r.String()
			t := r.Raw(8)
			if r.Err != nil {
				return nil, r.Err
			}
			c := g.CreateConsumer(string(cname), int64(binary.LittleEndian.Uint64(t)))
			if c == nil {
				return nil, errStream
			}
			np := r.Count()
			for ; np > 0 && r.Err == nil; np-- {
				id := readRawID(r)
				n := g.pel.get(id)
				if n == nil || n.Consumer != nil {
					return nil, errStream
				}
				n.Consumer = c
				c.pel.insert(n)
			}
		}
		for _, n := range g.pel.list {
			if n.Consumer == nil {
				return nil, errStream // a NACK no consumer owns
			}
		}
	}
	if r.Err != nil {
		return nil, r.Err
	}
	return o, nil
}
