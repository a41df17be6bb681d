//go:build linux

package server

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestReplicaGetsTheWriteBeforeItsReply: when a client served by an event
// loop has the reply to its write, the write's stream bytes are already in
// the replica's socket, as Redis's beforeSleep writes the replicas' output
// in the same turn as the replies. Before, a replica writer batched the
// stream for a millisecond after its previous write while the reply went
// out at once: a primary stopped or cut off right after its reply held
// acknowledged writes no replica had (2 of 675,678 lost under
// pause-primary against none on redis-server, stop 33's RPO study).
func TestReplicaGetsTheWriteBeforeItsReply(t *testing.T) {
	s := startExtServer(t)
	addr := s.Addr().String()
	repl := syncAsReplica(t, addr)
	go io.Copy(io.Discard, repl.r) // a replica that keeps up

	s.Lock()
	if len(s.repl.replicas) != 1 {
		s.Unlock()
		t.Fatalf("%d replica links", len(s.repl.replicas))
	}
	rl := s.repl.replicas[0]
	s.Unlock()
	cl := dialRaw(t, addr)
	const writes = 300
	behind := 0
	for i := 0; i < writes; i++ {
		if r := cl.do(t, splitTest(t, fmt.Sprintf("SET k%d v", i))); string(r) != "+OK\r\n" {
			t.Fatalf("SET: %q", r)
		}
		rl.mu.Lock()
		if len(rl.buf) > 0 {
			behind++
		}
		rl.mu.Unlock()
	}
	// Only a write that is not the client's can be in the buffer then (the
	// replication cron's PING, every repl-ping-replica-period).
	if behind > 3 {
		t.Errorf("%d of %d replies went out while their write was still in the master's buffer for the replica", behind, writes)
	}
}

// TestRepliesFlowWhileAReplicaStopsReading: a replica that stops reading
// (cut off by a partition, its packets dropped) must not stop the primary
// answering its clients: Redis keeps replying and lets the replica's
// output buffer grow up to client-output-buffer-limit. Before, the replica
// writer waited for the full socket inside the descriptor's write lock
// (syscall.RawConn.Write holds it while it waits), the next event loop's
// write to that replica (tryWrite in finishPass, under the link's locks)
// queued behind it, every later write's feed waited on those locks under
// the server lock, and the whole server stopped until the partition healed
// or repl-timeout passed: an isolated primary acknowledged writes for
// 0.18 s of a partition where Redis 7.0.15 does for 2.8 s (issue 37's RPO
// study). A goroutine dump of this test on that code shows the two.
func TestRepliesFlowWhileAReplicaStopsReading(t *testing.T) {
	s := startExtServer(t)
	addr := s.Addr().String()
	_ = syncAsReplica(t, addr) // and never reads again
	cl := dialRaw(t, addr)
	value := strings.Repeat("v", 64<<10)
	// 48 MB of stream: far past what the loopback socket pair buffers
	// (a few MB), far below the replica output limit (256 MB).
	const writes = 768
	for i := 0; i < writes; i++ {
		if r := cl.do(t, [][]byte{[]byte("SET"), []byte(fmt.Sprintf("k%d", i)), []byte(value)}); string(r) != "+OK\r\n" {
			t.Fatalf("SET %d: %q", i, r)
		}
	}
	s.Lock()
	pending := 0
	for _, rl := range s.repl.replicas {
		rl.mu.Lock()
		pending += len(rl.buf)
		rl.mu.Unlock()
	}
	s.Unlock()
	if pending == 0 {
		t.Errorf("the replica's output buffer is empty: the test did not fill its socket")
	}
}
