// The running configuration as the engine reads it: a directive's value,
// the listpack limits and access policy handed to the keyspaces, and
// Redis's protected-action rule.

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

// protectedAllowed is Redis's allowProtectedAction: directive
// (enable-debug-command for DEBUG, enable-protected-configs for CONFIG SET
// of a protected directive) is yes, or local and c a local client. Redis
// 7.0's default, no, refuses.
func (s *Server) protectedAllowed(c *Client, directive string) bool {
	switch s.configValue(directive) {
	case "yes":
		return true
	case "local":
		return c.isLocal()
	}
	return false
}

// isLocal is Redis's islocalClient: a unix socket or an internal client,
// or exactly 127.0.0.1 or ::1 (isLocalAddr).
func (c *Client) isLocal() bool { return isLocalAddr(c.addr) }

// applyLimits hands the *-max-listpack-*, set-max-intset-entries and
// list-max-listpack-size directives to the keyspaces (one Limits value
// shared by all databases of the server).
func (s *Server) applyLimits() {
	l := &store.Limits{
		HashMaxListpackEntries: s.configInt("hash-max-listpack-entries", store.DefaultLimits.HashMaxListpackEntries),
		HashMaxListpackValue:   s.configInt("hash-max-listpack-value", store.DefaultLimits.HashMaxListpackValue),
		SetMaxIntsetEntries:    s.configInt("set-max-intset-entries", store.DefaultLimits.SetMaxIntsetEntries),
		ZSetMaxListpackEntries: s.configInt("zset-max-listpack-entries", store.DefaultLimits.ZSetMaxListpackEntries),
		ZSetMaxListpackValue:   s.configInt("zset-max-listpack-value", store.DefaultLimits.ZSetMaxListpackValue),
		ListMaxListpackSize:    s.configInt("list-max-listpack-size", store.DefaultLimits.ListMaxListpackSize),
		StreamNodeMaxEntries:   s.configInt("stream-node-max-entries", store.DefaultLimits.StreamNodeMaxEntries),
		StreamNodeMaxBytes:     s.configInt("stream-node-max-bytes", store.DefaultLimits.StreamNodeMaxBytes),
	}
	if len(s.dbs) > 0 {
		if cur := s.dbs[0].Limits(); cur != nil {
			*cur = *l // objects hold the pointer: update in place
			for _, db := range s.dbs[1:] {
				if db.Limits() != cur {
					db.SetLimits(cur)
				}
			}
			return
		}
	}
}

func (s *Server) cfgYes(name string, def bool) bool {
	d := "no"
	if def {
		d = "yes"
	}
	return s.cfgValue(name, d) == "yes"
}
