package cluster

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"
)

func sampleMessages() []Message {
	var slots SlotBitmap
	slots.Set(0)
	slots.Set(5000)
	slots.Set(16383)
	base := Message{Sender: "0123456789abcdef0123456789abcdef01234567", CurrentEpoch: 7, ConfigEpoch: 3,
		Offset: 123456, Master: "89abcdef0123456789abcdef0123456789abcdef", Slots: slots, IP: "10.0.0.2",
		Port: 7000, CPort: 17000, Flags: FlagSlave | FlagNoFailover, MFlags: MFlagPaused, StateOK: true}
	var out []Message
	for t := MsgType(0); t < msgTypeCount; t++ {
		m := base
		m.Type = t
		switch t {
		case MsgPing, MsgPong, MsgMeet:
			m.Gossip = []Gossip{{ID: "aa", PingSent: 1, PongReceived: 2, IP: "127.0.0.1", Port: 1, CPort: 2, Flags: FlagPFail | FlagMaster}, {ID: "bb", IP: "::1"}}
		case MsgFail:
			m.About = "failing"
		case MsgUpdate:
			m.About = "owner"
			m.UpdateConfigEpoch = 99
			m.UpdateSlots.Set(42)
		case MsgPublish:
			m.Channel = []byte("chan")
			m.Payload = []byte("hello\x00world")
		}
		out = append(out, m)
	}
	return out
}

func TestWireRoundTrip(t *testing.T) {
	for _, m := range sampleMessages() {
		f := EncodeMessage(&m)
		got, err := DecodeMessage(f)
		if err != nil {
			t.Fatalf("%v: %v", m.Type, err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Fatalf("%v: round trip differs:\n got %+v\nwant %+v", m.Type, got, m)
		}
		r, err := ReadFrame(bytes.NewReader(append(f, 1, 2, 3)), nil)
		if err != nil || !bytes.Equal(r, f) {
			t.Fatalf("%v: ReadFrame: %v", m.Type, err)
		}
		// Every truncation must fail cleanly.
		for i := 0; i < len(f); i += 97 {
			if _, err := DecodeMessage(f[:i]); err == nil {
				t.Fatalf("%v: truncated frame of %d bytes decoded", m.Type, i)
			}
		}
	}
}

func TestWireRandomCorruption(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	msgs := sampleMessages()
	for i := 0; i < 20000; i++ {
		m := msgs[rng.IntN(len(msgs))]
		f := EncodeMessage(&m)
		for j := 0; j < 1+rng.IntN(4); j++ {
			f[rng.IntN(len(f))] = byte(rng.Uint32())
		}
		DecodeMessage(f) // must not panic
	}
}

func FuzzDecodeMessage(f *testing.F) {
	for _, m := range sampleMessages() {
		f.Add(EncodeMessage(&m))
	}
	f.Add([]byte("RLcb\x00\x00\x00\x08"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeMessage(b)
		if err != nil {
			return
		}
		// What decodes must re-encode to the same message.
		m2, err := DecodeMessage(EncodeMessage(&m))
		if err != nil || !reflect.DeepEqual(m, m2) {
			t.Fatalf("re-encode mismatch: %v", err)
		}
	})
}
