package server

import (
	"errors"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redline-dev/redline/server/aof"
	"github.com/redline-dev/redline/server/store"
)

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
	w, err := s.openAOFFile(path)
	if err != nil {
		return err
	}
	s.aof = &aofState{s: s, w: w, baseSize: w.Size(), syncedAt: w.Size()}
	s.prop.started = false
	return nil
}

func (s *Server) openAOFFile(path string) (*aof.Writer, error) {
	return aof.OpenWrapped(path, s.opts.AOFFile)
}

func (s *Server) closeAOF() error {
	if s.aof == nil {
		return nil
	}
	var err error
	if s.exited.Load() {
		err = s.aof.w.Abandon()
	} else {
		err = s.aof.w.Close()
	}
	s.aof = nil
	return err
}

func (a *aofState) append(argv [][]byte) { a.w.Append(argv) }

// flush writes buffered commands (and fsyncs if sync), as Redis's
// flushAppendOnlyFile: with appendfsync always a failed write or fsync
// makes the server exit before any reply goes out (the replies would
// acknowledge writes that are not on disk); with everysec or no the
// buffer is kept, writes are refused with MISCONF (diskError), and the
// next flush tries again (the cron's, every 100 ms) until one succeeds.
func (a *aofState) flush(sync bool) {
	s := a.s
	if !a.w.Pending() && !sync {
		return
	}
	err := a.w.Flush(sync)
	var werr *aof.WriteError
	switch {
	case err == nil:
		if a.writeErr != nil {
			s.Logf('#', "AOF write error looks solved, Redis can write again.")
			a.writeErr = nil
		}
		if sync {
			a.syncedAt = a.w.Written()
		}
	case s.cfg.AppendFsync == "always" && errors.As(err, &werr):
		a.logWriteError(werr)
		s.exit("Can't recover from AOF write error when the AOF fsync policy is 'always'. Exiting...")
	case s.cfg.AppendFsync == "always":
		s.exit("Can't persist AOF for fsync error when the AOF fsync policy is 'always': %s. Exiting...", strerror(err))
	case errors.As(err, &werr):
		a.logWriteError(werr)
		a.writeErr = err
	default:
		// A fsync asked outside the policy (SAVE, SHUTDOWN): Redis's
		// redis_fsync there is not checked.
	}
}

// logWriteError logs a failed write at most every 30 s, as Redis's
// AOF_WRITE_LOG_ERROR_RATE.
func (a *aofState) logWriteError(werr *aof.WriteError) {
	now := time.Now()
	if now.Sub(a.lastErrLog) <= 30*time.Second {
		return
	}
	a.lastErrLog = now
	if werr.Short {
		a.s.Logf('#', "Short write while writing to the AOF file: %s", strerror(werr.Err))
		if werr.Kept {
			a.s.Logf('#', "Could not remove short write from the append-only file.  Redis may refuse to load the AOF the next time it starts.")
		}
		return
	}
	a.s.Logf('#', "Error writing to the AOF file: %s", strerror(werr.Err))
}

// unsynced: something was written since the last fsync was asked.
func (a *aofState) unsynced() bool { return a.w.Written() != a.syncedAt }

// syncAsync is everysec's background fsync (Redis's bio job).
func (a *aofState) syncAsync() {
	a.syncedAt = a.w.Written()
	a.w.SyncAsync()
}

// diskError is why writes are refused (Redis's
// writeCommandsDeniedByDiskError, AOF part): the last write failed, or
// the last background fsync did; nil when neither.
func (a *aofState) diskError() error {
	if a.writeErr != nil {
		return a.writeErr
	}
	return a.w.BackgroundSyncErr()
}

// aofRefusal refuses a write (or PING, or an EXEC with a write queued)
// while the AOF cannot be written, after the cluster's redirections, as
// Redis's processCommand: "MISCONF Errors writing to the AOF file: <the
// errno>". A replica's master whose write cannot be written makes the
// replica panic, as Redis's with repl-ignore-disk-write-error no.
func (s *Server) aofRefusal(c *Client, cmd *Command, argv [][]byte) string {
	if s.aof == nil {
		return ""
	}
	err := s.aof.diskError()
	if err == nil {
		return ""
	}
	write := s.commandFlags(cmd, argv)&FlagWrite != 0
	if cmd.Name == "exec" && c.multi {
		for _, q := range c.queue {
			if qc := s.Lookup(q[0]); qc != nil && qc.Flags&FlagWrite != 0 {
				write = true
			}
		}
	}
	if !write && cmd.Name != "ping" {
		return ""
	}
	if c.repl.master {
		if write && !s.cfgYes("repl-ignore-disk-write-error", false) {
			s.exit("Guru Meditation: Replica was unable to write command to disk.")
			return "ERR the replica exits"
		}
		return ""
	}
	return "MISCONF Errors writing to the AOF file: " + strerror(err)
}

// strerror is err's errno as C's strerror says it ("No space left on
// device"); an error without one is a short write, which Redis records
// as ENOSPC.
func strerror(err error) string {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		errno = syscall.ENOSPC
	}
	msg := errno.Error()
	if msg == "" {
		return msg
	}
	return strings.ToUpper(msg[:1]) + msg[1:]
}

// exit is Redis's exit(1) inside a command's processing: logged, and from
// here on no reply goes out, no file is written (the AOF's buffer is
// abandoned) and Main returns 1.
func (s *Server) exit(format string, args ...any) {
	s.Logf('#', format, args...)
	s.exited.Store(true)
	s.requestShutdown()
}

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
	a.w.Abandon() // what it still buffered is in the new file
	w, err := s.openAOFFile(path)
	if err != nil {
		s.aof = nil
		return err
	}
	a.w = w
	if a.writeErr != nil {
		// As Redis's aofOpenIfNeededOnServerStart after a rewrite: the
		// new file starts without the old one's error.
		s.Logf('#', "AOF reopen, just ignore the last error.")
		a.writeErr = nil
	}
	a.baseSize = w.Size()
	a.syncedAt = w.Size()
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
	w, err := s.openAOFFile(s.aofPath())
	if err != nil {
		return nil, err
	}
	return &aofState{s: s, w: w, baseSize: w.Size(), syncedAt: w.Size()}, nil
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
