package cluster

// Atomic slot migration (Redis 8.4, CLUSTER MIGRATION) as a deterministic
// state machine, in the style of Node: no I/O and no clock inside. The
// owner feeds it commands (Import, Cancel), peer messages (Step), link
// losses (LinkDown), the writes the data plane accepts (Write) and time
// (Tick); it answers with MigrationOutput (messages to send, slots to pause,
// take over or trim), collected by TakeOutput.
//
// The protocol, after Redis 8.4's cluster_asm design (destination pulls):
//
//	dest   IMPORT        -> task "connecting", sends SYNC to the slots' owner
//	source on SYNC       -> task "send-bulk-and-stream": snapshot of the slots
//	                        sent, then every write on them streamed ("send-stream")
//	dest   on SNAPSHOT   -> applied; "streaming-buffer"; ACKs its offset each tick
//	source on ACK        -> lag <= handoff-max-lag: pauses writes on the slots
//	                        ("handoff"), sends EOF with its final offset
//	dest   on EOF        -> once applied up to it: takes the slots over (epoch
//	                        bump, "takeover"), task "done", sends TAKENOVER
//	source on TAKENOVER  -> "done": resumes writes (now MOVED), trims the slots,
//	                        write_pause_ms = done - paused
//
// Where Redis's documentation is silent, the choices are:
//   - A failed import is retried by the destination after RetryDelay with
//     the slots' current owner as source (a failed-over source's replica),
//     retries counted; the destination trims what it imported first.
//   - CANCEL on the destination cancels for good and tells the source; CANCEL
//     on the source only fails the current attempt: the destination, which
//     drives the migration, retries it (as for a broken link).
//   - A source whose write pause exceeds WritePauseTimeout, or whose link
//     to the destination breaks while paused, fails its task and resumes
//     writes. If the destination had already taken over (TAKENOVER lost in
//     flight), both sides accept writes for the slots until the epochs
//     settle: the window in which the vendor's "atomic" claim can break,
//     kept on purpose (the reference has Redis's weaknesses).
//   - Tasks live in memory only: a killed node forgets its tasks.

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// MigrationConfig are the tunables (Redis 8.4 directive names in comments).
type MigrationConfig struct {
	HandoffMaxLag     int64         // cluster-slot-migration-handoff-max-lag-bytes (1 MB)
	WritePauseTimeout time.Duration // cluster-slot-migration-write-pause-timeout (10 s)
	RetryDelay        time.Duration // delay before a failed import is retried (our choice: 1 s)
	MaxArchived       int           // cluster-slot-migration-max-archived-tasks (32)
}

// DefaultMigrationConfig has Redis 8.4's defaults.
func DefaultMigrationConfig() MigrationConfig {
	return MigrationConfig{HandoffMaxLag: 1 << 20, WritePauseTimeout: 10 * time.Second, RetryDelay: time.Second, MaxArchived: 32}
}

// SlotSpan is an inclusive range of slots (SlotRange is CLUSTER SLOTS' entry).
type SlotSpan struct{ Start, End int }

func (r SlotSpan) has(slot int) bool { return slot >= r.Start && slot <= r.End }

// FormatRanges renders ranges as STATUS's slots_range ("0-99 200-300").
func FormatRanges(rs []SlotSpan) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = strconv.Itoa(r.Start) + "-" + strconv.Itoa(r.End)
	}
	return strings.Join(parts, " ")
}

// Task states (Redis 8.4's names, the subset this model passes through).
const (
	MigConnecting   = "connecting"
	MigStreamingBuf = "streaming-buffer"
	MigWaitEOF      = "wait-stream-eof"
	MigTakeover     = "takeover"
	MigSendBulk     = "send-bulk-and-stream"
	MigSendStream   = "send-stream"
	MigHandoff      = "handoff"
	MigDone         = "done"
	MigFailed       = "failed"
	MigCanceled     = "canceled"
)

// MigrationTask is one side of a migration, with the fields STATUS reports.
type MigrationTask struct {
	ID         string
	Ranges     []SlotSpan
	Source     string
	Dest       string
	Importing  bool // operation "importing" (destination) or "migrating" (source)
	State      string
	LastError  string
	Retries    int64
	CreateTime int64 // unix ms
	StartTime  int64 // unix ms, -1 before start
	DoneTime   int64 // unix ms, -1 before done
	PausedTime int64 // unix ms the source paused writes, 0 when not paused

	offset   int64 // source: stream bytes sent; destination: bytes applied
	eof      int64 // destination: the source's final offset, -1 before EOF
	failedAt time.Time
}

// Operation is STATUS's operation field.
func (t *MigrationTask) Operation() string {
	if t.Importing {
		return "importing"
	}
	return "migrating"
}

// WritePauseMs is STATUS's write_pause_ms: only for a source task done.
func (t *MigrationTask) WritePauseMs() int64 {
	if !t.Importing && t.State == MigDone && t.PausedTime > 0 {
		return t.DoneTime - t.PausedTime
	}
	return 0
}

func (t *MigrationTask) owns(slot int) bool {
	for _, r := range t.Ranges {
		if r.has(slot) {
			return true
		}
	}
	return false
}

// MigMsgType is the kind of a migration message between the two primaries.
type MigMsgType int

const (
	MigSync      MigMsgType = iota // dest -> source: start (or restart) task
	MigSnapshot                    // source -> dest: the slots' snapshot, stream starts at Offset
	MigStream                      // source -> dest: a write of Bytes bytes, stream now at Offset
	MigAck                         // dest -> source: applied up to Offset
	MigEOF                         // source -> dest: writes paused, final Offset
	MigTakenOver                   // dest -> source: the slots are mine (the bus's UPDATE in the server)
	MigAbort                       // either way: the task failed or was canceled (Err)
)

var migMsgNames = [...]string{"SYNC", "SNAPSHOT", "STREAM", "ACK", "EOF", "TAKENOVER", "ABORT"}

func (t MigMsgType) String() string { return migMsgNames[t] }

// MigMsg is a migration message. In the server the snapshot and stream
// carry key data; the machine only needs their offsets.
type MigMsg struct {
	Type     MigMsgType
	From, To string
	Task     string
	Ranges   []SlotSpan
	Offset   int64
	Bytes    int64
	Err      string
}

// MigrationOutput is what the owner must do after a call.
type MigrationOutput struct {
	Msgs     []MigMsg
	Pause    [][]SlotSpan // source: refuse writes on these slots until resumed
	Resume   [][]SlotSpan // source: accept writes again
	TakeOver [][]SlotSpan // destination: claim the slots (bump epoch, broadcast)
	Trim     [][]SlotSpan // delete the keys of these slots (no longer ours)
	Log      []string
}

// Migrations is one primary's CLUSTER MIGRATION state.
type Migrations struct {
	self   string
	cfg    MigrationConfig
	owner  func(slot int) string
	newID  func() string
	now    time.Time
	tasks  []*MigrationTask // active; at most one import (as Redis 8.4)
	done   []*MigrationTask // archived, newest first
	total  int64
	out    MigrationOutput
	paused map[string]bool // task ids whose slots are write-paused here
}

// NewMigrations returns the machine of node self. owner reports the
// current owner of a slot (the node's slot table); newID makes task ids.
func NewMigrations(self string, cfg MigrationConfig, owner func(int) string, newID func() string, now time.Time) *Migrations {
	return &Migrations{self: self, cfg: cfg, owner: owner, newID: newID, now: now, paused: map[string]bool{}}
}

// TakeOutput returns and clears the pending output.
func (m *Migrations) TakeOutput() MigrationOutput {
	o := m.out
	m.out = MigrationOutput{}
	return o
}

func (m *Migrations) ms() int64 { return m.now.UnixMilli() }

// SetTime moves the machine's clock without ticking (the server calls it
// before each input so STATUS's times are exact).
func (m *Migrations) SetTime(now time.Time) { m.now = now }

func (m *Migrations) logf(format string, args ...any) {
	m.out.Log = append(m.out.Log, fmt.Sprintf(format, args...))
}

func (m *Migrations) send(msg MigMsg) {
	msg.From = m.self
	m.out.Msgs = append(m.out.Msgs, msg)
}

// Import starts a task pulling ranges to this node (IMPORT). The errors
// are Redis 8.4's texts.
func (m *Migrations) Import(ranges []SlotSpan) (string, error) {
	source, err := m.sourceOf(ranges)
	if err != nil {
		return "", err
	}
	for _, t := range m.tasks {
		if t.Importing && t.State == MigFailed {
			m.finish(t, MigCanceled, "Cancelled due to new import requested")
			continue
		}
		return "", fmt.Errorf("ERR another ASM task is already in progress")
	}
	t := &MigrationTask{ID: m.newID(), Ranges: append([]SlotSpan(nil), ranges...), Source: source, Dest: m.self,
		Importing: true, CreateTime: m.ms(), StartTime: -1, DoneTime: -1, eof: -1}
	m.tasks = append(m.tasks, t)
	m.start(t)
	return t.ID, nil
}

// sourceOf checks that one other node owns every slot of ranges.
func (m *Migrations) sourceOf(ranges []SlotSpan) (string, error) {
	source := ""
	for _, r := range ranges {
		for s := r.Start; s <= r.End; s++ {
			o := m.owner(s)
			if o == "" {
				return "", fmt.Errorf("ERR slot %d has no owner", s)
			}
			if source == "" {
				source = o
			} else if o != source {
				return "", fmt.Errorf("ERR slots belong to different source nodes")
			}
		}
	}
	if source == m.self {
		return "", fmt.Errorf("ERR this node is already the owner of the slot range")
	}
	return source, nil
}

func (m *Migrations) start(t *MigrationTask) {
	t.State = MigConnecting
	t.StartTime = m.ms()
	t.offset, t.eof = 0, -1
	m.logf("import %s: %s from %s", t.ID, FormatRanges(t.Ranges), t.Source)
	m.send(MigMsg{Type: MigSync, To: t.Source, Task: t.ID, Ranges: t.Ranges})
}

// Cancel cancels the task id ("" = all tasks) and returns how many.
func (m *Migrations) Cancel(id string) int {
	n := 0
	for _, t := range append([]*MigrationTask(nil), m.tasks...) {
		if id != "" && t.ID != id {
			continue
		}
		n++
		m.abort(t, MigCanceled, "Cancelled due to user request", true)
	}
	return n
}

// abort ends t's current attempt. A destination task canceled for good is
// archived; a destination task failed waits for its retry; a source task
// is archived either way (the destination drives the retries).
func (m *Migrations) abort(t *MigrationTask, state, reason string, tell bool) {
	peer := t.Dest
	if t.Importing {
		peer = t.Source
		if t.State != MigFailed && t.State != MigConnecting {
			m.out.Trim = append(m.out.Trim, t.Ranges) // drop the partial import
		}
	}
	if tell {
		m.send(MigMsg{Type: MigAbort, To: peer, Task: t.ID, Err: reason})
	}
	m.resume(t)
	if t.Importing && state == MigFailed {
		t.State = MigFailed
		t.LastError = reason
		t.failedAt = m.now
		m.logf("import %s failed: %s", t.ID, reason)
		return
	}
	m.finish(t, state, reason)
}

func (m *Migrations) resume(t *MigrationTask) {
	if m.paused[t.ID] {
		delete(m.paused, t.ID)
		m.out.Resume = append(m.out.Resume, t.Ranges)
	}
}

// finish archives t in its final state.
func (m *Migrations) finish(t *MigrationTask, state, reason string) {
	t.State = state
	if reason != "" {
		t.LastError = reason
	}
	t.DoneTime = m.ms()
	m.total++
	for i, x := range m.tasks {
		if x == t {
			m.tasks = append(m.tasks[:i], m.tasks[i+1:]...)
			break
		}
	}
	m.done = append([]*MigrationTask{t}, m.done...)
	if len(m.done) > m.cfg.MaxArchived {
		m.done = m.done[:m.cfg.MaxArchived]
	}
	m.logf("%s %s %s", t.Operation(), t.ID, state)
}

func (m *Migrations) task(id string, importing bool) *MigrationTask {
	for _, t := range m.tasks {
		if t.ID == id && t.Importing == importing {
			return t
		}
	}
	return nil
}

// Step handles a message from a peer.
func (m *Migrations) Step(msg MigMsg) {
	switch msg.Type {
	case MigSync:
		if old := m.task(msg.Task, false); old != nil {
			m.abort(old, MigFailed, "restarted by the destination", false)
		}
		if !m.ownsAll(msg.Ranges) {
			m.send(MigMsg{Type: MigAbort, To: msg.From, Task: msg.Task, Err: "source does not own the slots"})
			return
		}
		t := &MigrationTask{ID: msg.Task, Ranges: msg.Ranges, Source: m.self, Dest: msg.From, CreateTime: m.ms(),
			StartTime: m.ms(), DoneTime: -1, State: MigSendBulk, eof: -1}
		m.tasks = append(m.tasks, t)
		m.logf("migrate %s: %s to %s", t.ID, FormatRanges(t.Ranges), t.Dest)
		m.send(MigMsg{Type: MigSnapshot, To: t.Dest, Task: t.ID, Offset: t.offset})
		t.State = MigSendStream
	case MigSnapshot:
		if t := m.task(msg.Task, true); t != nil && t.State == MigConnecting {
			// Applied; the first ACK goes with the next tick (as replicas
			// ACK from their cron), so the handoff never happens inside
			// the snapshot's delivery.
			t.offset = msg.Offset
			t.State = MigStreamingBuf
		}
	case MigStream:
		if t := m.task(msg.Task, true); t != nil && (t.State == MigStreamingBuf || t.State == MigWaitEOF) {
			t.offset = msg.Offset
			m.maybeTakeOver(t)
		}
	case MigAck:
		t := m.task(msg.Task, false)
		if t == nil || t.State != MigSendStream || t.offset-msg.Offset > m.cfg.HandoffMaxLag {
			return
		}
		t.State = MigHandoff
		t.PausedTime = m.ms()
		m.paused[t.ID] = true
		m.out.Pause = append(m.out.Pause, t.Ranges)
		m.send(MigMsg{Type: MigEOF, To: t.Dest, Task: t.ID, Offset: t.offset})
	case MigEOF:
		if t := m.task(msg.Task, true); t != nil && t.State == MigStreamingBuf {
			t.eof = msg.Offset
			t.State = MigWaitEOF
			m.maybeTakeOver(t)
		}
	case MigTakenOver:
		if t := m.task(msg.Task, false); t != nil && t.State == MigHandoff {
			m.sourceDone(t)
		}
	case MigAbort:
		if t := m.task(msg.Task, true); t != nil && t.State != MigFailed {
			m.abort(t, MigFailed, "source: "+msg.Err, false)
		} else if t := m.task(msg.Task, false); t != nil {
			state := MigFailed
			if strings.HasPrefix(msg.Err, "Cancelled") {
				state = MigCanceled
			}
			m.abort(t, state, "destination: "+msg.Err, false)
		}
	}
}

func (m *Migrations) ownsAll(ranges []SlotSpan) bool {
	for _, r := range ranges {
		for s := r.Start; s <= r.End; s++ {
			if m.owner(s) != m.self {
				return false
			}
		}
	}
	return true
}

// maybeTakeOver completes an import once everything up to EOF is applied.
func (m *Migrations) maybeTakeOver(t *MigrationTask) {
	if t.State != MigWaitEOF || t.offset < t.eof {
		return
	}
	t.State = MigTakeover
	m.out.TakeOver = append(m.out.TakeOver, t.Ranges)
	m.send(MigMsg{Type: MigTakenOver, To: t.Source, Task: t.ID, Ranges: t.Ranges})
	m.finish(t, MigDone, "")
}

func (m *Migrations) sourceDone(t *MigrationTask) {
	m.resume(t)
	m.out.Trim = append(m.out.Trim, t.Ranges)
	m.finish(t, MigDone, "")
}

// WriteResult says what the data plane must do with a write on a slot.
type WriteResult int

const (
	WriteOK     WriteResult = iota // apply it (and it was streamed if migrating)
	WritePaused                    // the slot is in handoff: hold or TRYAGAIN
)

// Write is called by a source for each write of n bytes it is about to
// apply on slot; it streams the write to the destination of a task.
func (m *Migrations) Write(slot int, n int64) WriteResult {
	for _, t := range m.tasks {
		if t.Importing || !t.owns(slot) {
			continue
		}
		if m.paused[t.ID] {
			return WritePaused
		}
		if t.State == MigSendStream {
			t.offset += n
			m.send(MigMsg{Type: MigStream, To: t.Dest, Task: t.ID, Offset: t.offset, Bytes: n})
		}
	}
	return WriteOK
}

// LinkDown reports that the link to peer broke (killed, partitioned,
// failed over): every task with it fails.
func (m *Migrations) LinkDown(peer string) {
	for _, t := range append([]*MigrationTask(nil), m.tasks...) {
		if t.State == MigFailed {
			continue
		}
		if t.Importing && t.Source == peer {
			m.abort(t, MigFailed, "Main channel - Connection is closed", false)
		} else if !t.Importing && t.Dest == peer {
			m.abort(t, MigFailed, "Connection to the destination is closed", false)
		}
	}
}

// Tick advances time: destinations ACK their offset, sources enforce the
// write-pause timeout, failed imports are retried.
func (m *Migrations) Tick(now time.Time) {
	m.now = now
	for _, t := range append([]*MigrationTask(nil), m.tasks...) {
		switch {
		case t.Importing && t.State == MigStreamingBuf:
			m.send(MigMsg{Type: MigAck, To: t.Source, Task: t.ID, Offset: t.offset})
		case t.Importing && t.State == MigFailed && now.Sub(t.failedAt) >= m.cfg.RetryDelay:
			if m.ownsAll(t.Ranges) {
				m.finish(t, MigDone, "") // the takeover happened after all
				continue
			}
			src, err := m.sourceOf(t.Ranges)
			if err != nil {
				t.LastError = strings.TrimPrefix(err.Error(), "ERR ")
				t.failedAt = now
				continue
			}
			t.Retries++
			t.Source = src
			m.start(t)
		case !t.Importing && t.State == MigHandoff && now.Sub(time.UnixMilli(t.PausedTime)) > m.cfg.WritePauseTimeout:
			m.abort(t, MigFailed, "write pause timeout", true)
		case !t.Importing && t.State == MigSendStream && !m.ownsAll(t.Ranges):
			// Someone else owns the slots now (a failover of ours, a
			// classic migration): this attempt cannot hand them off.
			m.abort(t, MigFailed, "the slots changed owner", true)
		}
	}
}

// Status returns the task id (nil if unknown) or, with id "", every task:
// active ones first, then the archived ones newest first (Redis's order).
func (m *Migrations) Status(id string) []*MigrationTask {
	var out []*MigrationTask
	for _, t := range append(append([]*MigrationTask(nil), m.tasks...), m.done...) {
		if id == "" || t.ID == id {
			out = append(out, t)
			if id != "" {
				break
			}
		}
	}
	return out
}

// Paused reports whether writes on slot are paused by a handoff here.
func (m *Migrations) Paused(slot int) bool {
	for _, t := range m.tasks {
		if m.paused[t.ID] && t.owns(slot) {
			return true
		}
	}
	return false
}

// Importing reports whether slot is being imported here (its keys are
// hidden from SCAN, DBSIZE, KEYS and GETKEYSINSLOT until the takeover).
func (m *Migrations) Importing(slot int) bool {
	for _, t := range m.tasks {
		if t.Importing && t.State != MigFailed && t.State != MigConnecting && t.owns(slot) {
			return true
		}
	}
	return false
}

// Covers reports whether an active task here (either side, any state but
// failed) covers slot.
func (m *Migrations) Covers(slot int) bool {
	for _, t := range m.tasks {
		if t.State != MigFailed && t.owns(slot) {
			return true
		}
	}
	return false
}

// ImportingRanges are the slots of the tasks Importing reports, in one
// slice per task (the task's own; the caller must not change them). The
// server hides their keys; nil when nothing is imported.
func (m *Migrations) ImportingRanges() [][]SlotSpan {
	var out [][]SlotSpan
	for _, t := range m.tasks {
		if t.Importing && t.State != MigFailed && t.State != MigConnecting {
			out = append(out, t.Ranges)
		}
	}
	return out
}

// ImportTaskRanges are the slots of every import task not given up
// (connecting ones too): what a restart must trim, the tasks living in
// memory only (the server keeps them in a file beside nodes.conf).
func (m *Migrations) ImportTaskRanges() []SlotSpan {
	var out []SlotSpan
	for _, t := range m.tasks {
		if t.Importing && t.State != MigFailed {
			out = append(out, t.Ranges...)
		}
	}
	return out
}

// ActiveTasks and TotalDone are INFO's cluster_slot_migration_task_count
// and cluster_slot_migration_total_done_tasks.
func (m *Migrations) ActiveTasks() int { return len(m.tasks) }

// TotalDone counts the tasks archived (done, failed source side, canceled).
func (m *Migrations) TotalDone() int64 { return m.total }

// ParseSlotRanges parses IMPORT's "start end [start end ...]" arguments.
func ParseSlotRanges(args []string) ([]SlotSpan, error) {
	if len(args) == 0 || len(args)%2 != 0 {
		return nil, fmt.Errorf("ERR wrong number of arguments for 'cluster|migration' command")
	}
	var out []SlotSpan
	for i := 0; i < len(args); i += 2 {
		a, err := parseSlot(args[i])
		if err != nil {
			return nil, err
		}
		b, err := parseSlot(args[i+1])
		if err != nil {
			return nil, err
		}
		if a > b {
			return nil, fmt.Errorf("ERR start slot number %d is greater than end slot number %d", a, b)
		}
		for _, r := range out {
			if a <= r.End && b >= r.Start {
				return nil, fmt.Errorf("ERR Slot %d specified multiple times", max(a, r.Start))
			}
		}
		out = append(out, SlotSpan{a, b})
	}
	return out, nil
}

// ClaimSlots is the destination's takeover: it gives the slots to this
// node with a config epoch above every epoch it knows and above
// sourceEpoch (the source's, sent with EOF), without consensus, and
// broadcasts the claim. Bumping only when this node's epoch is not the
// highest it knows (BUMPEPOCH) is not enough: a destination that has not
// yet heard of the source's latest epoch would claim with a lower one and
// lose, and then nobody would claim the slots.
func (n *Node) ClaimSlots(rs []SlotSpan, sourceEpoch uint64) uint64 {
	for _, r := range rs {
		for s := r.Start; s <= r.End; s++ {
			n.delSlot(s)
			n.addSlot(n.self, s)
			delete(n.importing, s)
			delete(n.migrating, s)
		}
	}
	top := max(n.currentEpoch, sourceEpoch)
	for _, p := range n.peers {
		top = max(top, p.configEpoch)
	}
	n.currentEpoch = top + 1
	n.self.configEpoch = n.currentEpoch
	n.logf("configEpoch set to %d after an atomic slot migration", n.self.configEpoch)
	n.save(true)
	n.broadcast(n.header(MsgPong))
	n.todo |= todoSaveConfig | todoUpdateState | todoView
	return n.self.configEpoch
}
