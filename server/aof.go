package server

import (
	"errors"
	"math"
	"path/filepath"
	"strconv"

	"github.com/redline-dev/redline/server/aof"
	"github.com/redline-dev/redline/server/store"
)

type aofState struct {
	s        *Server
	w        *aof.Writer
	baseSize int64 // size after the last rewrite (or at load)
	pending  bool  // BGREWRITEAOF requested
	rewrites int64
	lastErr  error
}

func (s *Server) aofPath() string {
	return filepath.Join(s.cfg.Dir, s.cfg.AppendDirname, s.cfg.AppendFilename)
}

// openAOF replays the AOF (if appendonly) and opens it for appending.
func (s *Server) openAOF() error {
	if !s.cfg.AppendOnly {
		return nil
	}
	path := s.aofPath()
	fake := s.newClient(nil)
	fake.authenticated = true
	s.loading = true
	s.mu.Lock()
	multiAt := int64(-1)
	res, err := aof.Load(path, func(argv [][]byte, off int64) {
		if len(argv) == 1 && string(argv[0]) == "MULTI" {
			multiAt = off
		}
		fake.call(argv)
		fake.out = fake.out[:0]
	})
	s.mu.Unlock()
	s.loading = false
	switch {
	case errors.Is(err, aof.ErrNoFile):
	case err != nil:
		return err
	default:
		if fake.multi && multiAt >= 0 {
			// The file ends inside a transaction: drop it whole.
			s.Logf('#', "Revert incomplete MULTI/EXEC transaction in AOF file")
			res.Valid = multiAt
			fake.multi = false
			fake.queue = nil
		}
		if res.Valid < res.Size {
			if !s.cfg.AOFLoadTruncated {
				return errors.New("Bad file format reading the append only file " + path + ": make a backup of your AOF file, then use redis-check-aof --fix <filename>")
			}
			s.Logf('#', "!!! Warning: short read while loading the AOF file %s!!!", path)
			s.Logf('#', "!!! Truncating the AOF at offset %d (file size %d, %d bytes dropped) !!!", res.Valid, res.Size, res.Size-res.Valid)
			if err := aof.Truncate(path, res.Valid); err != nil {
				return err
			}
			s.Logf('#', "AOF loaded anyway because aof-load-truncated is enabled")
		}
		s.Logf('*', "DB loaded from append only file: %d commands", res.Commands)
	}
	w, err := aof.Open(path)
	if err != nil {
		return err
	}
	s.aof = &aofState{s: s, w: w, baseSize: w.Size()}
	s.prop.started = false
	return nil
}

func (s *Server) closeAOF() error {
	if s.aof == nil {
		return nil
	}
	err := s.aof.w.Close()
	s.aof = nil
	return err
}

func (a *aofState) append(argv [][]byte) { a.w.Append(argv) }

// flush writes buffered commands (and fsyncs if sync); false on error.
func (a *aofState) flush(sync bool) bool {
	if a.lastErr != nil {
		return false
	}
	if !a.w.Pending() {
		return true
	}
	if err := a.w.Flush(sync); err != nil {
		a.lastErr = err
		a.s.Logf('#', "Error writing to the AOF file: %v", err)
		return false
	}
	return true
}

func (a *aofState) syncAsync() { a.w.SyncAsync() }

// maybeRewriteAOF rewrites when asked or when the file grew past
// auto-aof-rewrite-percentage of its size after the last rewrite.
func (s *Server) maybeRewriteAOF() {
	a := s.aof
	size := a.w.Size()
	grow := s.cfg.AutoAOFRewritePercentage > 0 && size >= s.cfg.AutoAOFRewriteMinSize &&
		size > a.baseSize+a.baseSize*int64(s.cfg.AutoAOFRewritePercentage)/100
	if a.pending || grow {
		a.pending = false
		if err := s.rewriteAOF(); err != nil {
			s.Logf('#', "Background AOF rewrite failed: %v", err)
		}
	}
}

// rewriteAOF replaces the AOF with the commands that rebuild the current
// dataset. It runs with the lock held.
func (s *Server) rewriteAOF() error { return s.rewriteAOFFrom(s.snapshot) }

// rewriteAOFFrom is rewriteAOF with the commands of snap.
func (s *Server) rewriteAOFFrom(snap func(emit func(argv ...[]byte))) error {
	a := s.aof
	path := a.w.Path()
	// Everything buffered is already in the dataset the snapshot captures.
	a.flush(false)
	err := aof.Rewrite(path, snap)
	if err != nil {
		return err
	}
	a.w.Close()
	w, err := aof.Open(path)
	if err != nil {
		s.aof = nil
		return err
	}
	a.w = w
	a.baseSize = w.Size()
	a.rewrites++
	s.prop.started = false
	s.Logf('*', "Background AOF rewrite finished successfully (%d bytes)", a.baseSize)
	return nil
}

// emitObject writes the commands that recreate o.
func emitObject(add func(argv ...[]byte), o *store.Object) {
	key := []byte(o.Key())
	const chunk = 64
	switch o.Kind {
	case store.KindString:
		add([]byte("SET"), key, o.Str)
	case store.KindList:
		args := [][]byte{[]byte("RPUSH"), key}
		for i := 0; i < o.List.Len(); i++ {
			args = append(args, o.List.At(i))
			if len(args) == chunk+2 || i == o.List.Len()-1 {
				add(args...)
				args = args[:2]
			}
		}
	case store.KindSet:
		args := [][]byte{[]byte("SADD"), key}
		n := 0
		for m := range o.Set {
			args = append(args, []byte(m))
			n++
			if len(args) == chunk+2 || n == len(o.Set) {
				add(args...)
				args = args[:2]
			}
		}
	case store.KindHash:
		args := [][]byte{[]byte("HSET"), key}
		n := 0
		for _, f := range o.HashFields() { // in order: a rewrite keeps a listpack's order
			v := o.Hash[f]
			args = append(args, []byte(f), v)
			n++
			if len(args) >= 2*chunk+2 || n == len(o.Hash) {
				add(args...)
				args = args[:2]
			}
		}
	case store.KindZSet:
		args := [][]byte{[]byte("ZADD"), key}
		for i := 0; i < o.ZSet.Len(); i++ {
			e := o.ZSet.At(i)
			args = append(args, formatScore(e.Score), []byte(e.Member))
			if len(args) >= 2*chunk+2 || i == o.ZSet.Len()-1 {
				add(args...)
				args = args[:2]
			}
		}
	case store.KindStream:
		emitStream(add, key, o.Stream)
	}
	if o.ExpireAt != 0 {
		add([]byte("PEXPIREAT"), key, itob(o.ExpireAt))
	}
}

func formatScore(f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return []byte("inf")
	case math.IsInf(f, -1):
		return []byte("-inf")
	}
	return strconv.AppendFloat(nil, f, 'g', 17, 64)
}

func openAOFWriter(s *Server) (*aofState, error) {
	w, err := aof.Open(s.aofPath())
	if err != nil {
		return nil, err
	}
	return &aofState{s: s, w: w, baseSize: w.Size()}, nil
}

// emitStream writes the commands that recreate a stream, as Redis's
// rewriteStreamObject: its entries, its metadata, its groups with their
// pending entries and consumers.
func emitStream(add func(argv ...[]byte), key []byte, s *store.Stream) {
	if s.Len() == 0 {
		add([]byte("XADD"), key, []byte("MAXLEN"), []byte("0"), streamIDBytes(s.LastID), []byte("x"), []byte("y"))
	} else {
		s.Range(store.StreamID{}, store.MaxStreamID, false, func(e *store.StreamEntry) bool {
			args := append([][]byte{[]byte("XADD"), key, streamIDBytes(e.ID)}, e.Fields...)
			add(args...)
			return true
		})
	}
	add([]byte("XSETID"), key, streamIDBytes(s.LastID), []byte("ENTRIESADDED"), itob(s.EntriesAdded),
		[]byte("MAXDELETEDID"), streamIDBytes(s.MaxDeletedEntryID))
	for _, g := range s.Groups() {
		name := []byte(g.Name)
		add([]byte("XGROUP"), []byte("CREATE"), key, name, streamIDBytes(g.LastID), []byte("ENTRIESREAD"), itob(g.EntriesRead))
		for _, p := range g.Pending() {
			add([]byte("XCLAIM"), key, name, []byte(p.Consumer.Name), []byte("0"), streamIDBytes(p.ID),
				[]byte("TIME"), itob(p.DeliveryTime), []byte("RETRYCOUNT"), itob(p.DeliveryCount), []byte("JUSTID"), []byte("FORCE"))
		}
		for _, cons := range g.Consumers() {
			if len(cons.Pending()) == 0 {
				add([]byte("XGROUP"), []byte("CREATECONSUMER"), key, name, []byte(cons.Name))
			}
		}
	}
}
