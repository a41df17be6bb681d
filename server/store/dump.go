package store

import (
	"encoding/binary"
	"errors"
	"hash/crc64"
	"math"
)

// DUMP payload format (ours, not Redis's RDB): kind byte, then the value,
// then a 2-byte little-endian format version and an 8-byte little-endian
// CRC-64/ECMA of everything before it. Strings are uvarint-length prefixed.

// DumpVersion is the payload format version this build writes and reads.
const DumpVersion = 1

var crcTab = crc64.MakeTable(crc64.ECMA)

// ErrBadPayload is returned by Restore for a corrupt or foreign payload; its
// text is Redis's RESTORE error.
var ErrBadPayload = errors.New("ERR DUMP payload version or checksum are wrong")

// Dump serialises o's value (not its TTL).
func Dump(o *Object) []byte {
	b := []byte{byte(o.Kind)}
	str := func(s []byte) { b = binary.AppendUvarint(b, uint64(len(s))); b = append(b, s...) }
	switch o.Kind {
	case KindString:
		str(o.Str)
	case KindList:
		b = binary.AppendUvarint(b, uint64(o.List.Len()))
		for i := 0; i < o.List.Len(); i++ {
			str(o.List.At(i))
		}
	case KindSet:
		b = binary.AppendUvarint(b, uint64(len(o.Set)))
		for _, m := range o.SetMembers() {
			str([]byte(m))
		}
	case KindHash:
		b = binary.AppendUvarint(b, uint64(len(o.Hash)))
		for _, k := range o.HashFields() {
			str([]byte(k))
			str(o.Hash[k])
		}
	case KindZSet:
		b = binary.AppendUvarint(b, uint64(o.ZSet.Len()))
		for i := 0; i < o.ZSet.Len(); i++ {
			e := o.ZSet.At(i)
			str([]byte(e.Member))
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(e.Score))
		}
	}
	b = binary.LittleEndian.AppendUint16(b, DumpVersion)
	return binary.LittleEndian.AppendUint64(b, crc64.Checksum(b, crcTab))
}

// Restore decodes a Dump payload into a new object.
func Restore(p []byte) (*Object, error) {
	if len(p) < 11 {
		return nil, ErrBadPayload
	}
	body := p[:len(p)-8]
	if crc64.Checksum(body, crcTab) != binary.LittleEndian.Uint64(p[len(p)-8:]) {
		return nil, ErrBadPayload
	}
	if binary.LittleEndian.Uint16(body[len(body)-2:]) != DumpVersion {
		return nil, ErrBadPayload
	}
	d := decoder{b: body[:len(body)-2]}
	k := Kind(d.byte())
	if k > KindHash {
		return nil, ErrBadPayload
	}
	o := NewObject(k)
	switch k {
	case KindString:
		o.Str = d.str()
	case KindList:
		for n := d.count(); n > 0 && d.err == nil; n-- {
			o.List.PushBack(d.str())
		}
	case KindSet:
		for n := d.count(); n > 0 && d.err == nil; n-- {
			o.SetAdd(string(d.str()))
		}
	case KindHash:
		for n := d.count(); n > 0 && d.err == nil; n-- {
			f := string(d.str())
			o.HashSet(f, d.str())
		}
	case KindZSet:
		for n := d.count(); n > 0 && d.err == nil; n-- {
			m := string(d.str())
			o.ZSet.Add(m, math.Float64frombits(d.u64()))
			o.ZSetNote(m)
		}
	}
	if d.err != nil || len(d.b) != 0 {
		return nil, ErrBadPayload
	}
	if k != KindString && o.Len() == 0 {
		return nil, ErrBadPayload
	}
	return o, nil
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.err = ErrBadPayload
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) count() uint64 {
	n, m := binary.Uvarint(d.b)
	if m <= 0 || n > uint64(len(d.b)) {
		d.err = ErrBadPayload
		return 0
	}
	d.b = d.b[m:]
	return n
}

func (d *decoder) str() []byte {
	n := d.count()
	if d.err != nil || n > uint64(len(d.b)) {
		d.err = ErrBadPayload
		return nil
	}
	s := append([]byte{}, d.b[:n]...)
	d.b = d.b[n:]
	return s
}

func (d *decoder) u64() uint64 {
	if len(d.b) < 8 {
		d.err = ErrBadPayload
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}
