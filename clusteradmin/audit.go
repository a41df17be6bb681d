package clusteradmin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/cluster"
)

// Snapshot is the data of a cluster that is not the run's, slot by slot,
// and who serves each slot, as the primaries themselves say.
type Snapshot struct {
	Taken       time.Time
	Foreign     map[int]int64 // slot -> keys without the run's prefix (only slots with some)
	Owner       [cluster.SlotCount]string
	ShardOf     map[string]string // node id -> id of its primary (a primary: itself)
	Open        []string          // slots MIGRATING/IMPORTING, in words
	Conflicts   []string          // slots two primaries claim
	Served      int
	ForeignKeys int64
	OwnKeys     int64
	// Stray counts, per slot and primary (node id), the keys that are not
	// the run's on a primary that does not own the slot: a copy left
	// behind by an interrupted migration, which no client can read and
	// which COUNTKEYSINSLOT on the owner does not see.
	Stray     map[int]map[string]int64
	StrayKeys int64
	OwnStray  int64 // the run's own keys on primaries that do not own their slot
}

// TakeSnapshot discovers the cluster from addrs and counts, on every
// primary, the keys of each slot it serves (CLUSTER COUNTKEYSINSLOT) minus
// the run's own (SCAN MATCH prefix*, slot by CLUSTER KEYSLOT). A primary
// that does not answer makes it fail: a count with a hole proves nothing.
func TakeSnapshot(ctx context.Context, creds cluster.Credentials, addrs []string, prefix string) (*Snapshot, error) {
	if prefix == "" {
		return nil, errors.New("audit: no key prefix: every key would count as the run's")
	}
	v, err := Discover(ctx, creds, addrs)
	if err != nil {
		return nil, err
	}
	s := &Snapshot{Taken: time.Now().UTC(), Foreign: map[int]int64{}, ShardOf: map[string]string{}, Stray: map[int]map[string]int64{}}
	for _, m := range v.Members {
		if m.Primary {
			s.ShardOf[m.ID] = m.ID
		} else if m.MasterID != "" {
			s.ShardOf[m.ID] = m.MasterID
		}
	}
	for _, m := range v.Members {
		if !m.Primary {
			continue
		}
		if err := s.countPrimary(ctx, creds, m.Addr, prefix); err != nil {
			if m.Slots == 0 && m.Health == "failed" {
				continue // a failed primary without slots serves nothing to count
			}
			return nil, fmt.Errorf("audit: %w", err)
		}
	}
	slices.Sort(s.Open)
	return s, nil
}

func (s *Snapshot) countPrimary(ctx context.Context, creds cluster.Credentials, addr, prefix string) error {
	c := creds.AdminClient(addr)
	defer c.Close()
	text, err := c.ClusterNodes(ctx).Result()
	if err != nil {
		return fmt.Errorf("CLUSTER NODES on %s: %w", addr, err)
	}
	ls, err := cluster.ParseNodes(text)
	if err != nil {
		return fmt.Errorf("%s: %w", addr, err)
	}
	self, ok := cluster.Self(ls)
	if !ok {
		return fmt.Errorf("%s: CLUSTER NODES has no myself line", addr)
	}
	for _, o := range self.Open {
		how := "IMPORTING from"
		if o.Migrating {
			how = "MIGRATING to"
		}
		s.Open = append(s.Open, fmt.Sprintf("slot %d %s %s on %s", o.Slot, how, o.Peer, addr))
	}
	if !self.IsPrimary() {
		return nil // demoted since discovery: its former slots are counted on the new owner
	}
	owned := self.Slots()
	for _, slot := range owned {
		if prev := s.Owner[slot]; prev != "" && prev != self.ID {
			s.Conflicts = append(s.Conflicts, fmt.Sprintf("slot %d claimed by %s and %s", slot, prev, self.ID))
			continue
		}
		if s.Owner[slot] == "" {
			s.Served++
		}
		s.Owner[slot] = self.ID
	}
	// Every slot, not only the owned ones: keys in a slot the node does
	// not own are a stranded copy (Stray).
	mine := make(map[int]bool, len(owned))
	for _, sl := range owned {
		mine[sl] = true
	}
	slots := make([]int, cluster.SlotCount)
	for i := range slots {
		slots[i] = i
	}
	counts := make(map[int]int64, len(slots))
	for i := 0; i < len(slots); i += 4096 {
		batch := slots[i:min(i+4096, len(slots))]
		p := c.Pipeline()
		cmds := make([]*redis.IntCmd, len(batch))
		for j, slot := range batch {
			cmds[j] = p.ClusterCountKeysInSlot(ctx, slot)
		}
		if _, err := p.Exec(ctx); err != nil {
			return fmt.Errorf("CLUSTER COUNTKEYSINSLOT on %s: %w", addr, err)
		}
		for j, slot := range batch {
			counts[slot] = cmds[j].Val()
		}
	}
	own, err := ownKeysBySlot(ctx, c, prefix)
	if err != nil {
		return fmt.Errorf("%s: %w", addr, err)
	}
	for slot, n := range counts {
		if n == 0 {
			continue
		}
		if !mine[slot] {
			s.OwnStray += own[slot]
			if f := n - own[slot]; f != 0 {
				if s.Stray[slot] == nil {
					s.Stray[slot] = map[string]int64{}
				}
				s.Stray[slot][self.ID] = f
				s.StrayKeys += f
			}
			continue
		}
		s.OwnKeys += own[slot]
		if f := n - own[slot]; f != 0 {
			s.Foreign[slot] = f
			s.ForeignKeys += f
		}
	}
	return nil
}

// ownKeysBySlot counts the keys with the run's prefix on one node, by slot.
func ownKeysBySlot(ctx context.Context, c *redis.Client, prefix string) (map[int]int64, error) {
	out := map[int]int64{}
	var cursor uint64
	for {
		keys, next, err := c.Scan(ctx, cursor, EscapeGlob(prefix)+"*", 1000).Result()
		if err != nil {
			return nil, fmt.Errorf("SCAN MATCH %s*: %w", prefix, err)
		}
		if len(keys) > 0 {
			p := c.Pipeline()
			cmds := make([]*redis.IntCmd, len(keys))
			for i, k := range keys {
				cmds[i] = p.ClusterKeySlot(ctx, k)
			}
			if _, err := p.Exec(ctx); err != nil {
				return nil, fmt.Errorf("CLUSTER KEYSLOT: %w", err)
			}
			for _, cmd := range cmds {
				out[int(cmd.Val())]++
			}
		}
		if cursor = next; cursor == 0 {
			return out, nil
		}
	}
}

// EscapeGlob quotes the characters SCAN MATCH treats as a pattern.
func EscapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// SlotCountChange is a slot whose foreign key count changed.
type SlotCountChange struct {
	Slot   int   `json:"slot"`
	Before int64 `json:"before"`
	After  int64 `json:"after"`
}

// StrayChange is a primary whose count of keys that are not the run's, in
// a slot it does not own, changed.
type StrayChange struct {
	Slot   int    `json:"slot"`
	Node   string `json:"node"` // node id
	Before int64  `json:"before"`
	After  int64  `json:"after"`
}

// OwnerChange is a slot whose owner changed for no journalled reason.
type OwnerChange struct {
	Slot   int    `json:"slot"`
	Before string `json:"before"`
	After  string `json:"after"`
}

// AuditResult compares the data that is not the run's before and after it.
type AuditResult struct {
	Clean               bool              `json:"clean"`
	Summary             string            `json:"summary"`
	ForeignKeysBefore   int64             `json:"foreign_keys_before"`
	ForeignKeysAfter    int64             `json:"foreign_keys_after"`
	ChangedSlots        []SlotCountChange `json:"changed_slots,omitempty"`
	StrayKeysBefore     int64             `json:"stray_keys_before"`
	StrayKeysAfter      int64             `json:"stray_keys_after"`
	StrayChanges        []StrayChange     `json:"stray_changes,omitempty"`
	OwnStrayAfter       int64             `json:"own_stray_keys_after,omitempty"`
	UnservedSlots       []string          `json:"unserved_slots,omitempty"` // ranges "a-b"
	OpenSlots           []string          `json:"open_slots,omitempty"`
	Conflicts           []string          `json:"conflicts,omitempty"`
	UnaccountedOwners   []OwnerChange     `json:"unaccounted_owners,omitempty"`
	JournalledSteps     int               `json:"journalled_steps"`
	UnfinishedJournal   []Step            `json:"unfinished_steps,omitempty"`
	SlotsServedAfter    int               `json:"slots_served_after"`
	OpenSlotsBefore     []string          `json:"open_slots_before,omitempty"`
	UnservedSlotsBefore int               `json:"unserved_slots_before,omitempty"`
}

// Compare judges after against before: every slot's foreign key count the
// same, all slots served (as before), none open that was not open before,
// and every owner change explained by the journal (a slot redline moved)
// or a failover inside the slot's shard.
func Compare(before, after *Snapshot, j *Journal) AuditResult {
	r := AuditResult{ForeignKeysBefore: before.ForeignKeys, ForeignKeysAfter: after.ForeignKeys,
		SlotsServedAfter: after.Served, OpenSlotsBefore: before.Open, UnservedSlotsBefore: cluster.SlotCount - before.Served}
	for slot := range cluster.SlotCount {
		if b, a := before.Foreign[slot], after.Foreign[slot]; a != b {
			r.ChangedSlots = append(r.ChangedSlots, SlotCountChange{slot, b, a})
		}
	}
	r.StrayKeysBefore, r.StrayKeysAfter, r.OwnStrayAfter = before.StrayKeys, after.StrayKeys, after.OwnStray
	for slot := range cluster.SlotCount {
		nodes := map[string]bool{}
		for id := range before.Stray[slot] {
			nodes[id] = true
		}
		for id := range after.Stray[slot] {
			nodes[id] = true
		}
		ids := make([]string, 0, len(nodes))
		for id := range nodes {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			if b, a := before.Stray[slot][id], after.Stray[slot][id]; a != b {
				r.StrayChanges = append(r.StrayChanges, StrayChange{slot, id, b, a})
			}
		}
	}
	var unserved []int
	for slot := range cluster.SlotCount {
		if after.Owner[slot] == "" && before.Owner[slot] != "" {
			unserved = append(unserved, slot)
		}
	}
	r.UnservedSlots = ranges(unserved)
	for _, o := range after.Open {
		if !slices.Contains(before.Open, o) {
			r.OpenSlots = append(r.OpenSlots, o)
		}
	}
	r.Conflicts = after.Conflicts
	var dests map[int][]string
	if j != nil {
		dests = j.Destinations()
		steps := j.Steps()
		r.JournalledSteps = len(steps)
		for _, s := range steps {
			if s.State == "begin" {
				r.UnfinishedJournal = append(r.UnfinishedJournal, s)
			}
		}
	}
	shard := func(id string) string {
		if p, ok := before.ShardOf[id]; ok {
			return p
		}
		return id
	}
	for slot := range cluster.SlotCount {
		b, a := before.Owner[slot], after.Owner[slot]
		if a == b || a == "" || b == "" || shard(a) == shard(b) {
			continue
		}
		ok := false
		for _, d := range dests[slot] {
			if a == d || shard(a) == shard(d) {
				ok = true
			}
		}
		if !ok {
			r.UnaccountedOwners = append(r.UnaccountedOwners, OwnerChange{slot, b, a})
		}
	}
	r.Clean = len(r.ChangedSlots) == 0 && len(r.StrayChanges) == 0 && len(r.UnservedSlots) == 0 && len(r.OpenSlots) == 0 &&
		len(r.Conflicts) == 0 && len(r.UnaccountedOwners) == 0 && len(r.UnfinishedJournal) == 0
	r.Summary = r.describe()
	return r
}

func (r AuditResult) describe() string {
	if r.Clean {
		return fmt.Sprintf("no foreign data touched: %d keys that are not redline's, same count in every slot on its owner and %d on primaries that do not own their slot (as before); %d slots served, none left open; %d journalled steps, all finished",
			r.ForeignKeysAfter, r.StrayKeysAfter, r.SlotsServedAfter, r.JournalledSteps)
	}
	var parts []string
	if n := len(r.ChangedSlots); n > 0 {
		var ex []string
		for _, c := range r.ChangedSlots[:min(n, 10)] {
			ex = append(ex, fmt.Sprintf("slot %d: %d -> %d keys", c.Slot, c.Before, c.After))
		}
		more := ""
		if n > 10 {
			more = fmt.Sprintf(", and %d more slots", n-10)
		}
		parts = append(parts, fmt.Sprintf("foreign keys changed in %d slots (%d keys before, %d after): %s%s",
			n, r.ForeignKeysBefore, r.ForeignKeysAfter, strings.Join(ex, ", "), more))
	}
	if n := len(r.StrayChanges); n > 0 {
		var ex []string
		for _, c := range r.StrayChanges[:min(n, 10)] {
			ex = append(ex, fmt.Sprintf("slot %d on %s: %d -> %d keys", c.Slot, c.Node, c.Before, c.After))
		}
		more := ""
		if n > 10 {
			more = fmt.Sprintf(", and %d more", n-10)
		}
		parts = append(parts, fmt.Sprintf("keys that are not redline's on primaries that do not own their slot changed (%d before, %d after; a stranded copy no client reads): %s%s",
			r.StrayKeysBefore, r.StrayKeysAfter, strings.Join(ex, ", "), more))
	}
	if len(r.UnservedSlots) > 0 {
		parts = append(parts, "slots no longer served: "+firstOf(r.UnservedSlots, ","))
	}
	if len(r.OpenSlots) > 0 {
		parts = append(parts, "slots left open: "+firstOf(r.OpenSlots, "; "))
	}
	if len(r.Conflicts) > 0 {
		parts = append(parts, "conflicting owners: "+firstOf(r.Conflicts, "; "))
	}
	if n := len(r.UnaccountedOwners); n > 0 {
		c := r.UnaccountedOwners[0]
		parts = append(parts, fmt.Sprintf("%d slots changed owner without a journalled step (e.g. slot %d: %s -> %s)", n, c.Slot, c.Before, c.After))
	}
	if n := len(r.UnfinishedJournal); n > 0 {
		parts = append(parts, fmt.Sprintf("%d journalled steps never finished (first: #%d %s of slots %v)", n,
			r.UnfinishedJournal[0].Seq, r.UnfinishedJournal[0].Kind, r.UnfinishedJournal[0].Slots))
	}
	return "FOREIGN DATA CHANGED during the run: " + strings.Join(parts, "; ")
}

// firstOf joins the first ten items and says how many more there are
// (results.json has them all).
func firstOf(items []string, sep string) string {
	if len(items) <= 10 {
		return strings.Join(items, sep)
	}
	return fmt.Sprintf("%s%s... (%d in all)", strings.Join(items[:10], sep), sep, len(items))
}

// ranges renders sorted slots as "a-b" ranges.
func ranges(slots []int) []string {
	var out []string
	for i := 0; i < len(slots); {
		j := i
		for j+1 < len(slots) && slots[j+1] == slots[j]+1 {
			j++
		}
		if i == j {
			out = append(out, fmt.Sprint(slots[i]))
		} else {
			out = append(out, fmt.Sprintf("%d-%d", slots[i], slots[j]))
		}
		i = j + 1
	}
	return out
}

// Auditor audits one run: Before before the first operation, After once
// the end phase is over.
type Auditor struct {
	Nodes   func() []cluster.Node // the cluster's nodes when asked
	Prefix  string                // the run's key prefix
	Journal *Journal
	Creds   cluster.Credentials // the run's, for every count
	before  *Snapshot
}

// Before takes the snapshot the run will be compared against.
func (a *Auditor) Before(ctx context.Context) error {
	s, err := TakeSnapshot(ctx, a.Creds, a.addrs(), a.Prefix)
	if err != nil {
		return err
	}
	a.before = s
	return nil
}

// After takes the second snapshot and compares.
func (a *Auditor) After(ctx context.Context) (AuditResult, error) {
	if a.before == nil {
		return AuditResult{}, errors.New("audit: no snapshot from before the run")
	}
	s, err := TakeSnapshot(ctx, a.Creds, a.addrs(), a.Prefix)
	if err != nil {
		return AuditResult{}, err
	}
	return Compare(a.before, s, a.Journal), nil
}

func (a *Auditor) addrs() []string {
	var out []string
	for _, n := range a.Nodes() {
		out = append(out, n.Addr)
	}
	return out
}
