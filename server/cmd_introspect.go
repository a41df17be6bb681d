package server

import (
	"strconv"
	"strings"

	"github.com/redline-dev/redline/server/store"
)

// configValue is a directive's current value as CONFIG GET shows it.
func (s *Server) configValue(name string) string {
	kv := s.cfg.Get(name, func(p, n string) bool { return p == n })
	if len(kv) == 0 {
		return ""
	}
	return kv[0][1]
}

func (s *Server) configInt(name string, def int) int {
	if n, err := strconv.Atoi(s.configValue(name)); err == nil {
		return n
	}
	return def
}

// applyAccessPolicy hands maxmemory-policy, lfu-log-factor and
// lfu-decay-time to the keyspaces (OBJECT IDLETIME / FREQ tracking).
func (s *Server) applyAccessPolicy() {
	p := store.AccessPolicy{
		LFU:       strings.HasSuffix(s.configValue("maxmemory-policy"), "-lfu"),
		LogFactor: s.configInt("lfu-log-factor", 10),
		DecayTime: s.configInt("lfu-decay-time", 1),
	}
	for _, db := range s.dbs {
		db.Access = p
	}
}
