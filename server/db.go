package server

// The dataset as a whole, for replication, the AOF and cluster mode: a
// snapshot as commands (the AOF rewrite's), flushing, deleting a lost
// slot's keys, and the internal client that applies a stream (Redis's db.c
// and the replication side of networking.c).

import (
	"github.com/redline-dev/redline/server/store"
)

// newInternalClient returns a client with no connection, already
// authenticated, for running commands on behalf of the server: applying a
// replication stream, MIGRATE's RESTORE, tests. Use it with the lock held.
func (s *Server) newInternalClient() *Client {
	c := s.newClient(nil)
	c.authenticated = true
	c.parser.Unauthenticated = false
	return c
}

// execInternal runs argv as if c had sent it (lookup, arity, hooks, MULTI
// queueing, propagation) and returns the RESP reply bytes, which are valid
// until the next call on c. The lock must be held.
func (s *Server) execInternal(c *Client, argv [][]byte) []byte {
	c.out = c.out[:0]
	if len(argv) == 0 {
		return nil
	}
	c.call(argv)
	if len(s.blk.ready) > 0 {
		s.serveReadyKeys()
	}
	return c.out
}

// snapshot emits the commands that rebuild the whole dataset (SELECT per
// non-empty database, then one or more commands per key, PEXPIREAT for
// TTLs), as the AOF rewrite writes them. The lock must be held; argv slices are valid during the call only.
func (s *Server) snapshot(emit func(argv ...[]byte)) {
	s.snapshotFunctions(emit)
	for i, db := range s.dbs {
		if db.Len() == 0 {
			continue
		}
		emit([]byte("SELECT"), itob(int64(i)))
		db.Each(func(o *store.Object) bool {
			emitObject(emit, o)
			return true
		})
	}
}

// flushAll empties every database (a replica before a full sync), touching
// WATCHed keys. The lock must be held.
func (s *Server) flushAll() {
	s.touchAll(-1)
	for _, db := range s.dbs {
		db.Flush()
	}
	s.dirty++
}

// clientList snapshots the connected clients.
func (s *Server) clientList() []*Client {
	s.clientsMu.Lock()
	defer s.clientsMu.Unlock()
	out := make([]*Client, 0, len(s.clients))
	for _, c := range s.clients {
		out = append(out, c)
	}
	return out
}

// deleteKeysInSlot removes every key of a hash slot from db 0 (a master that
// lost the slot), propagating a DEL per key and touching WATCHed keys. It
// needs cluster-enabled (the slot index). The lock must be held.
func (s *Server) deleteKeysInSlot(slot int) int {
	db := s.dbs[0]
	n := 0
	for {
		keys := db.KeysInSlot(slot, 1024)
		if len(keys) == 0 {
			return n
		}
		for _, k := range keys {
			kb := []byte(k)
			if o := db.Raw(k); o != nil {
				db.Remove(o)
			}
			s.dirty++
			s.propagate(0, [][]byte{[]byte("DEL"), kb})
			s.touch(0, kb)
			n++
		}
	}
}

// setReplicaMode makes the keyspace behave like a replica's: keys are not
// expired lazily or actively (the primary's DELs arrive in the stream) but
// reads of an expired key still return nothing. The lock must be held.
func (s *Server) setReplicaMode(on bool) {
	s.replicaKeyspace = on
	s.applyExpireMode()
}
