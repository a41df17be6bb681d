package cluster

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"
)

// network is an in-memory cluster bus in the style of etcd/raft's tests: it
// runs nodes on simulated time, delivers every message at once (through the
// wire codec) and can drop, cut and isolate.
type network struct {
	t      *testing.T
	rng    *rand.Rand
	cfg    Config
	start  time.Time
	now    time.Time
	nodes  []*simNode
	byAddr map[string]int

	conns    map[connKey]uint64
	connBack map[uint64]connKey
	nextConn uint64

	cut    map[[2]int]bool // directional: from -> to dropped
	ignore map[MsgType]bool
	trace  bool
}

type connKey struct {
	from int
	link uint64
}

type simNode struct {
	n      *Node
	idx    int
	addr   string
	port   int
	dead   bool
	offset int64
	paused time.Time
	conf   string
	events []Event
	logs   []string
	linkUp bool
	// synced: the replication link was up once since the node started or
	// last was a master; until then its link is down "since ever", as
	// Redis's repl_down_since 0 says (SetMasterLinkStatus with a zero time).
	synced     bool
	noWrites   bool
	replCut    bool // replication stream to this replica stopped (bus still up)
	noPauseAck bool // the engine never confirms a write pause
}

const testNT = 2 * time.Second

func newNetwork(t *testing.T, size int, seed uint64) *network {
	nw := &network{t: t, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		start: time.Unix(1_750_000_000, 0), byAddr: map[string]int{}, conns: map[connKey]uint64{},
		connBack: map[uint64]connKey{}, cut: map[[2]int]bool{}, ignore: map[MsgType]bool{}}
	nw.now = nw.start
	nw.cfg = Config{NodeTimeout: testNT}
	for i := 0; i < size; i++ {
		nw.addNode()
	}
	return nw
}

func (nw *network) addNode() *simNode {
	i := len(nw.nodes)
	cfg := nw.cfg
	cfg.Rand = rand.New(rand.NewPCG(nw.rng.Uint64(), uint64(i)))
	port := 7000 + i
	n := NewNode(cfg, Self{IP: "127.0.0.1", Port: port}, nw.now)
	s := &simNode{n: n, idx: i, port: port, addr: fmt.Sprintf("127.0.0.1:%d", port+10000)}
	nw.nodes = append(nw.nodes, s)
	nw.byAddr[s.addr] = i
	return s
}

// restart replaces node i by one loaded from its saved nodes.conf.
func (nw *network) restart(i int) {
	s := nw.nodes[i]
	cfg := nw.cfg
	cfg.Rand = rand.New(rand.NewPCG(nw.rng.Uint64(), uint64(i)))
	n, err := LoadNode(cfg, s.conf, Self{IP: "127.0.0.1", Port: s.port}, nw.now)
	if err != nil {
		nw.t.Fatalf("restart %d: %v", i, err)
	}
	for k := range nw.conns {
		if k.from == i {
			delete(nw.connBack, nw.conns[k])
			delete(nw.conns, k)
		}
	}
	s.n, s.dead, s.events, s.linkUp, s.synced = n, false, nil, false, false
}

func (nw *network) dropped(from, to int) bool {
	return nw.nodes[from].dead || nw.nodes[to].dead || nw.cut[[2]int{from, to}]
}

// isolate cuts node i from every other node in both directions.
func (nw *network) isolate(i int) {
	for j := range nw.nodes {
		if j != i {
			nw.cut[[2]int{i, j}] = true
			nw.cut[[2]int{j, i}] = true
		}
	}
}

func (nw *network) heal() { nw.cut = map[[2]int]bool{} }

type delivery struct {
	to  int
	msg Message
}

// deliver collects Ready from every node and delivers until nothing is in flight.
func (nw *network) deliver() {
	for round := 0; ; round++ {
		if round > 1000 {
			nw.t.Fatalf("messages did not settle")
		}
		var q []delivery
		for i, s := range nw.nodes {
			r := s.n.Ready()
			if r.SaveConfig {
				s.conf = r.NodesConf
			}
			s.events = append(s.events, r.Events...)
			for _, l := range r.Logs {
				s.logs = append(s.logs, fmt.Sprintf("%d %s", nw.now.Sub(nw.start).Milliseconds(), l))
				if nw.trace {
					nw.t.Logf("%6dms n%d %s", nw.now.Sub(nw.start).Milliseconds(), i, l)
				}
			}
			for _, e := range r.Events {
				if e.Kind == EventPauseWrites && !s.noPauseAck {
					s.paused = e.Until
					s.n.WritesPaused(s.offset)
				}
				if e.Kind == EventUnpauseWrites {
					s.paused = time.Time{}
				}
			}
			for _, l := range r.CloseLinks {
				k := connKey{i, l}
				if c, ok := nw.conns[k]; ok {
					delete(nw.connBack, c)
					delete(nw.conns, k)
				}
			}
			if s.dead {
				continue
			}
			for _, e := range r.Messages {
				// Every message goes through the codec.
				m, err := DecodeMessage(EncodeMessage(&e.Msg))
				if err != nil {
					nw.t.Fatalf("codec: %v", err)
				}
				var to int
				if e.In != 0 {
					k, ok := nw.connBack[e.In]
					if !ok {
						continue
					}
					to = k.from
					m.Link = Link{Out: k.link}
				} else {
					j, ok := nw.byAddr[e.Addr]
					if !ok {
						continue
					}
					to = j
					k := connKey{i, e.Link}
					c, ok := nw.conns[k]
					if !ok {
						nw.nextConn++
						c = nw.nextConn
						nw.conns[k] = c
						nw.connBack[c] = k
					}
					m.Link = Link{In: c, RemoteIP: "127.0.0.1", LocalIP: "127.0.0.1"}
				}
				if nw.nodes[to].dead && e.In == 0 {
					// A killed process refuses connections: the link fails.
					s.n.LinkFailed(e.Link)
					continue
				}
				if nw.dropped(i, to) || nw.ignore[m.Type] {
					continue
				}
				q = append(q, delivery{to, m})
			}
		}
		if len(q) == 0 {
			return
		}
		for _, d := range q {
			if !nw.nodes[d.to].dead {
				nw.nodes[d.to].n.Step(d.msg, nw.now)
			}
		}
	}
}

// tick advances simulated time by 100ms: replication, Tick, delivery.
func (nw *network) tick() {
	nw.now = nw.now.Add(100 * time.Millisecond)
	byID := map[string]*simNode{}
	for _, s := range nw.nodes {
		if !s.dead {
			byID[s.n.ID()] = s
		}
	}
	for _, s := range nw.nodes {
		if s.dead {
			continue
		}
		if s.n.IsMaster() {
			s.synced = false
			if !s.noWrites && !nw.now.Before(s.paused) {
				s.offset += 10
			}
			s.n.SetReplOffset(s.offset)
			continue
		}
		m := byID[s.n.MasterID()]
		if m != nil && !m.n.IsMaster() {
			m = nil
		}
		if m != nil && !nw.dropped(m.idx, s.idx) && !s.replCut {
			s.offset = m.offset
			s.n.SetReplOffset(s.offset)
			s.n.SetMasterLinkStatus(true, nw.now)
			s.linkUp, s.synced = true, true
		} else if s.linkUp || m == nil {
			since := nw.now
			if !s.synced {
				since = time.Time{}
			}
			s.n.SetMasterLinkStatus(false, since)
			s.linkUp = false
		}
	}
	for _, s := range nw.nodes {
		if !s.dead {
			s.n.Tick(nw.now)
		}
	}
	nw.deliver()
}

func (nw *network) run(d time.Duration) {
	for end := nw.now.Add(d); nw.now.Before(end); {
		nw.tick()
	}
}

// runUntil ticks until cond holds and returns the simulated time it took; it
// fails the test after limit.
func (nw *network) runUntil(what string, limit time.Duration, cond func() bool) time.Duration {
	nw.t.Helper()
	begin := nw.now
	for !cond() {
		if nw.now.Sub(begin) > limit {
			nw.t.Fatalf("%s: not reached after %v of simulated time", what, limit)
		}
		nw.tick()
	}
	return nw.now.Sub(begin)
}

func (nw *network) elapsed() time.Duration { return nw.now.Sub(nw.start) }

// signature is what every node must agree on: per known node, its role,
// master, configEpoch and slots (like redis-cli's consistency check).
func (s *simNode) signature() string {
	var lines []string
	for _, l := range strings.Split(s.n.NodesText(), "\n") {
		f := strings.Fields(l)
		if len(f) < 8 {
			continue
		}
		role := "master"
		if strings.Contains(f[2], "slave") {
			role = "slave"
		}
		lines = append(lines, strings.Join(append([]string{f[0], role, f[3], f[6]}, f[8:]...), " "))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func (nw *network) alive() []*simNode {
	var a []*simNode
	for _, s := range nw.nodes {
		if !s.dead {
			a = append(a, s)
		}
	}
	return a
}

func (nw *network) converged() bool {
	a := nw.alive()
	sig := a[0].signature()
	for _, s := range a[1:] {
		if s.signature() != sig {
			return false
		}
	}
	for _, s := range a {
		if !s.n.StateOK() {
			return false
		}
	}
	return true
}

func (nw *network) must(err error) {
	nw.t.Helper()
	if err != nil {
		nw.t.Fatal(err)
	}
}

// form builds masters 0..m-1 with equal slot ranges and the remaining nodes
// as replicas (node m+i replicates master i % m), the way redis-cli
// --cluster create does: ADDSLOTS, SET-CONFIG-EPOCH, MEET, then REPLICATE.
func (nw *network) form(masters int) {
	nw.t.Helper()
	per := NumSlots / masters
	for i := 0; i < masters; i++ {
		lo, hi := i*per, (i+1)*per-1
		if i == masters-1 {
			hi = NumSlots - 1
		}
		nw.must(nw.nodes[i].n.AddSlots(SlotRangeList(lo, hi)...))
	}
	for i, s := range nw.nodes {
		nw.must(s.n.SetConfigEpoch(int64(i + 1)))
	}
	for _, s := range nw.nodes[1:] {
		nw.must(nw.nodes[0].n.Meet("127.0.0.1", s.port, 0))
	}
	nw.runUntil("all nodes know each other", 30*time.Second, func() bool {
		for _, s := range nw.nodes {
			cnt := 0
			for _, id := range s.n.NodeIDs() {
				if in, _ := s.n.Lookup(id); in.Flags&FlagHandshake == 0 {
					cnt++
				}
			}
			if cnt != len(nw.nodes) {
				return false
			}
		}
		return true
	})
	for i := masters; i < len(nw.nodes); i++ {
		nw.must(nw.nodes[i].n.Replicate(nw.nodes[(i-masters)%masters].n.ID(), true))
	}
	nw.runUntil("convergence", 30*time.Second, nw.converged)
}

func (s *simNode) hasEvent(k EventKind) *Event {
	for i := range s.events {
		if s.events[i].Kind == k {
			return &s.events[i]
		}
	}
	return nil
}

func (nw *network) flagsOf(viewer int, target int) Flags {
	in, ok := nw.nodes[viewer].n.Lookup(nw.nodes[target].n.ID())
	if !ok {
		return 0
	}
	return in.Flags
}
