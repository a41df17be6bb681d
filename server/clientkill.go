package server

// killMasterLink closes a replica's link to its master when addr is the
// master's address, and reports whether it did: Redis lists that link among
// the clients, so CLIENT KILL <ip:port> of the master reaches it (Redis's
// suites cut a replica off its master that way). The replica reconnects as
// after any link failure. Server lock held.
func (s *Server) killMasterLink(addr string) bool {
	if s.ext == nil || s.ext.repl == nil {
		return false
	}
	r := s.ext.repl
	if r.linkConn == nil || r.linkConn.RemoteAddr().String() != addr {
		return false
	}
	r.linkConn.Close()
	return true
}
