package server

// RDB persistence, as Redis 7.0's rdb.c and the save half of server.c: the
// dump file (dir/dbfilename) written by SAVE, BGSAVE, the save schedule,
// SHUTDOWN and DEBUG RELOAD, and loaded at start when appendonly is off.
//
// Redis's BGSAVE forks and the child writes the copy-on-write image of the
// parent's memory. Go cannot fork, and our objects change in place, so a
// background save here takes its consistent snapshot by encoding the whole
// dataset into memory with the server lock held (a stop of the event loop
// for the encoding only: about what DUMP costs per key), then writes,
// fsyncs and renames the file from a goroutine with the lock released.
// The price against fork: the pause grows with the dataset, and the
// encoded image is held in memory until the write ends (Redis's
// copy-on-write pages are bounded by the writes meanwhile instead).
// rdb-key-save-delay (a test knob of Redis's) delays the background
// writer per key, so a "long" BGSAVE can be observed as in Redis's tests.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/redline-dev/redline/server/config"
	"github.com/redline-dev/redline/server/internal/planted"
	"github.com/redline-dev/redline/server/rdb"
	"github.com/redline-dev/redline/server/store"
)

func (s *Server) rdbFilename() string { return s.cfgValue("dbfilename", "dump.rdb") }

// rdbPath is dir/dbfilename.
func (s *Server) rdbPath() string { return filepath.Join(s.cfg.Dir, s.rdbFilename()) }

// cfgValue is a directive's value as CONFIG GET shows it, def when unset.
func (s *Server) cfgValue(name, def string) string {
	if kv := s.cfg.Get(name, func(p, n string) bool { return p == n }); len(kv) > 0 && kv[0][1] != "" {
		return kv[0][1]
	}
	return def
}

// saveParams parses the save directive ("3600 1 300 100").
func (s *Server) saveParams() [][2]int64 {
	f := strings.Fields(s.cfg.Save)
	var out [][2]int64
	for i := 0; i+1 < len(f); i += 2 {
		sec, err1 := strconv.ParseInt(f[i], 10, 64)
		ch, err2 := strconv.ParseInt(f[i+1], 10, 64)
		if err1 == nil && err2 == nil {
			out = append(out, [2]int64{sec, ch})
		}
	}
	return out
}

func (s *Server) lastSaveTime() time.Time {
	if s.persist.lastSave.IsZero() {
		return s.started
	}
	return s.persist.lastSave
}

// rdbChanges is rdb_changes_since_last_save.
func (s *Server) rdbChanges() int64 { return s.dirty - s.persist.dirtyAtSave }

// encodeRDB serialises the whole dataset as an RDB file (lock held).
// keyEnds are the offsets where each key's record ends (the background
// writer's rdb-key-save-delay points).
func (s *Server) encodeRDB(wantKeyEnds bool) (data []byte, keyEnds []int) {
	compress := s.cfgYes("rdbcompression", true)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b := rdb.AppendHeader(make([]byte, 0, 1<<16))
	b = rdb.AppendAux(b, "redis-ver", config.Version)
	b = rdb.AppendAux(b, "redis-bits", "64")
	b = rdb.AppendAux(b, "ctime", strconv.FormatInt(time.Now().Unix(), 10))
	b = rdb.AppendAux(b, "used-mem", strconv.FormatUint(ms.HeapAlloc, 10))
	// As rdbPopulateSaveInfo: a master with a backlog, or a replica with
	// a master link, records where its data is in the stream.
	// repl-stream-db is the database the stream is in at that offset: the
	// master's last SELECT, a replica's master client's database.
	if r := s.repl; (!r.isReplica() && r.backlogActive) || (r.isReplica() && r.masterCl != nil) {
		streamDB := 0
		if r.isReplica() {
			streamDB = r.masterCl.db
		} else if s.prop.started {
			streamDB = s.prop.lastDB
		}
		b = rdb.AppendAux(b, "repl-stream-db", strconv.Itoa(streamDB))
		b = rdb.AppendAux(b, "repl-id", r.replid)
		b = rdb.AppendAux(b, "repl-offset", strconv.FormatInt(r.offset, 10))
	}
	b = rdb.AppendAux(b, "aof-base", "0")
	if fl := s.scripts.fns; fl != nil {
		for _, l := range fl.sorted() {
			b = rdb.AppendFunction(b, []byte(l.code))
		}
	}
	// As rdbSaveKeyValuePair: the idle time under an LRU policy, the
	// access counter under an LFU one.
	policy := s.cfgValue("maxmemory-policy", "noeviction")
	saveLRU, saveLFU := strings.HasSuffix(policy, "-lru"), strings.HasSuffix(policy, "-lfu")
	var val []byte
	for i, db := range s.dbs {
		if db.Len() == 0 {
			continue
		}
		b = rdb.AppendSelectDB(b, i)
		b = rdb.AppendResizeDB(b, db.Len(), db.VolatileLen())
		db.EachStored(func(o *store.Object) bool {
			if o.ExpireAt != 0 {
				b = rdb.AppendExpireMs(b, o.ExpireAt)
			}
			if saveLRU {
				b = rdb.AppendIdle(b, db.IdleTime(o))
			} else if saveLFU {
				b = rdb.AppendFreq(b, db.Freq(o))
			}
			val = store.AppendValue(val[:0], o, compress)
			b = append(b, val[0])
			b = rdb.AppendString(b, []byte(o.Key()), compress)
			b = append(b, val[1:]...)
			if wantKeyEnds {
				keyEnds = append(keyEnds, len(b))
			}
			return true
		})
	}
	return rdb.AppendEOF(b, s.cfgYes("rdbchecksum", true)), keyEnds
}

// writeRDBFile writes data to path through a temporary file in the same
// directory, fsynced and renamed over path, as rdbSave does. With delay
// (microseconds) it sleeps after each key's record, stopping early (and
// removing the temporary file) when cancel or shutdown is closed.
func writeRDBFile(path string, data []byte, keyEnds []int, delay time.Duration, cancel, shutdown <-chan struct{}) error {
	tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf("temp-%d-%d.rdb", os.Getpid(), time.Now().UnixNano()))
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("Failed opening the temp RDB file %s (in server root dir %s) for saving: %v", filepath.Base(tmp), filepath.Dir(path), err)
	}
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if delay > 0 && len(keyEnds) > 0 {
		at := 0
		for _, end := range keyEnds {
			if _, err := f.Write(data[at:end]); err != nil {
				return fail(err)
			}
			at = end
			select {
			case <-cancel:
				return fail(errSaveCanceled)
			case <-shutdown:
				return fail(errSaveCanceled)
			case <-time.After(delay):
			}
		}
		data = data[at:]
	}
	if _, err := f.Write(data); err != nil {
		return fail(fmt.Errorf("Write error saving DB on disk: %v", err))
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("Error moving temp DB file %s on the final destination %s (in server root dir %s): %v", filepath.Base(tmp), filepath.Base(path), filepath.Dir(path), err)
	}
	return nil
}

var errSaveCanceled = errors.New("background save canceled")

// saveRDB is SAVE: the dataset to disk in the foreground (lock held).
func (s *Server) saveRDB() error {
	data, _ := s.encodeRDB(false)
	if err := writeRDBFile(s.rdbPath(), data, nil, 0, nil, nil); err != nil {
		s.Logf('#', "%v", err)
		return err
	}
	s.Logf('*', "DB saved on disk")
	s.persist.dirtyAtSave = s.dirty
	s.persist.lastSave = time.Now()
	s.persist.saves++
	s.persist.bgErr = nil // as Redis: a good SAVE clears a failed BGSAVE's status
	return nil
}

// startBgsave snapshots the dataset and writes it in the background (lock
// held). The cron collects the result.
func (s *Server) startBgsave() {
	p := &s.persist
	delay := time.Duration(s.cfgInt("rdb-key-save-delay")) * time.Microsecond
	data, keyEnds := s.encodeRDB(delay > 0)
	bg := &bgSave{start: time.Now(), dirty: s.dirty, done: make(chan struct{}), cancel: make(chan struct{}), keys: len(keyEnds)}
	p.bg, p.lastTry, p.scheduled = bg, bg.start, false
	path := s.rdbPath()
	s.Logf('*', "Background saving started")
	go func() {
		defer close(bg.done)
		select {
		case <-s.shutdown:
			bg.err = errSaveCanceled
			return
		default:
		}
		bg.err = writeRDBFile(path, data, keyEnds, delay, bg.cancel, s.shutdown)
	}()
}

func (s *Server) cfgInt(name string) int64 {
	n, _ := strconv.ParseInt(s.cfgValue(name, "0"), 10, 64)
	return n
}

// finishBgsave records a background save that ended (lock held).
func (s *Server) finishBgsave() {
	p := &s.persist
	bg := p.bg
	p.bg = nil
	p.bgRan = true
	p.bgDuration = time.Since(bg.start)
	switch {
	case bg.stopped:
		s.Logf('#', "Background saving terminated by signal 10")
		p.bgErr = errSaveCanceled
	case bg.err != nil:
		s.Logf('#', "Background saving error: %v", bg.err)
		p.bgErr = bg.err
	default:
		s.Logf('*', "Background saving terminated with success")
		p.bgErr = nil
		p.dirtyAtSave = bg.dirty
		p.lastSave = bg.start
		p.saves++
	}
}

// killBgsave stops a background save in progress and waits for it (lock
// held; the writer never takes the lock).
func (s *Server) killBgsave() {
	bg := s.persist.bg
	if bg == nil {
		return
	}
	bg.stopped = true
	close(bg.cancel)
	<-bg.done
	s.finishBgsave()
}

// persistCron runs each cron tick (lock held): collects a finished
// background save, starts a scheduled one, and saves when a save point is
// reached (after a failed attempt, not sooner than 5 s later, as Redis's
// CONFIG_BGSAVE_RETRY_DELAY).
func (s *Server) persistCron(now time.Time) {
	p := &s.persist
	if p.bg != nil {
		select {
		case <-p.bg.done:
			s.finishBgsave()
		default:
			return
		}
	}
	if p.scheduled {
		s.startBgsave()
		return
	}
	changes := s.rdbChanges()
	for _, sp := range s.saveParams() {
		if changes >= sp[1] && now.Sub(s.lastSaveTime()) > time.Duration(sp[0])*time.Second &&
			(p.bgErr == nil || now.Sub(p.lastTry) > 5*time.Second) {
			s.Logf('*', "%d changes in %d seconds. Saving...", sp[1], sp[0])
			s.startBgsave()
			return
		}
	}
}

// persistRefusal is the MISCONF refusal of writes after a failed
// background save (stop-writes-on-bgsave-error, with save points, on a
// master), as Redis's writeCommandsDeniedByDiskError.
func (s *Server) persistRefusal(cmd *Command) string {
	if s.persist.bgErr == nil || cmd.Flags&FlagWrite == 0 && cmd.Name != "ping" || s.repl.isReplica() ||
		len(s.saveParams()) == 0 || !s.cfgYes("stop-writes-on-bgsave-error", true) {
		return ""
	}
	return "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error."
}

// persistInfo is the RDB part of INFO persistence.
func (s *Server) persistInfo(sb *strings.Builder) {
	p := &s.persist
	kv := func(sb *strings.Builder, k string, v any) { fmt.Fprintf(sb, "%s:%v\r\n", k, v) }
	kv(sb, "loading", b2i(s.loading || s.replLoading))
	kv(sb, "async_loading", b2i(p.asyncLoading))
	kv(sb, "current_cow_peak", 0)
	kv(sb, "current_cow_size", 0)
	kv(sb, "current_cow_size_age", 0)
	kv(sb, "current_fork_perc", "0.00")
	kv(sb, "current_save_keys_processed", 0)
	kv(sb, "current_save_keys_total", 0)
	kv(sb, "rdb_changes_since_last_save", s.rdbChanges())
	kv(sb, "rdb_bgsave_in_progress", b2i(p.bg != nil))
	kv(sb, "rdb_last_save_time", s.lastSaveTime().Unix())
	status := "ok"
	if p.bgErr != nil {
		status = "err"
	}
	kv(sb, "rdb_last_bgsave_status", status)
	last, cur := int64(-1), int64(-1)
	if p.bgRan {
		last = int64(p.bgDuration / time.Second)
	}
	if p.bg != nil {
		cur = int64(time.Since(p.bg.start) / time.Second)
	}
	kv(sb, "rdb_last_bgsave_time_sec", last)
	kv(sb, "rdb_current_bgsave_time_sec", cur)
	kv(sb, "rdb_saves", p.saves)
	kv(sb, "rdb_last_cow_size", 0)
	kv(sb, "rdb_last_load_keys_expired", p.expiredKeys)
	kv(sb, "rdb_last_load_keys_loaded", p.loadedKeys)
}

// loadOptions are how a file loads.
type loadOptions struct {
	// keepExpired loads keys whose time has passed (a replica: its master
	// expires them); otherwise they are skipped, as on a master.
	keepExpired bool
	// allowDup replaces existing keys and libraries (DEBUG RELOAD MERGE);
	// otherwise a duplicate fails the load.
	allowDup bool
	// afterKey, when set, runs after each key; its error stops the load
	// (a replica's key-load-delay, repl_load.go).
	afterKey func() error
}

// loadRDB loads data into the live databases (lock held). On error the
// databases hold what was loaded before it.
func (s *Server) loadRDB(data []byte, opt loadOptions) error {
	p := &s.persist
	p.loadedKeys, p.expiredKeys, p.loadedRepl = 0, 0, nil
	var repl replInfo
	now := s.clock.NowMs()
	var db *store.DB = s.dbs[0]
	for _, d := range s.dbs {
		d.Tick()
	}
	verify := s.cfgYes("rdbchecksum", true)
	_, err := rdb.Load(data, verify, rdb.Loader{
		Aux: func(k, v string) {
			switch k {
			case "repl-id":
				repl.id = v
			case "repl-offset":
				repl.offset, _ = strconv.ParseInt(v, 10, 64)
			case "repl-stream-db":
				repl.streamDB, _ = strconv.Atoi(v)
			case "redis-ver":
				s.Logf('*', "Loading RDB produced by version %s", v)
			}
		},
		SelectDB: func(n int) error {
			if n >= len(s.dbs) {
				return fmt.Errorf("FATAL: Data file was created with a Redis server configured to handle more than %d databases. Exiting", len(s.dbs))
			}
			db = s.dbs[n]
			return nil
		},
		Function: func(code []byte) error {
			lib, err := s.compileLibrary(string(code))
			if err != nil {
				return fmt.Errorf("Failed loading library, %v", err)
			}
			if err := s.functions().install(lib, opt.allowDup); err != nil {
				return fmt.Errorf("Failed loading library, %v", err)
			}
			return nil
		},
		Key: func(e *rdb.Entry) error {
			o, err := db.DecodeValue(e.R, e.Type)
			if errors.Is(err, store.ErrEmptyKey) {
				s.Logf('#', "rdbLoadObject skipping empty key: %s", e.Key)
				return nil
			}
			if err != nil {
				return fmt.Errorf("Bad data format of key '%s' (type %d)", e.Key, e.Type)
			}
			if planted.On(planted.RDBDropSets) && o.Kind == store.KindSet {
				return nil // read and dropped, as a loader missing a type's case
			}
			if !opt.keepExpired && e.ExpireMs != -1 && e.ExpireMs < now {
				p.expiredKeys++
				return nil
			}
			if old := db.Raw(string(e.Key)); old != nil {
				if !opt.allowDup {
					return fmt.Errorf("RDB has duplicated key '%s' in DB %d", e.Key, e.DB)
				}
				db.Remove(old)
			}
			if e.ExpireMs != -1 {
				o.ExpireAt = e.ExpireMs
			}
			db.Add(e.Key, o)
			if e.Freq >= 0 && db.Access.LFU {
				db.SetFreq(o, int64(e.Freq))
			} else if e.Idle >= 0 && !db.Access.LFU {
				db.SetIdle(o, e.Idle)
			}
			p.loadedKeys++
			if opt.afterKey != nil {
				return opt.afterKey()
			}
			return nil
		},
	})
	if err != nil {
		return err
	}
	if len(repl.id) == 40 {
		p.loadedRepl = &repl
	}
	s.Logf('*', "Done loading RDB, keys loaded: %d, keys expired: %d.", p.loadedKeys, p.expiredKeys)
	return nil
}

// loadRDBAtStart loads dir/dbfilename when appendonly is off, as Redis's
// loadDataFromDisk: no file is an empty dataset, a bad file stops the start.
func (s *Server) loadRDBAtStart() error {
	if s.cfg.AppendOnly {
		return nil
	}
	path := s.rdbPath()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("Fatal error loading the DB: %v. Exiting.", err)
	}
	start := time.Now()
	s.loading = true
	s.mu.Lock()
	// The role decides whether keys already expired are kept: a replica
	// keeps them for its master to expire. In cluster mode the role is
	// known only once nodes.conf is read: keep them now and drop them in
	// afterStartLoad if this node is a master.
	master := !s.cfg.ClusterEnabled && s.cfg.ReplicaOf == ""
	err = s.loadRDB(data, loadOptions{keepExpired: !master})
	s.persist.purgeOnMaster = s.cfg.ClusterEnabled
	if ri := s.persist.loadedRepl; ri != nil && !s.cfg.ClusterEnabled && s.cfg.ReplicaOf != "" {
		// A configured replica: take the file's place in the stream now,
		// before the link's first PSYNC (afterStartLoad does it in
		// cluster mode, once nodes.conf said which role this node has).
		s.repl.replid, s.repl.offset = ri.id, ri.offset
		s.repl.offsetA.Store(ri.offset)
	}
	s.mu.Unlock()
	s.loading = false
	if err != nil {
		return fmt.Errorf("Fatal error loading the DB (%s): %v. Exiting.", path, err)
	}
	s.Logf('*', "DB loaded from disk: %.3f seconds", time.Since(start).Seconds())
	return nil
}

// afterStartLoad runs once the node's role is known (after startNode):
// a master drops the keys of the file that had already expired, as Redis
// skips them at load; a replica takes the file's replication ID and
// offset, so its first PSYNC can continue where the file was saved.
func (s *Server) afterStartLoad() {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := &s.persist
	master := !s.repl.isReplica() && (s.cl.node == nil || s.cl.node.IsMaster())
	if master && p.purgeOnMaster {
		now := s.clock.NowMs()
		for _, db := range s.dbs {
			var gone []*store.Object
			db.EachStored(func(o *store.Object) bool {
				if o.ExpireAt != 0 && o.ExpireAt < now {
					gone = append(gone, o)
				}
				return true
			})
			for _, o := range gone {
				db.Remove(o)
				p.loadedKeys--
				p.expiredKeys++
			}
		}
	}
	p.purgeOnMaster = false
	if ri := p.loadedRepl; ri != nil && !master && s.repl.masterCl == nil && s.repl.offset == 0 {
		s.repl.replid, s.repl.offset = ri.id, ri.offset
		s.repl.offsetA.Store(ri.offset)
	}
	p.loadedRepl = nil
}

// ---- commands ----

func cmdSave(c *Client, argv [][]byte) {
	s := c.s
	if s.persist.bg != nil {
		c.Error("ERR Background save already in progress")
		return
	}
	if s.aof != nil {
		s.aof.flush(true)
	}
	if err := s.saveRDB(); err != nil {
		c.Error("ERR")
		return
	}
	c.OK()
}

func cmdBgSave(c *Client, argv [][]byte) {
	s := c.s
	schedule := false
	if len(argv) > 1 {
		if len(argv) == 2 && strings.EqualFold(string(argv[1]), "schedule") {
			schedule = true
		} else {
			c.Error(ErrSyntax)
			return
		}
	}
	if s.aof != nil {
		s.aof.flush(true)
	}
	switch {
	case s.persist.bg != nil:
		c.Error("ERR Background save already in progress")
	case s.prop.depth > 0:
		// As Redis inside EXEC: the snapshot would cut the transaction.
		s.persist.scheduled = true
		c.Simple("Background saving scheduled")
	default:
		_ = schedule // no other child process can be active here
		s.startBgsave()
		c.Simple("Background saving started")
	}
}

func cmdLastSave(c *Client, argv [][]byte) { c.Int(c.s.lastSaveTime().Unix()) }

func cmdShutdown(c *Client, argv [][]byte) {
	s := c.s
	save, nosave, force := false, false, false
	for _, a := range argv[1:] {
		switch strings.ToUpper(string(a)) {
		case "NOSAVE":
			nosave = true
		case "SAVE":
			save = true
		case "NOW":
		case "FORCE":
			force = true
		case "ABORT":
			c.Error("ERR No shutdown in progress.")
			return
		default:
			c.Error(ErrSyntax)
			return
		}
	}
	if save && nosave {
		c.Error(ErrSyntax)
		return
	}
	if s.aof != nil {
		s.aof.flush(true)
	}
	if err := s.shutdownSave(save, nosave); err != nil && !force {
		c.Error("ERR Errors trying to SHUTDOWN. Check logs.")
		return
	}
	s.Logf('#', "User requested shutdown...")
	s.requestShutdown()
	// Like Redis, no reply: the connection closes.
	c.closeNow = true
}

// shutdownSave is the save step of Redis's prepareForShutdown: a
// background save is stopped, and the dataset saved when a save point is
// configured (or SAVE asked) unless NOSAVE (lock held).
func (s *Server) shutdownSave(save, nosave bool) error {
	s.killBgsave()
	if nosave || (!save && len(s.saveParams()) == 0) {
		return nil
	}
	s.Logf('*', "Saving the final RDB snapshot before exiting.")
	if err := s.saveRDB(); err != nil {
		s.Logf('#', "Error trying to save the DB, can't exit.")
		return err
	}
	return nil
}

// debugReload is DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]: save, empty the
// dataset (keys and functions), load the file back.
func debugReload(c *Client, argv [][]byte) {
	s := c.s
	flush, save, merge := true, true, false
	for _, a := range argv[2:] {
		switch strings.ToUpper(string(a)) {
		case "MERGE":
			merge = true
		case "NOFLUSH":
			flush = false
		case "NOSAVE":
			save = false
		default:
			c.Error("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.")
			return
		}
	}
	if save {
		if s.persist.bg != nil {
			s.killBgsave()
		}
		if err := s.saveRDB(); err != nil {
			c.Error("ERR")
			return
		}
	}
	data, err := os.ReadFile(s.rdbPath())
	if err != nil {
		c.Error("ERR Error trying to load the RDB dump")
		return
	}
	if flush {
		// As FLUSHALL empties (Redis's emptyData), functions included.
		s.touchAll(-1)
		s.signalFlushed(-1)
		for _, db := range s.dbs {
			db.Flush()
		}
		s.trackFlushAll()
		s.scripts.fns = nil
	}
	if err := s.loadRDB(data, loadOptions{keepExpired: s.repl.isReplica(), allowDup: merge}); err != nil {
		s.Logf('#', "%v", err)
		c.Error("ERR Error trying to load the RDB dump")
		return
	}
	s.Logf('#', "DB reloaded by DEBUG RELOAD")
	c.OK()
}

// send writes the snapshot; false when the link ended meanwhile (the
// connection is then closed).
func (p *pacedSync) send(rl *replicaLink, timeout time.Duration) bool {
	at := 0
	for _, end := range append(p.ends, len(p.data)) {
		rl.conn.SetWriteDeadline(time.Now().Add(timeout))
		if err := writeConn(rl.conn, p.data[at:end]); err != nil {
			rl.conn.Close()
			return false
		}
		at = end
		select {
		case <-rl.done:
			rl.conn.Close()
			return false
		case <-time.After(p.delay):
		}
	}
	rl.paced = nil
	return true
}

// receiveSync reads a full sync's payload with read. With
// repl-diskless-load swapdb the replica is async_loading meanwhile, as
// Redis 7.0's: it serves its old dataset until the new one is complete,
// and keeps it when the transfer breaks (the payload is loaded only once
// whole, in syncWithMaster).
func (s *Server) receiveSync(read func() ([]byte, error)) ([]byte, error) {
	s.mu.Lock()
	async := s.cfgValue("repl-diskless-load", "disabled") == "swapdb"
	s.persist.asyncLoading = async
	s.mu.Unlock()
	data, err := read()
	if async {
		s.mu.Lock()
		s.persist.asyncLoading = false
		s.mu.Unlock()
		if err != nil {
			s.Logf('#', "Failed trying to load the MASTER synchronization DB from socket, reverting to the old dataset: %v", err)
		}
	}
	return data, err
}

// saveAfterFlushAll is FLUSHALL's end in Redis 7.0 (flushAllDataAndResetRDB):
// a background save in progress is stopped (it would write the old
// dataset) and, with save points, the empty dataset is saved at once, so a
// restart does not bring the flushed keys back (lock held).
func (s *Server) saveAfterFlushAll() {
	s.killBgsave()
	if len(s.saveParams()) > 0 {
		s.saveRDB()
	}
}

// snapshotForSync is snapshot (db.go) holding also the keys whose time
// has passed but that are still stored, as an RDB of Redis does (rdbSaveDb
// writes every stored key) and as Redis's AOF rewrite after a full sync
// does: a replica that synced keeps them until its master's DEL arrives,
// so after a restart from its AOF its DBSIZE still follows its master's
// (cluster suite 14). Lock held; argv slices are valid during the call
// only.
func (s *Server) snapshotForSync(emit func(argv ...[]byte)) {
	s.snapshotFunctions(emit)
	for i, db := range s.dbs {
		if db.Len() == 0 {
			continue
		}
		emit([]byte("SELECT"), itob(int64(i)))
		db.EachStored(func(o *store.Object) bool {
			emitObject(emit, o)
			return true
		})
	}
}
