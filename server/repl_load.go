package server

import (
	"strconv"
	"time"
)

// The loading state of a replica during a full sync. Redis loads the
// master's RDB while its event loop keeps answering clients with -LOADING
// and keeps the cluster bus going; the reference server loads the RDB
// under the server lock in one go. With key-load-delay (microseconds per
// key, a test knob of Redis's) the load sleeps per key with the lock
// released, so the loading state is visible as in Redis: INFO loading:1,
// -LOADING to commands without the loading flag, and offset 0 on the
// cluster bus (the replica is hidden from CLUSTER SLOTS and "loading" in
// CLUSTER SHARDS).

// loadSync loads a full sync's RDB into the emptied databases (server lock
// held; it may be released and retaken between keys) and returns the
// database the master's stream is in (the file's repl-stream-db). Keys
// whose time has passed are kept: the master expires them. errStale: the
// master changed while the lock was released.
func (r *replState) loadSync(gen int64, data []byte) (int, error) {
	s := r.s
	opt := loadOptions{keepExpired: true}
	if delay := keyLoadDelay(s); delay > 0 {
		s.replLoading = true
		defer func() { s.replLoading = false }()
		opt.afterKey = func() error {
			s.mu.Unlock()
			time.Sleep(time.Duration(delay) * time.Microsecond)
			s.mu.Lock()
			delay = keyLoadDelay(s) // CONFIG SET while loading speeds it up, as in Redis
			if r.gen != gen {
				return errStale
			}
			return nil
		}
	}
	err := s.loadRDB(data, opt)
	ri := s.persist.loadedRepl
	s.persist.loadedRepl = nil // the start-up load's, not ours
	if err != nil {
		return 0, err
	}
	if ri != nil && ri.streamDB >= 0 && ri.streamDB < len(s.dbs) {
		return ri.streamDB, nil
	}
	return 0, nil
}

// loadingRefusal is the reply to a client command while the dataset loads:
// only commands with the loading flag run, as in Redis.
func loadingRefusal(cmd *Command, argv [][]byte) string {
	f := cmd.Flags
	if sub := cmd.subcommand(argv); sub != nil {
		f = sub.Flags
	}
	if f&FlagLoading != 0 {
		return ""
	}
	return "LOADING Redis is loading the dataset in memory"
}

// keyLoadDelay is key-load-delay in microseconds.
func keyLoadDelay(s *Server) int {
	delay := 0
	if kv := s.cfg.Get("key-load-delay", func(p, n string) bool { return p == n }); len(kv) > 0 {
		delay, _ = strconv.Atoi(kv[0][1])
	}
	return delay
}
