package bus

import (
	"testing"
	"time"

	"github.com/redline-dev/redline/server/cluster"
)

// A link whose peer stops reading is closed once its queued bytes outgrow
// cluster-link-sendbuf-limit, and its failure says so (OverLimit), as Redis
// frees such a link and counts it.
func TestSendBufLimitClosesStuckLink(t *testing.T) {
	mem := NewMemNetwork()
	b := New(Options{ListenAddr: "127.0.0.1:21120", Transport: mem})
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	peer := "127.0.0.1:21121"
	ln, err := mem.Listen(peer)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			defer c.Close()
			time.Sleep(time.Hour) // a stopped peer: never reads
		}
	}()
	b.SetSendBufLimit(256 << 10)
	payload := make([]byte, 64<<10)
	for i := 0; i < 1000; i++ {
		pub := cluster.Envelope{Link: 7, Addr: peer, Msg: cluster.Message{Type: cluster.MsgPublish, Channel: []byte("c"), Payload: payload}}
		b.Send(&cluster.Ready{Messages: []cluster.Envelope{pub}})
		select {
		case in := <-b.Inputs():
			if in.LinkFailed != 7 || !in.OverLimit {
				t.Fatalf("input %+v, want LinkFailed 7 over the limit", in)
			}
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
	t.Fatal("64 MB queued to a peer that never reads and the link is still open")
}
