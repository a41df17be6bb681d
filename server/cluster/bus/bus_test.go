package bus

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redline-dev/redline/server/cluster"
)

type tnode struct {
	*owner
	port  int // client port (announced only)
	cport int
	id    string
	addr  string
}

// owner is the tests' owner of a node: one goroutine feeds the bus's Inputs
// and a 100 ms ticker to the node under one lock and performs each Ready
// (nodes.conf, messages), as package server does under its server lock.
type owner struct {
	bus    *Bus
	mu     sync.Mutex
	node   *cluster.Node
	conf   string
	view   *cluster.SlotView
	events []cluster.Event
	done   chan struct{}
	wg     sync.WaitGroup
}

func startOwner(n *cluster.Node, b *Bus, conf string) (*owner, error) {
	o := &owner{bus: b, node: n, conf: conf, view: n.View(), done: make(chan struct{})}
	if err := b.Start(); err != nil {
		return nil, err
	}
	o.wg.Add(1)
	go o.run()
	o.Do(func(*cluster.Node) error { return nil }) // the initial Ready
	return o, nil
}

func (o *owner) run() {
	defer o.wg.Done()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-o.done:
			return
		case in := <-o.bus.Inputs():
			o.mu.Lock()
			if in.Msg != nil {
				o.node.Step(*in.Msg, time.Now())
			} else {
				o.node.LinkFailed(in.LinkFailed)
			}
			o.ready()
			o.mu.Unlock()
		case <-t.C:
			o.mu.Lock()
			o.node.Tick(time.Now())
			o.ready()
			o.mu.Unlock()
		}
	}
}

// Do runs f on the node under the owner's lock, then performs the outputs.
func (o *owner) Do(f func(n *cluster.Node) error) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	err := f(o.node)
	o.ready()
	return err
}

func (o *owner) ready() {
	r := o.node.Ready()
	if r.SaveConfig && o.conf != "" {
		if err := SaveNodesConf(o.conf, r.NodesConf, r.Fsync); err != nil {
			panic(err)
		}
	}
	if r.View != nil {
		o.view = r.View
	}
	o.events = append(o.events, r.Events...)
	o.bus.Send(&r)
}

func (o *owner) View() *cluster.SlotView {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.view
}

func (o *owner) Close() {
	close(o.done)
	o.bus.Close()
	o.wg.Wait()
}

func freePorts(t *testing.T, n int) []int {
	var ls []net.Listener
	var ps []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ps = append(ps, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ps
}

func startNodes(t *testing.T, tr Transport, cports []int, nt time.Duration, dir string) []*tnode {
	var ns []*tnode
	for i, cp := range cports {
		cfg := cluster.Config{NodeTimeout: nt, ReplicaValidityFactor: -1, Rand: rand.New(rand.NewPCG(uint64(i), 42))}
		port := 30000 + i
		n := cluster.NewNode(cfg, cluster.Self{IP: "127.0.0.1", Port: port, CPort: cp}, time.Now())
		addr := fmt.Sprintf("127.0.0.1:%d", cp)
		conf := ""
		if dir != "" {
			conf = filepath.Join(dir, fmt.Sprintf("nodes-%d.conf", i))
		}
		o, err := startOwner(n, New(Options{ListenAddr: addr, Transport: tr}), conf)
		if err != nil {
			t.Fatal(err)
		}
		ns = append(ns, &tnode{owner: o, port: port, cport: cp, id: n.ID(), addr: addr})
	}
	t.Cleanup(func() {
		for _, n := range ns {
			n.Close()
		}
	})
	return ns
}

func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > limit {
			t.Fatalf("%s: not reached within %v", what, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}

// signature: each master's id, epoch and slot ranges plus each replica's master.
func signature(b *owner) (sig string, ok bool) {
	b.Do(func(n *cluster.Node) error {
		var parts []string
		for _, l := range strings.Split(n.NodesText(), "\n") {
			f := strings.Fields(l)
			if len(f) < 8 {
				continue
			}
			f[2] = strings.TrimPrefix(strings.ReplaceAll(f[2], "myself,", ""), "myself")
			parts = append(parts, strings.Join(append([]string{f[0], f[3], f[6]}, f[8:]...), " "))
		}
		sig = strings.Join(parts, "|")
		ok = n.StateOK()
		return nil
	})
	return
}

func sortedSig(b *owner) (string, bool) {
	s, ok := signature(b)
	p := strings.Split(s, "|")
	for i := range p {
		for j := i + 1; j < len(p); j++ {
			if p[j] < p[i] {
				p[i], p[j] = p[j], p[i]
			}
		}
	}
	return strings.Join(p, "|"), ok
}

func converged(ns []*tnode) bool {
	var first string
	for i, n := range ns {
		s, ok := sortedSig(n.owner)
		if !ok || strings.Count(s, "|")+1 != len(ns) {
			return false
		}
		if i == 0 {
			first = s
		} else if s != first {
			return false
		}
	}
	return true
}

func form(t *testing.T, ns []*tnode, masters int) {
	per := cluster.NumSlots / masters
	for i, n := range ns {
		i := i
		err := n.Do(func(c *cluster.Node) error {
			if i < masters {
				hi := (i+1)*per - 1
				if i == masters-1 {
					hi = cluster.NumSlots - 1
				}
				if err := c.AddSlots(cluster.SlotRangeList(i*per, hi)...); err != nil {
					return err
				}
			}
			return c.SetConfigEpoch(int64(i + 1))
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range ns[1:] {
		n := n
		if err := ns[0].Do(func(c *cluster.Node) error { return c.Meet("127.0.0.1", n.port, n.cport) }); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "all nodes known", 10*time.Second, func() bool {
		for _, n := range ns {
			known := 0
			n.Do(func(c *cluster.Node) error {
				for _, id := range c.NodeIDs() {
					if in, _ := c.Lookup(id); in.Flags&cluster.FlagHandshake == 0 {
						known++
					}
				}
				return nil
			})
			if known != len(ns) {
				return false
			}
		}
		return true
	})
	for i := masters; i < len(ns); i++ {
		m := ns[(i-masters)%masters].id
		if err := ns[i].Do(func(c *cluster.Node) error { return c.Replicate(m, true) }); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "convergence", 10*time.Second, func() bool { return converged(ns) })
}

// TestTCPClusterFailover runs six nodes over real TCP on 127.0.0.1 with a
// 500 ms node timeout: formation, then a killed master is replaced by its
// replica and the survivors agree.
func TestTCPClusterFailover(t *testing.T) {
	dir := t.TempDir()
	nt := 500 * time.Millisecond
	ns := startNodes(t, TCP{}, freePorts(t, 6), nt, dir)
	tForm := time.Now()
	form(t, ns, 3)
	t.Logf("formed in %v", time.Since(tForm))

	// nodes.conf written and loadable.
	data, err := os.ReadFile(filepath.Join(dir, "nodes-0.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.LoadNode(cluster.Config{}, string(data), cluster.Self{}, time.Now()); err != nil || !strings.Contains(string(data), "vars currentEpoch") {
		t.Fatalf("nodes.conf not loadable: %v\n%s", err, data)
	}
	if v := ns[1].View(); v.Route(cluster.Request{Slots: []int{0}}).Error() != fmt.Sprintf("MOVED 0 127.0.0.1:%d", ns[0].port) {
		t.Fatalf("route via View: %q", v.Route(cluster.Request{Slots: []int{0}}).Error())
	}

	ns[0].Close()
	tKill := time.Now()
	rest := ns[1:]
	promoted := waitFor(t, "replica promoted", 10*time.Second, func() bool {
		master := false
		ns[3].Do(func(c *cluster.Node) error { master = c.IsMaster(); return nil })
		return master
	})
	waitFor(t, "survivors agree", 10*time.Second, func() bool {
		for _, n := range rest {
			owner, ok := "", false
			n.Do(func(c *cluster.Node) error { owner, ok = c.SlotOwner(0), c.StateOK(); return nil })
			if owner != ns[3].id || !ok {
				return false
			}
		}
		return true
	})
	t.Logf("kill to promotion %v, to agreement %v (NT %v)", promoted, time.Since(tKill), nt)

	// Restart the killed node from its nodes.conf on the same port: it
	// rejoins as a replica of the node that took its slots.
	conf := filepath.Join(dir, "nodes-0.conf")
	data, err = os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	cfg := cluster.Config{NodeTimeout: nt, ReplicaValidityFactor: -1}
	n, err := cluster.LoadNode(cfg, string(data), cluster.Self{IP: "127.0.0.1", Port: ns[0].port, CPort: ns[0].cport}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	b, err := startOwner(n, New(Options{ListenAddr: ns[0].addr}), conf)
	if err != nil {
		t.Fatal(err)
	}
	ns[0].owner = b
	waitFor(t, "restarted master rejoins as replica", 10*time.Second, func() bool {
		m := ""
		b.Do(func(c *cluster.Node) error { m = c.MasterID(); return nil })
		return m == ns[3].id && converged(ns)
	})
	b.Do(func(*cluster.Node) error {
		for _, e := range b.events {
			if e.Kind == cluster.EventReplicate && e.NodeID == ns[3].id && e.Port == ns[3].port {
				return nil
			}
		}
		t.Errorf("no EventReplicate to the new master in %+v", b.events)
		return nil
	})
}

// TestMemTransportFormation forms a 3-master cluster over the in-memory
// transport and shows Block cutting a node off.
func TestMemTransportFormation(t *testing.T) {
	mem := NewMemNetwork()
	ns := startNodes(t, mem, []int{21000, 21001, 21002}, 300*time.Millisecond, "")
	form(t, ns, 3)
	for _, o := range ns[1:] {
		mem.Block(ns[0].addr, o.addr, true)
	}
	waitFor(t, "isolated master goes down", 10*time.Second, func() bool {
		_, ok := signature(ns[0].owner)
		return !ok
	})
	for _, o := range ns[1:] {
		mem.Block(ns[0].addr, o.addr, false)
	}
	waitFor(t, "heals", 10*time.Second, func() bool { return converged(ns) })
}

// TestInputsKeepEveryMessage shows that a busy owner loses nothing: 5000
// messages arrive on one connection while nobody reads Inputs (their writer
// waits instead); then every one comes out, in order, with the accepted
// connection's link, and a reply sent on that link reaches the peer.
func TestInputsKeepEveryMessage(t *testing.T) {
	mem := NewMemNetwork()
	b := New(Options{ListenAddr: "127.0.0.1:21100", Transport: mem})
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	c, err := mem.Dial(WithLocalAddr(t.Context(), "127.0.0.1:21101"), "127.0.0.1:21100")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const count = 5000
	wrote := make(chan error, 1)
	go func() {
		for i := 0; i < count; i++ {
			m := cluster.Message{Type: cluster.MsgPing, CurrentEpoch: uint64(i)}
			if _, err := c.Write(cluster.EncodeMessage(&m)); err != nil {
				wrote <- err
				return
			}
		}
		wrote <- nil
	}()
	time.Sleep(200 * time.Millisecond) // the owner is busy
	select {
	case err := <-wrote:
		t.Fatalf("all %d messages written while nobody read Inputs (err %v): the bus buffered or dropped them", count, err)
	default:
	}
	var link cluster.Link
	for i := 0; i < count; i++ {
		select {
		case in := <-b.Inputs():
			if in.Msg == nil || in.Msg.CurrentEpoch != uint64(i) {
				t.Fatalf("input %d: %+v, want the message with epoch %d", i, in, i)
			}
			link = in.Msg.Link
		case <-time.After(10 * time.Second):
			t.Fatalf("input %d never came", i)
		}
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if link.In == 0 || link.RemoteIP != "127.0.0.1" {
		t.Fatalf("link %+v: want an accepted connection's id and the dialer's IP", link)
	}
	b.Send(&cluster.Ready{Messages: []cluster.Envelope{{In: link.In, Msg: cluster.Message{Type: cluster.MsgPong, CurrentEpoch: 7}}}})
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	f, err := cluster.ReadFrame(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := cluster.DecodeMessage(f); err != nil || m.Type != cluster.MsgPong || m.CurrentEpoch != 7 {
		t.Fatalf("reply %+v, %v", m, err)
	}
}

// TestLinkFailedOnce: an outbound link that cannot be dialed is reported
// once; until the owner has taken that report, messages the node still
// sends on the link are dropped, not redialed under an id the node is
// about to forget.
func TestLinkFailedOnce(t *testing.T) {
	mem := NewMemNetwork()
	b := New(Options{ListenAddr: "127.0.0.1:21110", Transport: mem})
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	peer := "127.0.0.1:21111"
	ping := cluster.Envelope{Link: 5, Addr: peer, Msg: cluster.Message{Type: cluster.MsgPing}}
	b.Send(&cluster.Ready{Messages: []cluster.Envelope{ping}})
	time.Sleep(100 * time.Millisecond) // the dial has failed; its report waits for the owner
	ln, err := mem.Listen(peer)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- struct{}{}
			c.Close()
		}
	}()
	b.Send(&cluster.Ready{Messages: []cluster.Envelope{ping}})
	select {
	case in := <-b.Inputs():
		if in.Msg != nil || in.LinkFailed != 5 {
			t.Fatalf("input %+v, want LinkFailed 5", in)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no LinkFailed")
	}
	select {
	case in := <-b.Inputs():
		t.Fatalf("second input %+v after the link failed once", in)
	case <-accepted:
		t.Fatal("the failed link was dialed again")
	case <-time.After(300 * time.Millisecond):
	}
}

// TestSaveNodesConf: a shorter config overwrites a longer one in place and
// leaves no tail of the old text.
func TestSaveNodesConf(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nodes.conf")
	long, short := strings.Repeat("a", 500)+"\n", "vars currentEpoch 1 lastVoteEpoch 0\n"
	for _, text := range []string{long, short} {
		if err := SaveNodesConf(path, text, true); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(path); err != nil || string(got) != text {
			t.Fatalf("file holds %q (%v), want %q", got, err, text)
		}
	}
}
