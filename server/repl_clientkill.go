package server

import "time"

// killMasterLink closes a replica's link to its master when addr is the
// master's address (or any master with ""), and reports whether it did: Redis lists that link among
// the clients, so CLIENT KILL <ip:port> of the master reaches it (Redis's
// suites cut a replica off its master that way). The replica reconnects as
// after any link failure. Server lock held.
func (s *Server) killMasterLink(addr string) bool {
	r := s.repl
	if r.linkConn == nil || (addr != "" && r.linkConn.RemoteAddr().String() != addr) {
		return false
	}
	r.linkConn.Close()
	// The link is down from now, not from when the replica goroutine gets
	// the lock (a DEBUG SLEEP in the same MULTI would postpone it and make
	// the data look fresher than it is, as the cluster suite's
	// 06-slave-stop-cond checks): Redis frees the master client here.
	if r.linkUp.Load() {
		r.linkUp.Store(false)
		r.downSinceA.Store(time.Now().UnixMilli())
	}
	return true
}

// clientType is CLIENT KILL TYPE's class of a client: master (the link
// applying our master's stream), replica, pubsub or normal.
func clientType(t *Client) string {
	if t.repl.master {
		return "master"
	}
	if t.repl.replica != nil {
		return "replica"
	}
	if t.ps != nil && (t.ps.subscriptions() > 0 || len(t.ps.shard) > 0) {
		return "pubsub"
	}
	return "normal"
}

// replicaKilled drops a killed replica's link at once, as Redis frees the
// client inside CLIENT KILL: connected_slaves no longer counts it.
func (s *Server) replicaKilled(t *Client) {
	if t.repl.replica != nil {
		s.repl.dropReplica(t.repl.replica)
	}
}
