package clusteradmin

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"
)

// JournalFile is the journal's name in a run directory.
const JournalFile = "topology-journal.jsonl"

// Step is one topology change redline makes, as journalled.
type Step struct {
	Seq   int       `json:"seq"`
	Time  time.Time `json:"time"`
	State string    `json:"state"` // "begin" (written before the change), "done", "failed"
	// Kind: "migrate" (slots From -> To, keys moved), "open" (a migration
	// left half-way on purpose), "close" (finishing or undoing an open one),
	// "reassert" (dst re-takes a slot it had been given), "failover" (To,
	// a replica of From, takes over), "add-node" and "remove-node" (on
	// clusters redline created), "set-aside" (Keys had a different copy on
	// From than on To: To's copy kept, From's restored beside it on To
	// under Aside's names, on clusters redline created), "assign" (To
	// imports Slots but its own slot map had no owner of them: From set
	// as their owner there, To's IMPORTING kept, so that the repair's
	// RESTORE-ASKING is taken), "adopt" (To, restarted after redline
	// killed it, set Slots IMPORTING from their owner From itself, Redis's
	// start-up check of keys against the slot map: no change made, the
	// states become redline's to close, the owner keeping the slots),
	// "replicate" (From, a replica or an emptied primary, told CLUSTER
	// REPLICATE To by one of the nemesis' compositions).
	Kind  string `json:"kind"`
	Slots []int  `json:"slots,omitempty"`
	// Keys and Aside (set-aside): each key and the name its other copy now has.
	Keys  []string `json:"keys,omitempty"`
	Aside []string `json:"aside,omitempty"`
	From  string   `json:"from,omitempty"` // node id
	To    string   `json:"to,omitempty"`   // node id
	// FromShard and ToShard are the node ids of From's and To's shards
	// (the primary and its replicas) when the step began: a failover
	// inside a shard moves a migration's state to another of its nodes
	// (Valkey 8 replicates SETSLOT and re-points it at a promoted
	// primary), and the step is still redline's there.
	FromShard []string `json:"from_shard,omitempty"`
	ToShard   []string `json:"to_shard,omitempty"`
	Note      string   `json:"note,omitempty"`
	Error     string   `json:"error,omitempty"`
}

// Journal is the append-only record of redline's own topology changes. Each
// step is written (and synced) before the change is made, and its end after,
// so that what is unfinished is known even after a crash. The end phase and
// the audit undo or account for exactly these steps.
type Journal struct {
	mu      sync.Mutex
	f       *os.File
	seq     int
	steps   map[int]Step // by seq, latest state
	onEntry func(Step)
}

// OpenJournal creates the journal file at path; "" keeps it in memory.
func OpenJournal(path string) (*Journal, error) {
	j := &Journal{steps: map[int]Step{}}
	if path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("topology journal: %w", err)
		}
		j.f = f
	}
	return j, nil
}

// OnEntry has f called with every entry written (the history gets a copy).
func (j *Journal) OnEntry(f func(Step)) {
	j.mu.Lock()
	j.onEntry = f
	j.mu.Unlock()
}

// Begin journals a change about to be made and returns its seq. An error
// (the journal cannot be written) means the change must not be made.
func (j *Journal) Begin(s Step) (int, error) {
	j.mu.Lock()
	j.seq++
	s.Seq, s.State, s.Time = j.seq, "begin", time.Now().UTC()
	j.steps[s.Seq] = s
	err := j.write(s)
	f := j.onEntry
	j.mu.Unlock()
	if f != nil {
		f(s)
	}
	return s.Seq, err
}

// End journals how step seq ended (err nil: done).
func (j *Journal) End(seq int, err error) {
	j.mu.Lock()
	s, ok := j.steps[seq]
	if !ok {
		j.mu.Unlock()
		return
	}
	s.State, s.Time, s.Error = "done", time.Now().UTC(), ""
	if err != nil {
		s.State, s.Error = "failed", err.Error()
	}
	j.steps[seq] = s
	_ = j.write(s)
	f := j.onEntry
	j.mu.Unlock()
	if f != nil {
		f(s)
	}
}

func (j *Journal) write(s Step) error {
	if j.f == nil {
		return nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if _, err := j.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("topology journal: %w", err)
	}
	return j.f.Sync()
}

// Steps returns every step in order, each in its latest state.
func (j *Journal) Steps() []Step {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]Step, 0, len(j.steps))
	for _, s := range j.steps {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Step) int { return a.Seq - b.Seq })
	return out
}

// Destinations returns, for every slot a journalled step gave (or began
// to give) to a node, the nodes it may now belong to: each step's From and
// To. An owner outside that set is not redline's doing.
func (j *Journal) Destinations() map[int][]string {
	out := map[int][]string{}
	for _, s := range j.Steps() {
		for _, slot := range s.Slots {
			for _, id := range []string{s.From, s.To} {
				if id != "" && !slices.Contains(out[slot], id) {
					out[slot] = append(out[slot], id)
				}
			}
		}
	}
	return out
}

// Failovers returns the node pairs a journalled failover swapped (replica
// id -> former primary id).
func (j *Journal) Failovers() map[string]string {
	out := map[string]string{}
	for _, s := range j.Steps() {
		if s.Kind == "failover" {
			out[s.To] = s.From
		}
	}
	return out
}

// Close closes the file.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	return err
}
