package cluster

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Wire format of a bus message (our own, not Redis's), big endian:
//
//	magic "RLcb" | totlen u32 (whole frame) | version u8 | type u8 | mflags u8 |
//	state u8 | flags u16 | port u16 | cport u16 | currentEpoch u64 |
//	configEpoch u64 | offset u64 | sender str | master str | ip str |
//	slots [2048] | body
//
// where str is a u8 length and bytes. Bodies: PING/PONG/MEET: count u16 then
// per entry id str, pingSent u32, pongReceived u32, port u16, cport u16,
// flags u16, ip str, then the sender's hostname str; FAIL: id str; UPDATE: configEpoch u64, id str,
// slots [2048]; PUBLISH: channel u32-length bytes, payload u32-length bytes;
// AUTH_REQUEST, AUTH_ACK, MFSTART: empty.

const (
	wireMagic   = "RLcb"
	wireVersion = 1
	// MaxFrame bounds the size of one frame.
	MaxFrame = 64 << 20
	hdrFixed = 4 + 4 + 1 + 1 + 1 + 1 + 2 + 2 + 2 + 8 + 8 + 8
)

// ErrBadFrame is returned (wrapped) for frames that cannot be decoded.
var ErrBadFrame = errors.New("bad cluster bus frame")

type enc struct{ b []byte }

func (e *enc) u8(v uint8)   { e.b = append(e.b, v) }
func (e *enc) u16(v uint16) { e.b = binary.BigEndian.AppendUint16(e.b, v) }
func (e *enc) u32(v uint32) { e.b = binary.BigEndian.AppendUint32(e.b, v) }
func (e *enc) u64(v uint64) { e.b = binary.BigEndian.AppendUint64(e.b, v) }
func (e *enc) str(s string) {
	if len(s) > 255 {
		s = s[:255]
	}
	e.u8(uint8(len(s)))
	e.b = append(e.b, s...)
}
func (e *enc) bytes32(b []byte) { e.u32(uint32(len(b))); e.b = append(e.b, b...) }

// AppendMessage appends the frame of m to b.
func AppendMessage(b []byte, m *Message) []byte {
	e := enc{b}
	start := len(e.b)
	e.b = append(e.b, wireMagic...)
	e.u32(0)
	e.u8(wireVersion)
	e.u8(uint8(m.Type))
	e.u8(m.MFlags)
	if m.StateOK {
		e.u8(1)
	} else {
		e.u8(0)
	}
	e.u16(uint16(m.Flags))
	e.u16(m.Port)
	e.u16(m.CPort)
	e.u64(m.CurrentEpoch)
	e.u64(m.ConfigEpoch)
	e.u64(uint64(m.Offset))
	e.str(m.Sender)
	e.str(m.Master)
	e.str(m.IP)
	e.b = append(e.b, m.Slots[:]...)
	switch m.Type {
	case MsgPing, MsgPong, MsgMeet:
		e.u16(uint16(len(m.Gossip)))
		for _, g := range m.Gossip {
			e.str(g.ID)
			e.u32(g.PingSent)
			e.u32(g.PongReceived)
			e.u16(g.Port)
			e.u16(g.CPort)
			e.u16(uint16(g.Flags))
			e.str(g.IP)
		}
		e.str(m.Hostname)
	case MsgFail:
		e.str(m.About)
	case MsgUpdate:
		e.u64(m.UpdateConfigEpoch)
		e.str(m.About)
		e.b = append(e.b, m.UpdateSlots[:]...)
	case MsgPublish, MsgPublishShard:
		e.bytes32(m.Channel)
		e.bytes32(m.Payload)
	}
	binary.BigEndian.PutUint32(e.b[start+4:], uint32(len(e.b)-start))
	return e.b
}

// EncodeMessage returns the frame of m.
func EncodeMessage(m *Message) []byte { return AppendMessage(nil, m) }

type dec struct {
	b   []byte
	err error
}

func (d *dec) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || len(d.b) < n {
		d.err = fmt.Errorf("%w: truncated", ErrBadFrame)
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}
func (d *dec) u8() uint8 {
	if v := d.take(1); v != nil {
		return v[0]
	}
	return 0
}
func (d *dec) u16() uint16 {
	if v := d.take(2); v != nil {
		return binary.BigEndian.Uint16(v)
	}
	return 0
}
func (d *dec) u32() uint32 {
	if v := d.take(4); v != nil {
		return binary.BigEndian.Uint32(v)
	}
	return 0
}
func (d *dec) u64() uint64 {
	if v := d.take(8); v != nil {
		return binary.BigEndian.Uint64(v)
	}
	return 0
}
func (d *dec) str() string { return string(d.take(int(d.u8()))) }
func (d *dec) bytes32() []byte {
	n := d.u32()
	if int64(n) > int64(len(d.b)) {
		d.err = fmt.Errorf("%w: truncated", ErrBadFrame)
		return nil
	}
	return append([]byte(nil), d.take(int(n))...)
}

// DecodeMessage decodes exactly one frame.
func DecodeMessage(frame []byte) (Message, error) {
	var m Message
	if len(frame) < hdrFixed || string(frame[:4]) != wireMagic {
		return m, fmt.Errorf("%w: no magic", ErrBadFrame)
	}
	if int(binary.BigEndian.Uint32(frame[4:])) != len(frame) {
		return m, fmt.Errorf("%w: length mismatch", ErrBadFrame)
	}
	d := dec{b: frame[8:]}
	if v := d.u8(); v != wireVersion {
		return m, fmt.Errorf("%w: version %d", ErrBadFrame, v)
	}
	m.Type = MsgType(d.u8())
	if m.Type >= msgTypeCount {
		return m, fmt.Errorf("%w: unknown type %d", ErrBadFrame, m.Type)
	}
	m.MFlags = d.u8()
	m.StateOK = d.u8() == 1
	m.Flags = Flags(d.u16())
	m.Port = d.u16()
	m.CPort = d.u16()
	m.CurrentEpoch = d.u64()
	m.ConfigEpoch = d.u64()
	m.Offset = int64(d.u64())
	m.Sender = d.str()
	m.Master = d.str()
	m.IP = d.str()
	copy(m.Slots[:], d.take(len(m.Slots)))
	switch m.Type {
	case MsgPing, MsgPong, MsgMeet:
		cnt := int(d.u16())
		if cnt > len(d.b)/16 {
			return m, fmt.Errorf("%w: gossip count %d too large", ErrBadFrame, cnt)
		}
		if cnt > 0 {
			m.Gossip = make([]Gossip, 0, cnt)
		}
		for i := 0; i < cnt && d.err == nil; i++ {
			var g Gossip
			g.ID = d.str()
			g.PingSent = d.u32()
			g.PongReceived = d.u32()
			g.Port = d.u16()
			g.CPort = d.u16()
			g.Flags = Flags(d.u16())
			g.IP = d.str()
			m.Gossip = append(m.Gossip, g)
		}
		if len(d.b) > 0 {
			m.Hostname = d.str()
		}
	case MsgFail:
		m.About = d.str()
	case MsgUpdate:
		m.UpdateConfigEpoch = d.u64()
		m.About = d.str()
		copy(m.UpdateSlots[:], d.take(len(m.UpdateSlots)))
	case MsgPublish, MsgPublishShard:
		m.Channel = d.bytes32()
		m.Payload = d.bytes32()
	}
	if d.err != nil {
		return Message{}, d.err
	}
	if len(d.b) != 0 {
		return Message{}, fmt.Errorf("%w: %d trailing bytes", ErrBadFrame, len(d.b))
	}
	return m, nil
}

// ReadFrame reads one frame from r into buf (grown as needed) and returns it.
func ReadFrame(r io.Reader, buf []byte) ([]byte, error) {
	if cap(buf) < 8 {
		buf = make([]byte, 0, 4096)
	}
	buf = buf[:8]
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	if string(buf[:4]) != wireMagic {
		return nil, fmt.Errorf("%w: no magic", ErrBadFrame)
	}
	n := int(binary.BigEndian.Uint32(buf[4:]))
	if n < hdrFixed || n > MaxFrame {
		return nil, fmt.Errorf("%w: frame length %d", ErrBadFrame, n)
	}
	if cap(buf) < n {
		nb := make([]byte, n)
		copy(nb, buf[:8])
		buf = nb
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf[8:]); err != nil {
		return nil, err
	}
	return buf, nil
}
