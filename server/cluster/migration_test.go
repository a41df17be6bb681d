package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMigrationScripts replays testdata/migration/*.txt against a
// simulated set of primaries running Migrations on simulated time, with a
// toy keyspace (acknowledged write ids per slot) so each scenario ends by
// checking that no acknowledged write was lost and none is on two owners.
// Run with -update to rewrite the golden files.
func TestMigrationScripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/migration/*.txt")
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatal("no scripts in testdata/migration")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			sim := newMigSim()
			var out strings.Builder
			for _, line := range strings.Split(string(data), "\n") {
				if !strings.HasPrefix(line, "> ") && !strings.HasPrefix(line, "#") {
					continue
				}
				out.WriteString(line + "\n")
				if strings.HasPrefix(line, "#") {
					continue
				}
				out.WriteString(sim.run(t, strings.Fields(line[2:])))
			}
			got := out.String()
			if *update {
				os.WriteFile(f, []byte(got), 0o644)
				return
			}
			if got != string(data) {
				os.WriteFile(f+".got", []byte(got), 0o644)
				t.Fatalf("%s: output differs; see %s.got (run with -update to accept)", f, f)
			}
			os.Remove(f + ".got")
		})
	}
}

type simMsg struct {
	MigMsg
	writes map[int][]int // SNAPSHOT: the slots' writes; STREAM: slot -> the one write
}

type migSimNode struct {
	name   string
	m      *Migrations
	alive  bool
	owner  map[int]string // slot -> owner, as this node believes
	epoch  map[int]int
	writes map[int][]int // slot -> acknowledged write ids held
}

type migSim struct {
	start, now time.Time
	nodes      map[string]*migSimNode
	names      []string
	inflight   []simMsg
	cut        map[string]bool
	ids, wid   int
	acked      map[int]int // write id -> slot
	b          *strings.Builder
}

func newMigSim() *migSim {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return &migSim{start: t0, now: t0, nodes: map[string]*migSimNode{}, cut: map[string]bool{}, acked: map[int]int{}}
}

func (s *migSim) newNode(name string) *migSimNode {
	n := &migSimNode{name: name, alive: true, owner: map[int]string{}, epoch: map[int]int{}, writes: map[int][]int{}}
	s.reset(n)
	return n
}

// reset gives n a fresh machine (a restarted process forgets its tasks).
func (s *migSim) reset(n *migSimNode) {
	cfg := DefaultMigrationConfig()
	cfg.HandoffMaxLag = 0 // hand off only when fully caught up: deterministic offsets
	n.m = NewMigrations(n.name, cfg, func(slot int) string { return n.owner[slot] },
		func() string { s.ids++; return "task" + strconv.Itoa(s.ids) }, s.now)
}

func (s *migSim) linkKey(a, b string) string {
	if a > b {
		a, b = b, a
	}
	return a + "|" + b
}

func (s *migSim) printf(format string, args ...any) { fmt.Fprintf(s.b, format, args...) }

// collect applies and prints the output of every node's machine.
func (s *migSim) collect(streamed map[int][]int) {
	for _, name := range s.names {
		n := s.nodes[name]
		o := n.m.TakeOutput()
		for _, l := range o.Log {
			s.printf("  %s: %s\n", name, l)
		}
		for _, r := range o.Pause {
			s.printf("  %s: pause writes %s\n", name, FormatRanges(r))
		}
		for _, r := range o.Resume {
			s.printf("  %s: resume writes %s\n", name, FormatRanges(r))
		}
		for _, rs := range o.TakeOver {
			top := 0
			eachSlot(rs, func(sl int) { top = max(top, s.maxEpoch(sl)) })
			eachSlot(rs, func(sl int) { n.owner[sl], n.epoch[sl] = name, top+1 })
			s.printf("  %s: take over %s (epoch %d)\n", name, FormatRanges(rs), top+1)
		}
		for _, rs := range o.Trim {
			eachSlot(rs, func(sl int) { delete(n.writes, sl) })
			s.printf("  %s: trim %s\n", name, FormatRanges(rs))
		}
		for _, msg := range o.Msgs {
			sm := simMsg{MigMsg: msg}
			switch msg.Type {
			case MigSnapshot:
				sm.writes = map[int][]int{}
				t := n.m.task(msg.Task, false)
				for sl, ws := range n.writes {
					if t != nil && t.owns(sl) {
						sm.writes[sl] = append([]int(nil), ws...)
					}
				}
			case MigStream:
				sm.writes = streamed
			}
			s.inflight = append(s.inflight, sm)
		}
	}
}

// learn gives n a slot's owner at epoch e if newer; a node that loses a
// slot drops its keys (Redis: delKeysInSlot on an UPDATE).
func (s *migSim) learn(n *migSimNode, sl int, owner string, e int) {
	if e <= n.epoch[sl] {
		return
	}
	n.owner[sl], n.epoch[sl] = owner, e
	if owner != n.name && len(n.writes[sl]) > 0 {
		s.printf("  %s: slot %d now on %s, drops %v\n", n.name, sl, owner, n.writes[sl])
		delete(n.writes, sl)
	}
}

// dropInflight loses the messages in flight from or to a (and b if set):
// a broken connection loses what it was carrying.
func (s *migSim) dropInflight(a, b string) {
	kept := s.inflight[:0]
	for _, m := range s.inflight {
		if (m.From == a || m.To == a) && (b == "" || m.From == b || m.To == b) {
			s.printf("%s: lost with the link\n", s.describe(m.MigMsg))
			continue
		}
		kept = append(kept, m)
	}
	s.inflight = kept
}

func eachSlot(rs []SlotSpan, f func(int)) {
	for _, r := range rs {
		for sl := r.Start; sl <= r.End; sl++ {
			f(sl)
		}
	}
}

func (s *migSim) maxEpoch(slot int) int {
	top := 0
	for _, n := range s.nodes {
		top = max(top, n.epoch[slot])
	}
	return top
}

func (s *migSim) describe(m MigMsg) string {
	d := fmt.Sprintf("%s->%s %s %s", m.From, m.To, m.Type, m.Task)
	switch m.Type {
	case MigSync:
		d += " " + FormatRanges(m.Ranges)
	case MigSnapshot, MigStream, MigAck, MigEOF:
		d += " offset=" + strconv.FormatInt(m.Offset, 10)
	case MigAbort:
		d += " (" + m.Err + ")"
	}
	return d
}

func (s *migSim) run(t *testing.T, f []string) string {
	var b strings.Builder
	s.b = &b
	node := func(i int) *migSimNode {
		n, ok := s.nodes[f[i]]
		if !ok {
			t.Fatalf("unknown node %q", f[i])
		}
		return n
	}
	atoi := func(i int) int {
		v, err := strconv.Atoi(f[i])
		if err != nil {
			t.Fatalf("%v: %v", f, err)
		}
		return v
	}
	switch f[0] {
	case "nodes":
		for _, name := range f[1:] {
			s.nodes[name] = s.newNode(name)
			s.names = append(s.names, name)
		}
	case "assign": // assign NODE START END: every node learns it, epoch 1
		for sl := atoi(2); sl <= atoi(3); sl++ {
			for _, n := range s.nodes {
				n.owner[sl], n.epoch[sl] = f[1], 1
			}
		}
	case "write": // write NODE SLOT: one client write
		n, sl := node(1), atoi(2)
		s.wid++
		id := s.wid
		switch {
		case !n.alive:
			s.printf("w%d refused: %s is down\n", id, n.name)
		case n.owner[sl] != n.name:
			s.printf("w%d MOVED %s\n", id, n.owner[sl])
		case n.m.Write(sl, 10) == WritePaused:
			s.printf("w%d TRYAGAIN (paused)\n", id)
		default:
			n.writes[sl] = append(n.writes[sl], id)
			s.acked[id] = sl
			s.printf("w%d ok on %s\n", id, n.name)
		}
		s.collect(map[int][]int{sl: {id}})
	case "import": // import NODE START END [START END ...]
		rs, err := ParseSlotRanges(f[2:])
		if err == nil {
			var id string
			if id, err = node(1).m.Import(rs); err == nil {
				s.printf("%s\n", id)
			}
		}
		if err != nil {
			s.printf("(error) %v\n", err)
		}
		s.collect(nil)
	case "cancel": // cancel NODE ID|all
		id := f[2]
		if id == "all" {
			id = ""
		}
		s.printf("(integer) %d\n", node(1).m.Cancel(id))
		s.collect(nil)
	case "deliver": // deliver [N]: N messages, or until none is in flight
		limit := -1
		if len(f) > 1 {
			limit = atoi(1)
		}
		for len(s.inflight) > 0 && limit != 0 {
			limit--
			msg := s.inflight[0]
			s.inflight = s.inflight[1:]
			to, from := s.nodes[msg.To], s.nodes[msg.From]
			if to == nil || !to.alive || !from.alive || s.cut[s.linkKey(msg.From, msg.To)] {
				s.printf("%s: dropped\n", s.describe(msg.MigMsg))
				continue
			}
			s.printf("%s\n", s.describe(msg.MigMsg))
			for sl, ws := range msg.writes { // the data travels with the message
				if msg.Type == MigSnapshot {
					to.writes[sl] = nil
				}
				to.writes[sl] = append(to.writes[sl], ws...)
			}
			if msg.Type == MigTakenOver { // the new owner's epoch reaches the source
				eachSlot(msg.Ranges, func(sl int) { s.learn(to, sl, from.name, from.epoch[sl]) })
			}
			to.m.Step(msg.MigMsg)
			s.collect(nil)
		}
	case "tick": // tick DURATION: every live node ticks
		d, err := time.ParseDuration(f[1])
		if err != nil {
			t.Fatal(err)
		}
		s.now = s.now.Add(d)
		s.printf("t=%s\n", s.now.Sub(s.start))
		for _, name := range s.names {
			if n := s.nodes[name]; n.alive {
				n.m.Tick(s.now)
			}
		}
		s.collect(nil)
	case "cut", "heal": // cut A B: the link breaks, both sides notice
		a, c := node(1), node(2)
		s.cut[s.linkKey(a.name, c.name)] = f[0] == "cut"
		if f[0] == "cut" {
			s.dropInflight(a.name, c.name)
			a.m.LinkDown(c.name)
			c.m.LinkDown(a.name)
			s.collect(nil)
		}
	case "kill": // kill NODE: the process dies, its peers' links break
		n := node(1)
		n.alive = false
		s.dropInflight(n.name, "")
		for _, o := range s.nodes {
			if o != n && o.alive {
				o.m.LinkDown(n.name)
			}
		}
		s.collect(nil)
	case "restart": // restart NODE: back with its data, without its tasks
		n := node(1)
		n.alive = true
		s.reset(n)
		for sl, ws := range n.writes { // keys of slots it does not own are dropped at load
			if n.owner[sl] != n.name {
				s.printf("  %s: drops %v of slot %d (not its slot)\n", n.name, ws, sl)
				delete(n.writes, sl)
			}
		}
	case "failover": // failover OLD NEW: NEW (OLD's replica, same data) takes OLD's slots
		old, nw := node(1), node(2)
		for sl, ws := range old.writes {
			nw.writes[sl] = append([]int(nil), ws...)
		}
		for sl, o := range old.owner {
			if o == old.name {
				e := s.maxEpoch(sl) + 1
				for _, n := range s.nodes {
					if n != old {
						n.owner[sl], n.epoch[sl] = nw.name, e
					}
				}
			}
		}
		for sl, ws := range nw.writes { // a new primary keeps only its slots' keys
			if nw.owner[sl] != nw.name {
				s.printf("  %s: drops %v of slot %d (not its slot)\n", nw.name, ws, sl)
				delete(nw.writes, sl)
			}
		}
		s.printf("%s replaced by %s\n", old.name, nw.name)
	case "gossip": // every pair of live, connected nodes settles slot ownership by epoch
		for _, a := range s.nodes {
			for _, c := range s.nodes {
				if a == c || !a.alive || !c.alive || s.cut[s.linkKey(a.name, c.name)] {
					continue
				}
				for sl, e := range c.epoch {
					s.learn(a, sl, c.owner[sl], e)
				}
			}
		}
	case "status": // status NODE [ID]
		id := ""
		if len(f) > 2 {
			id = f[2]
		}
		for _, tk := range node(1).m.Status(id) {
			s.printf("%s %s %s->%s %s state=%s retries=%d write_pause_ms=%d last_error=%q\n", tk.ID, tk.Operation(),
				tk.Source, tk.Dest, FormatRanges(tk.Ranges), tk.State, tk.Retries, tk.WritePauseMs(), tk.LastError)
		}
	case "check": // the acknowledged writes against the final owners
		lost, both := 0, 0
		ids := make([]int, 0, len(s.acked))
		for id := range s.acked {
			ids = append(ids, id)
		}
		sort.Ints(ids)
		for _, id := range ids {
			sl := s.acked[id]
			holders := 0
			owner := ""
			for _, n := range s.nodes {
				if n.alive && n.owner[sl] == n.name && n.epoch[sl] == s.maxEpoch(sl) {
					owner = n.name
				}
			}
			for _, n := range s.nodes {
				if !n.alive {
					continue
				}
				for _, w := range n.writes[sl] {
					if w == id {
						holders++
					}
				}
			}
			found := false
			if o := s.nodes[owner]; o != nil {
				for _, w := range o.writes[sl] {
					found = found || w == id
				}
			}
			if !found {
				lost++
				s.printf("lost: w%d (slot %d, owner %q)\n", id, sl, owner)
			}
			if holders > 1 {
				both++
				s.printf("on two nodes: w%d (slot %d)\n", id, sl)
			}
		}
		s.printf("acknowledged %d, lost %d, duplicated %d\n", len(ids), lost, both)
	default:
		t.Fatalf("unknown command %q", f[0])
	}
	return b.String()
}

func TestParseSlotRanges(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"0", "99"}, "0-99"},
		{[]string{"0", "9", "20", "29"}, "0-9 20-29"},
		{[]string{"5"}, "ERR wrong number of arguments for 'cluster|migration' command"},
		{[]string{"9", "0"}, "ERR start slot number 9 is greater than end slot number 0"},
		{[]string{"0", "16384"}, "ERR Invalid or out of range slot"},
		{[]string{"0", "9", "5", "20"}, "ERR Slot 5 specified multiple times"},
	} {
		rs, err := ParseSlotRanges(tc.args)
		got := FormatRanges(rs)
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%v: %q, want %q", tc.args, got, tc.want)
		}
	}
}
