// Propagation (Redis server.c propagate, alsoPropagate): every applied
// write, in order, to the AOF and the replicas, with MULTI/EXEC around a
// block and SELECT when the database changes.

package server

func (s *Server) beginBlock() { s.prop.depth++ }

func (s *Server) endBlock() {
	s.prop.depth--
	if s.prop.depth > 0 {
		return
	}
	switch {
	case s.prop.writes == 1:
		s.emitIn(s.prop.held.db, s.prop.held.argv)
	case s.prop.writes > 1:
		s.emit(s.prop.lastDB, [][]byte{[]byte("EXEC")})
	}
	s.prop.writes, s.prop.held = 0, heldWrite{}
}

func (s *Server) propagate(db int, argv [][]byte) {
	if s.loading {
		return
	}
	if s.prop.depth > 0 {
		s.prop.writes++
		switch s.prop.writes {
		case 1:
			// Copied: the caller's argv may live in a buffer that is reused
			// before the block ends.
			held := make([][]byte, len(argv))
			for i, a := range argv {
				held[i] = append([]byte(nil), a...)
			}
			s.prop.held = heldWrite{db, held}
			return
		case 2:
			s.selectDB(s.prop.held.db)
			s.emit(s.prop.held.db, [][]byte{[]byte("MULTI")})
			s.emitIn(s.prop.held.db, s.prop.held.argv)
			s.prop.held = heldWrite{}
		}
	}
	s.emitIn(db, argv)
}

// emitIn emits argv after a SELECT when db is not the stream's current DB.
func (s *Server) emitIn(db int, argv [][]byte) {
	s.selectDB(db)
	s.emit(db, argv)
}

func (s *Server) selectDB(db int) {
	if !s.prop.started || s.prop.lastDB != db {
		s.prop.started = true
		s.prop.lastDB = db
		s.emit(db, [][]byte{[]byte("SELECT"), itob(int64(db))})
	}
}

func (s *Server) emit(db int, argv [][]byte) {
	if s.aof != nil {
		s.aof.append(argv)
	}
	s.propagatedToReplicas(db, argv)
	if s.propagationTap != nil {
		s.propagationTap(db, argv)
	}
}

// expired is called by a DB when it drops an expired key.
func (s *Server) expired(db int, key string) {
	s.propagate(db, [][]byte{[]byte("DEL"), []byte(key)})
	s.notifyIn(db, notifyExpired, "expired", []byte(key))
	if len(s.watchers) > 0 {
		s.touch(db, []byte(key))
	}
	if s.trk != nil {
		s.trackInvalidate(nil, key)
		s.trackFlushBcast()
	}
}
