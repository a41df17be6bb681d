package server

import (
	"bytes"
	"net"
	"time"
)

// Pub/Sub ordering across connections. Redis serves every connection on
// one event loop, so what a subscriber sent before a PUBLISH reached the
// server runs first: "UNSUBSCRIBE" written by one client and "PUBLISH" by
// another a moment later reaches no one (unit/pubsub relies on it). Here
// a subscriber is served by its own goroutine while other connections run
// on the event loops, and the publisher's loop can run its PUBLISH before
// the subscriber's goroutine is scheduled. So before a PUBLISH or SPUBLISH
// takes the server lock, the recipients with input not yet run (bytes in
// the socket, or read but not yet processed) get a short while to run it.
// Best effort: a PUBLISH after other commands of the same batch (the lock
// already held) or while the lock is busy does not wait, and the wait is
// bounded by catchUpLimit. A channel with more than catchUpMax recipients
// is not waited for: asking each one's socket would cost the PUBLISH more
// than the fan-out itself.

// catchUpLimit bounds how long a PUBLISH waits for its recipients' input:
// a subscriber's goroutine runs a batch in microseconds unless the host is
// starved, and an incomplete request (its rest still on the way) must not
// hold the publisher up for long.
const catchUpLimit = 5 * time.Millisecond

// catchUpMax is the most recipients a PUBLISH asks for pending input.
const catchUpMax = 32

// isPublish reports whether name is PUBLISH or SPUBLISH, in any case.
func isPublish(name []byte) bool {
	switch len(name) {
	case 7:
		return bytes.EqualFold(name, []byte("publish"))
	case 8:
		return bytes.EqualFold(name, []byte("spublish"))
	}
	return false
}

// letSubscribersCatchUp waits (at most catchUpLimit) until the goroutine-
// served recipients of the PUBLISH in argv have run the input they had
// when it arrived. It takes the server lock only to find them.
func (s *Server) letSubscribersCatchUp(pub *Client, argv [][]byte) {
	if len(argv) < 2 {
		return
	}
	// The lock may be held a moment (the cron, another connection's
	// batch): try again until the deadline, never while a script runs
	// (the event loop answers BUSY meanwhile).
	deadline := time.Now().Add(catchUpLimit)
	for !s.mu.TryLock() {
		if s.busy.start.Load() != 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(20 * time.Microsecond)
	}
	var waitFor []*Client
	if s.ps != nil {
		asked := 0
		add := func(subs map[*Client]struct{}) {
			for sub := range subs {
				if asked++; asked > catchUpMax {
					return
				}
				if sub != pub && sub.ps != nil && sub.ps.conn != nil && sub.inputPending() {
					waitFor = append(waitFor, sub)
				}
			}
		}
		ch := argv[1]
		if len(argv[0]) == 8 { // SPUBLISH
			add(s.ps.shard[string(ch)])
		} else {
			add(s.ps.channels[string(ch)])
			for p, subs := range s.ps.patterns {
				if GlobMatch([]byte(p), ch) {
					add(subs)
				}
			}
		}
	}
	s.mu.Unlock()
	for _, sub := range waitFor {
		for sub.inputPending() && time.Now().Before(deadline) {
			time.Sleep(20 * time.Microsecond)
		}
	}
}

// inputPending reports whether a goroutine-served client has input it
// has not run: still in the socket, or read but not yet processed. The
// socket is asked first: input read between the two questions is then
// seen counted (the other order missed input that moved from the socket
// to the buffer in between, a round in twenty here).
func (c *Client) inputPending() bool {
	if socketQueued(c.ps.conn) > 0 {
		return true
	}
	return c.inReads.Load() != c.inDone.Load()
}

// readCountedPlain is conn.Read counting a read that returned input.
func readCountedPlain(c *Client, conn net.Conn, p []byte) (int, error) {
	n, err := conn.Read(p)
	if n > 0 {
		c.inReads.Add(1)
	}
	return n, err
}
