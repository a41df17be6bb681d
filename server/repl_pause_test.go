package server

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// A WAIT during a client pause must not move the master's replication
// offset (Redis sends the GETACK it asks for after the pause): a manual
// failover pauses writes and tells its replica the offset to reach, and a
// GETACK fed during the pause left the replica short of the master's offset
// for good, so the failover timed out (a reference-only flake of the
// nemesis's manual failovers under the register workload, which WAITs).
func TestWaitDuringPauseLeavesTheOffsetAlone(t *testing.T) {
	m := startExtServer(t)
	r := startExtServer(t)
	mc, rc := newClient(t, m, 2), newClient(t, r, 2)
	host, port, _ := strings.Cut(m.Addr().String(), ":")
	if err := rc.Do(ctx, "replicaof", host, port).Err(); err != nil {
		t.Fatal(err)
	}
	offset := func() int64 {
		t.Helper()
		v, err := strconv.ParseInt(infoField(mc.Info(ctx, "replication").Val(), "master_repl_offset"), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(rc.Info(ctx, "replication").Val(), "master_link_status:up") {
		if time.Now().After(deadline) {
			t.Fatal("the replica never linked up")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := mc.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	// A WAIT that is not satisfied at once (two replicas wanted) asks for an
	// ACK: outside a pause that feeds a GETACK into the stream.
	before := offset()
	if err := mc.Do(ctx, "wait", 2, 50).Err(); err != nil {
		t.Fatal(err)
	}
	if after := offset(); after <= before {
		t.Fatalf("WAIT outside a pause: offset %d -> %d, want a GETACK in the stream", before, after)
	}
	if err := mc.Do(ctx, "client", "pause", 5000, "write").Err(); err != nil {
		t.Fatal(err)
	}
	paused := offset()
	if err := mc.Do(ctx, "wait", 2, 50).Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(250 * time.Millisecond) // a few crons
	if got := offset(); got != paused {
		t.Fatalf("WAIT during CLIENT PAUSE WRITE moved master_repl_offset %d -> %d (a GETACK in the stream)", paused, got)
	}
	if err := mc.Do(ctx, "client", "unpause").Err(); err != nil {
		t.Fatal(err)
	}
	if got := offset(); got <= paused {
		t.Fatalf("after CLIENT UNPAUSE the deferred GETACK was not sent: offset %d -> %d", paused, got)
	}
}
