package server

import "github.com/redline-dev/redline/server/config"

// applyBusConfig gives the cluster bus the directives it reads itself:
// cluster-link-sendbuf-limit (at start and on CONFIG SET of a cluster-*
// directive).
func (s *Server) applyBusConfig() {
	if s.cl.bus == nil {
		return
	}
	var limit int64
	if kv := s.cfg.Get("cluster-link-sendbuf-limit", func(p, n string) bool { return p == n }); len(kv) > 0 {
		limit, _ = config.ParseMemory(kv[0][1])
	}
	s.cl.bus.SetSendBufLimit(limit)
}
