package server

// What atomic slot migration shows outside its own commands (Redis 8.4):
//   - The keys of slots a task imports here are hidden from SCAN, KEYS,
//     DBSIZE, RANDOMKEY, CLUSTER COUNTKEYSINSLOT and CLUSTER GETKEYSINSLOT
//     until the takeover (the documentation of those commands says "keys
//     being imported or trimmed will be filtered out"). Our trim deletes a
//     slot's keys in one step under the server lock, so no trimmed key is
//     ever visible half-way; only importing keys need hiding. Replicas of
//     the destination apply the same stream and do not hide (choice: a
//     replica has no task; a read there on an unowned slot is MOVED).
//     When no task imports, the cost is one nil test per command.
//   - CLUSTER INFO's cluster_slot_migration_* lines and INFO memory's
//     mem_cluster_slot_migration_* lines.
//   - CLIENT LIST flags: "o" on the connection that streams slots into this
//     node (the destination side), "g" on the one the source serves its
//     destination's requests on (the migrating side).

import (
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/redline-dev/redline/server/cluster"
	"github.com/redline-dev/redline/server/keyslot"
	"github.com/redline-dev/redline/server/store"
)

// hiding returns the hidden slots of db, nil when none (the fast path).
func (s *Server) hiding(db int) *hiddenSlots {
	if db != 0 {
		return nil
	}
	return s.hidden
}

func (h *hiddenSlots) hides(key string) bool { return h.set[keyslot.Of(key)] }

// visibleLen is DBSIZE: the keys of db minus those hidden.
func (s *Server) visibleLen(db int) int {
	n := s.dbs[db].Len()
	if h := s.hiding(db); h != nil {
		for _, sl := range h.slots {
			n -= s.dbs[db].CountKeysInSlot(sl)
		}
	}
	return n
}

// visibleRandomKey is RANDOMKEY skipping hidden keys: random draws first,
// then (all draws hidden) the first visible key in order.
func (s *Server) visibleRandomKey(db int) *store.Object {
	d := s.dbs[db]
	h := s.hiding(db)
	if h == nil {
		return d.RandomKey()
	}
	for i := 0; i < 100; i++ {
		o := d.RandomKey()
		if o == nil {
			return nil
		}
		if !h.hides(o.Key()) {
			return o
		}
	}
	var found *store.Object
	d.Each(func(o *store.Object) bool {
		if !h.hides(o.Key()) {
			found = o
			return false
		}
		return true
	})
	return found
}

// clusterKeysEnv is CLUSTER COUNTKEYSINSLOT's and GETKEYSINSLOT's view of
// db 0: hidden slots are empty.
func (s *Server) clusterKeysEnv() (count func(int) int, get func(int, int) []string) {
	db := s.dbs[0]
	h := s.hidden
	if h == nil {
		return db.CountKeysInSlot, db.KeysInSlot
	}
	return func(sl int) int {
			if h.set[sl] {
				return 0
			}
			return db.CountKeysInSlot(sl)
		}, func(sl, n int) []string {
			if h.set[sl] {
				return nil
			}
			return db.KeysInSlot(sl, n)
		}
}

// asmRefreshHidden rebuilds the hidden set when the importing tasks'
// slots changed (after every machine output; usually a slice compare).
func (s *Server) asmRefreshHidden() {
	rs := s.asm.m.ImportingRanges()
	old := s.hidden
	if len(rs) == 0 {
		s.hidden = nil
		return
	}
	if old != nil && slices.EqualFunc(old.ranges, rs, func(a, b []cluster.SlotSpan) bool { return slices.Equal(a, b) }) {
		return
	}
	h := &hiddenSlots{ranges: rs}
	for _, r := range rs {
		forEachSlot(r, func(sl int) {
			if !h.set[sl] {
				h.set[sl] = true
				h.slots = append(h.slots, sl)
			}
		})
	}
	s.hidden = h
}

// asmClusterInfo is CLUSTER INFO's atomic slot migration tail (Redis 8.4).
func (s *Server) asmClusterInfo() string {
	var active int
	var st asmStats
	if s.asm != nil {
		active = s.asm.m.ActiveTasks()
		st = s.asm.stats
	}
	var b []byte
	w := func(k string, v int64) {
		b = append(b, k...)
		b = append(b, ':')
		b = strconv.AppendInt(b, v, 10)
		b = append(b, "\r\n"...)
	}
	w("cluster_slot_migration_active_tasks", int64(active))
	// Trims run to completion in one step under the lock: never running.
	w("cluster_slot_migration_active_trim_running", 0)
	w("cluster_slot_migration_active_trim_current_job_keys", 0)
	w("cluster_slot_migration_active_trim_current_job_trimmed", 0)
	w("cluster_slot_migration_stats_active_trim_started", st.trimStarted)
	w("cluster_slot_migration_stats_active_trim_completed", st.trimCompleted)
	w("cluster_slot_migration_stats_active_trim_cancelled", 0)
	return string(b)
}

// asmMemoryInfo returns INFO memory's mem_cluster_slot_migration_* figures:
// the bytes queued to peers and not yet written (output), the input buffer
// (always 0: a message is applied as it arrives) and its peak (the largest
// message applied).
func (s *Server) asmMemoryInfo() (out, in, peak int64) {
	if s.asm == nil {
		return 0, 0, 0
	}
	for _, p := range s.asm.peers {
		out += p.queued.Load()
	}
	return out, 0, s.asm.stats.inputPeak
}

// asmMsgFlag is the CLIENT LIST flag of a migration connection: msg arrives
// on it from the peer.
func asmMsgFlag(t cluster.MigMsgType) byte {
	switch t {
	case cluster.MigSnapshot, cluster.MigStream, cluster.MigEOF:
		return 'o' // the source streams into this (importing) node
	case cluster.MigSync, cluster.MigAck, cluster.MigTakenOver:
		return 'g' // the destination drives this (migrating) node
	}
	return 0
}

// noteForeignWrite runs on a replica for each command of its master's
// stream: a write to a slot another node owns belongs to an atomic
// import under way on the master (or its trim). Redis 8.4 tells replicas
// of the task (CLUSTER SYNCSLOTS CONF ASM-TASK) so that a replica promoted
// mid-import trims what was imported; this is our equivalent: the master
// announces the task's slots (announceImport), their writes are
// remembered and trimmed on promotion (trimForeign).
//
// A write to a slot no task announced is kept: a classic import (SETSLOT
// IMPORTING on the master, then MIGRATE's RESTORE-ASKING or a client's
// ASKING write), which Redis 7.0.15 keeps on a promoted replica (it deletes
// keys only of slots it owned and lost, clusterUpdateSlotsConfigWith's
// dirty slots), and a mover then finishes the move there. Found twice: the
// slot mover's test of a failover of the destination between MIGRATE and
// SETSLOT NODE (RESTORE-ASKING), and a client's ASKING write deleted on
// the promoted replica (TestPromotedReplicaKeepsAClassicImportsWrites).
func (s *Server) noteForeignWrite(argv [][]byte) {
	if s.cl.node.IsMaster() || len(s.cl.taskSlots) == 0 {
		return
	}
	cmd := s.Lookup(argv[0])
	if cmd == nil || cmd.Flags&FlagWrite == 0 {
		return
	}
	k := cmd.firstKey(argv)
	if k == nil {
		return
	}
	sl := keyslot.Of(k)
	if !s.cl.taskSlots[sl] {
		return
	}
	if owner := s.cl.node.SlotOwner(sl); owner != "" && owner != s.cl.node.MasterID() {
		if s.cl.foreign == nil {
			s.cl.foreign = map[int]bool{}
		}
		s.cl.foreign[sl] = true
	}
}

// announceImport tells the replicas, once per task, the slots this
// primary imports with task, before the task's first keys reach them
// (CLUSTER SYNCSLOTS CONF ASM-TASK <task> <start-end>..., in the
// replication stream only: the AOF does not need it, a restarted primary
// trims unfinished imports itself, trimUnownedOnLoad).
func (s *Server) announceImport(task string) {
	a := s.asm
	if a.announced[task] {
		return
	}
	var ranges []cluster.SlotSpan
	for _, t := range a.m.Status(task) {
		if t.Importing {
			ranges = t.Ranges
		}
	}
	if a.announced == nil {
		a.announced = map[string]bool{}
	}
	a.announced[task] = true
	argv := [][]byte{[]byte("CLUSTER"), []byte("SYNCSLOTS"), []byte("CONF"), []byte("ASM-TASK"), []byte(task)}
	for _, r := range ranges {
		argv = append(argv, []byte(strconv.Itoa(r.Start)+"-"+strconv.Itoa(r.End)))
	}
	s.repl.propagated(0, argv)
}

// isImportAnnouncement: argv is announceImport's line.
func isImportAnnouncement(argv [][]byte) bool {
	return len(argv) >= 5 && strings.EqualFold(string(argv[0]), "cluster") && strings.EqualFold(string(argv[1]), "syncslots") &&
		strings.EqualFold(string(argv[2]), "conf") && strings.EqualFold(string(argv[3]), "asm-task")
}

// noteImportAnnouncement (replica) remembers the announced task's slots.
func (s *Server) noteImportAnnouncement(argv [][]byte) {
	if s.cl.node == nil {
		return
	}
	if s.cl.taskSlots == nil {
		s.cl.taskSlots = map[int]bool{}
	}
	for _, r := range argv[5:] {
		a, b, _ := strings.Cut(string(r), "-")
		lo, err1 := strconv.Atoi(a)
		hi, err2 := strconv.Atoi(b)
		if err1 != nil || err2 != nil || lo < 0 || hi >= cluster.NumSlots {
			continue
		}
		for sl := lo; sl <= hi; sl++ {
			s.cl.taskSlots[sl] = true
		}
	}
}

// trimForeign, on promotion (the slots of the old master already claimed),
// deletes the keys of remembered import slots that another node owns: the
// import never completed for this shard (found by the handoff checker:
// a destination's replica promoted mid-import kept the keys, so they were
// on both shards).
func (s *Server) trimForeign() {
	s.cl.taskSlots = nil // a primary now: its own tasks are its machine's
	if len(s.cl.foreign) == 0 {
		return
	}
	self := s.cl.node.ID()
	var rs []cluster.SlotSpan
	for sl := range s.cl.foreign {
		if o := s.cl.node.SlotOwner(sl); o != "" && o != self {
			rs = append(rs, cluster.SlotSpan{Start: sl, End: sl})
		}
	}
	s.cl.foreign = nil
	if len(rs) == 0 {
		return
	}
	db := s.dbs[0]
	n := 0
	forEachSlot(rs, func(sl int) {
		for _, k := range db.KeysInSlot(sl, 1<<30) {
			if db.Delete([]byte(k)) {
				n++
				s.propagate(0, [][]byte{[]byte("DEL"), []byte(k)})
			}
		}
	})
	s.Logf('*', "Slot migration: promoted with an unfinished import: trimmed %d keys of %d slots owned by others", n, len(rs))
}

// trimUnownedOnLoad runs at start, after the data and nodes.conf are
// loaded, on a primary, and checks its keys against its slot map as Redis
// does. A slot of an import task that was in progress when the node
// stopped (CLUSTER MIGRATION; its tasks are kept in the file beside
// nodes.conf, importMarkerPath) is trimmed: Redis 8.4 records the task in
// the RDB (the cluster-asm-task aux field) and trims its slots on load
// (found by the handoff checker: a destination killed mid-import came
// back with the imported keys, on both shards). Any other slot it holds
// keys of is Redis 7.0's verifyClusterConfigWithData: an unassigned one it
// takes, one another node owns it sets IMPORTING from that owner, the
// keys kept, for an operator (redis-cli --cluster fix) to decide.
func (s *Server) trimUnownedOnLoad() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cl.node == nil || !s.cl.node.IsMaster() {
		return
	}
	db := s.dbs[0]
	tasks := s.loadImportMarker()
	if db.Len() == 0 {
		return
	}
	self := s.cl.node.ID()
	view := s.cl.node.View()
	n, slots := 0, 0
	changed := false
	for sl := 0; sl < cluster.NumSlots; sl++ {
		if db.CountKeysInSlot(sl) == 0 {
			continue
		}
		o := s.cl.node.SlotOwner(sl)
		if o == self {
			continue
		}
		if _, importing := view.Importing[sl]; importing {
			continue
		}
		if !tasks[sl] {
			if o == "" {
				s.Logf('#', "I have keys for unassigned slot %d. Taking responsibility for it.", sl)
				s.cl.node.AddSlots(sl) // CLUSTER ADDSLOTS, as the node's own typed call
			} else {
				s.Logf('#', "I have keys for slot %d, but the slot is assigned to another node. Setting it to importing state.", sl)
				s.cl.node.SetSlot(sl, cluster.SetSlotImporting, o, 0) // CLUSTER SETSLOT IMPORTING
			}
			changed = true
			continue
		}
		slots++
		for _, k := range db.KeysInSlot(sl, 1<<30) {
			if db.Delete([]byte(k)) {
				n++
				s.propagate(0, [][]byte{[]byte("DEL"), []byte(k)})
			}
		}
	}
	if changed {
		s.nodeReady()
	}
	if n > 0 {
		s.Logf('#', "Slot migration: trimmed %d keys of %d slots other nodes own (an import unfinished when this node stopped)", n, slots)
	}
}

// importMarkerPath is the file beside nodes.conf that lists the slots of
// the import tasks in progress, so that a restart knows what to trim (our
// choice: Redis 8.4 keeps the tasks in the RDB's cluster-asm-task field).
func (s *Server) importMarkerPath() string {
	if s.cl.confPath == "" {
		return ""
	}
	return s.cl.confPath + ".asm-import"
}

// saveImportMarker writes the import tasks' slots when they changed (lock
// held; after each step of the migration machine). A failed write is
// logged: a restart then treats the slots as Redis 7.0 does.
func (s *Server) saveImportMarker() {
	path := s.importMarkerPath()
	if s.asm == nil || path == "" {
		return
	}
	var pairs []string // "lo hi" pairs, as CLUSTER MIGRATION IMPORT takes them
	for _, r := range s.asm.m.ImportTaskRanges() {
		pairs = append(pairs, strconv.Itoa(r.Start), strconv.Itoa(r.End))
	}
	text := strings.Join(pairs, " ")
	if text == s.cl.importMarker {
		return
	}
	var err error
	if text == "" {
		err = os.Remove(path)
		if errors.Is(err, os.ErrNotExist) {
			err = nil
		}
	} else {
		tmp := path + ".tmp"
		if err = os.WriteFile(tmp, []byte(text+"\n"), 0o644); err == nil {
			err = os.Rename(tmp, path)
		}
	}
	if err != nil {
		s.Logf('#', "Slot migration: could not save the import tasks' slots to %s: %v", path, err)
		return
	}
	s.cl.importMarker = text
}

// loadImportMarker reads the slots of the import tasks in progress when
// the node stopped (none when there is no file) and removes the file: the
// tasks are gone with the process.
func (s *Server) loadImportMarker() map[int]bool {
	path := s.importMarkerPath()
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	os.Remove(path)
	out := map[int]bool{}
	rs, err := cluster.ParseSlotRanges(strings.Fields(string(data)))
	if err != nil {
		s.Logf('#', "Slot migration: ignoring %s: %v", path, err)
		return nil
	}
	forEachSlot(rs, func(sl int) { out[sl] = true })
	return out
}

func forEachSlot(rs []cluster.SlotSpan, f func(int)) {
	for _, r := range rs {
		for sl := r.Start; sl <= r.End; sl++ {
			f(sl)
		}
	}
}
