// Command gen-history writes a synthetic stored run (config.json and
// history.jsonl.zst, or history.jsonl with -format jsonl) of the shape `redline run --workload counter,register,set
// --nemesis partition` records, of any size, for measuring `redline check`:
//
//	go run ./scripts/gen-history -entries 10000000 -out /tmp/run10m
//	/usr/bin/time -v bin/redline check --dry-run /tmp/run10m
//
// The history is valid by construction (every operation takes effect at a
// point inside its interval, in one global order), so the checkers do their
// full work; partitions make some ops fail (CLUSTERDOWN) or time out (info,
// applied or not), as real runs under partitions do. It is written as it is
// generated, in constant memory, compressed as the recorder writes it: a
// frame every -frame-entries entries (the recorder cuts one every 200 ms;
// 8000 entries is about 200 ms of a busy run).
package main

import (
	"bufio"
	"container/heap"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/redline-dev/redline/history"
)

const prefix = "gen:"

func main() {
	entries := flag.Int("entries", 1_000_000, "history entries to write (client invocations and completions, nemesis events)")
	out := flag.String("out", "", "run directory to create (config.json, history.jsonl.zst)")
	format := flag.String("format", "zst", "history format: zst (history.jsonl.zst, as the recorder writes) or jsonl (history.jsonl, as redline wrote before)")
	perFrame := flag.Int("frame-entries", 8000, "entries a compressed frame holds")
	clients := flag.Int("concurrency", 10, "concurrent client workers")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "gen-history: -out DIR is required")
		os.Exit(254)
	}
	if *format != "zst" && *format != "jsonl" || *perFrame < 1 {
		fmt.Fprintln(os.Stderr, "gen-history: -format is zst or jsonl, -frame-entries at least 1")
		os.Exit(254)
	}
	if err := generate(*out, *entries, *clients, *seed, *format, *perFrame); err != nil {
		fmt.Fprintln(os.Stderr, "gen-history:", err)
		os.Exit(255)
	}
}

const (
	nodes        = 6
	counterKeys  = 5
	registerKeys = 20
	registerGen  = 1000 // ops per worker per register generation
	setKeys      = 5
	setGen       = 200 // ops per worker per set generation
	partitionGap = 10 * time.Second
	partitionLen = 3 * time.Second
)

func addr(n int) string { return "10.0.0." + strconv.Itoa(n+2) + ":6379" }

type kind int

const (
	kCounter kind = iota
	kRegister
	kSet
)

// op is one client operation in flight.
type op struct {
	worker  int
	process int
	k       kind
	f       string
	key     string
	node    int
	in      string // invocation value (raw JSON) or ""
	outcome string // ok, fail, info
	err     string
	result  string // ok completion value
	applies bool   // takes effect (ok, or an info that landed)
}

type event struct {
	t     int64
	phase int // 0 invoke, 1 linearize, 2 complete
	o     *op
}

type events []event

func (e events) Len() int { return len(e) }
func (e events) Less(i, j int) bool {
	if e[i].t != e[j].t {
		return e[i].t < e[j].t
	}
	return e[i].phase > e[j].phase
}
func (e events) Swap(i, j int) { e[i], e[j] = e[j], e[i] }
func (e *events) Push(x any)   { *e = append(*e, x.(event)) }
func (e *events) Pop() any {
	old := *e
	x := old[len(old)-1]
	*e = old[:len(old)-1]
	return x
}

// framer cuts the lines written to it into compressed frames of per
// entries (each Write is one whole line, as fmt.Fprintf gives them).
type framer struct {
	fw     *history.FrameWriter
	buf    []byte
	n, per int
}

func (f *framer) Write(p []byte) (int, error) {
	f.buf = append(f.buf, p...)
	f.n++
	if f.n >= f.per {
		return len(p), f.Flush()
	}
	return len(p), nil
}

func (f *framer) Flush() error {
	err := f.fw.WriteFrame(f.buf, f.n)
	f.buf, f.n = f.buf[:0], 0
	return err
}

type gen struct {
	w interface {
		io.Writer
		Flush() error
	}
	r       *rand.Rand
	index   int64
	nextPID int

	counters map[string]int64
	regs     map[string]*int64
	sets     map[string][]int64
	setKeys  map[string]bool
	regKeys  map[string]bool

	workerProc []int
	workerN    []int64 // ops issued per worker
	partNode   int     // partitioned primary, -1 none
}

func generate(dir string, entries, clients int, seed uint64, format string, perFrame int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cfg := fmt.Sprintf(`{"test_name":"generated","target":"reference","nodes":%d,"replicas":1,"workloads":["counter","register","set"],"nemesis":["partition"],"nemesis_interval":"10s","time_limit":"0s","concurrency":%d,"rate":0,"keys":0,"wait":0,"seed":%d,"key_prefix":%q,"check_timeout":"60s"}`+"\n", nodes, clients, seed, prefix)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o644); err != nil {
		return err
	}
	name := history.FileName
	if format == "jsonl" {
		name = history.JSONLinesName
	}
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	g := &gen{
		w: bw, r: rand.New(rand.NewPCG(seed, 13)),
		counters: map[string]int64{}, regs: map[string]*int64{}, sets: map[string][]int64{},
		setKeys: map[string]bool{}, regKeys: map[string]bool{},
		workerProc: make([]int, clients), workerN: make([]int64, clients), partNode: -1,
	}
	if format == "zst" {
		fw, err := history.NewFrameWriter(bw)
		if err != nil {
			return err
		}
		g.w = &framer{fw: fw, per: perFrame}
	}
	addrs := "{"
	for n := range nodes {
		if n > 0 {
			addrs += ","
		}
		addrs += fmt.Sprintf(`"n%d":%q`, n+1, addr(n))
	}
	g.nemesis(0, "nodes", "", `"detail":{"addrs":`+addrs+`}}`)
	for i := range clients {
		g.workerProc[i] = g.nextPID
		g.nextPID++
	}
	var q events
	for i := range clients {
		heap.Push(&q, event{t: int64(1000 + i*37), phase: 0, o: &op{worker: i}})
	}
	nextFault := int64(partitionGap / 2)
	faultOn := false
	var now int64
	budget := int64(entries) - 1 // room for the nemesis events is taken as they come
	for q.Len() > 0 {
		e := heap.Pop(&q).(event)
		now = e.t
		for now >= nextFault {
			if !faultOn {
				g.partNode = g.r.IntN(3)
				g.nemesis(nextFault, "start-partition", fmt.Sprintf(`"n%d"`, g.partNode+1), "")
				nextFault += int64(partitionLen)
			} else {
				g.nemesis(nextFault, "stop-partition", fmt.Sprintf(`"n%d"`, g.partNode+1), "")
				g.partNode = -1
				nextFault += int64(partitionGap - partitionLen)
			}
			faultOn = !faultOn
		}
		o := e.o
		switch e.phase {
		case 0:
			if g.index >= budget-int64(2*clients) {
				continue // this worker stops
			}
			g.plan(o)
			g.invoke(now, o)
			lat := int64(200_000 + g.r.IntN(1_500_000))
			switch o.outcome {
			case "fail":
				heap.Push(&q, event{t: now + lat, phase: 2, o: o})
			case "info":
				timeout := int64(500 * time.Millisecond)
				if o.applies {
					heap.Push(&q, event{t: now + lat/2, phase: 1, o: o})
				}
				heap.Push(&q, event{t: now + timeout, phase: 2, o: o})
			default:
				heap.Push(&q, event{t: now + lat/2, phase: 1, o: o})
				heap.Push(&q, event{t: now + lat, phase: 2, o: o})
			}
		case 1:
			g.apply(o)
		case 2:
			g.complete(now, o)
			if o.outcome == "info" {
				g.workerProc[o.worker] = g.nextPID
				g.nextPID++
			}
			heap.Push(&q, event{t: now + int64(g.r.IntN(100_000)), phase: 0, o: &op{worker: o.worker}})
		}
	}
	if faultOn {
		now += 1000
		g.nemesis(now, "stop-partition", fmt.Sprintf(`"n%d"`, g.partNode+1), "")
	}
	// Final reads of every key, after healing.
	now += int64(time.Second)
	g.nemesis(now, "final-reads", "", "")
	var keys []struct {
		k   kind
		key string
	}
	for i := range counterKeys {
		keys = append(keys, struct {
			k   kind
			key string
		}{kCounter, counterKey(i)})
	}
	for k := range g.regKeys {
		keys = append(keys, struct {
			k   kind
			key string
		}{kRegister, k})
	}
	for k := range g.setKeys {
		keys = append(keys, struct {
			k   kind
			key string
		}{kSet, k})
	}
	for _, k := range keys {
		o := &op{process: g.nextPID, k: k.k, f: "read", key: k.key, node: keyNode(k.key), outcome: "ok"}
		g.nextPID++
		now += 1000
		g.invoke(now, o)
		g.apply(o)
		now += 1000
		g.complete(now, o)
	}
	if err := g.w.Flush(); err != nil {
		return err
	}
	return bw.Flush() // after the last frame
}

func counterKey(i int) string {
	return prefix + "counter:" + strconv.Itoa(i) + "{c" + strconv.Itoa(i) + "}"
}

// keyNode is the primary (0..2) that serves a key: its tag picks it.
func keyNode(key string) int {
	h := 0
	for i := 0; i < len(key); i++ {
		h = h*31 + int(key[i])
	}
	if h < 0 {
		h = -h
	}
	return h % 3
}

// plan draws the next op of a worker and its outcome.
func (g *gen) plan(o *op) {
	o.process = g.workerProc[o.worker]
	n := g.workerN[o.worker]
	g.workerN[o.worker]++
	switch x := g.r.IntN(10); {
	case x < 6:
		o.k = kCounter
		o.key = counterKey(g.r.IntN(counterKeys))
		if g.r.IntN(10) == 0 {
			o.f = "read"
		} else {
			o.f, o.in = "add", strconv.Itoa(1+g.r.IntN(5))
		}
	case x < 9:
		o.k = kRegister
		o.key = prefix + "register:" + strconv.FormatInt(n/registerGen, 10) + ":" + strconv.Itoa(g.r.IntN(registerKeys))
		g.regKeys[o.key] = true
		switch y := g.r.IntN(10); {
		case y < 5:
			o.f = "read"
		case y < 8:
			o.f, o.in = "write", strconv.Itoa(g.r.IntN(5))
		default:
			o.f, o.in = "cas", "["+strconv.Itoa(g.r.IntN(5))+","+strconv.Itoa(g.r.IntN(5))+"]"
		}
	default:
		o.k = kSet
		o.key = prefix + "set:" + strconv.FormatInt(n/setGen, 10) + ":" + strconv.Itoa(g.r.IntN(setKeys))
		g.setKeys[o.key] = true
		if g.r.IntN(10) == 0 {
			o.f = "read"
		} else {
			o.f, o.in = "add", strconv.FormatInt(int64(o.worker)<<32|n, 10)
		}
	}
	o.node = keyNode(o.key)
	o.outcome, o.applies = "ok", true
	if g.partNode == o.node {
		switch x := g.r.IntN(100); {
		case x < 40:
			o.outcome, o.err, o.applies = "fail", "CLUSTERDOWN The cluster is down", false
		case x < 42 && o.f != "read":
			o.outcome, o.err, o.applies = "info", "i/o timeout", g.r.IntN(2) == 0
		}
	} else if g.r.IntN(2000) == 0 && o.f != "read" {
		o.outcome, o.err, o.applies = "info", "i/o timeout", g.r.IntN(2) == 0
	}
}

// apply makes the op take effect now and computes an ok op's result.
func (g *gen) apply(o *op) {
	switch o.k {
	case kCounter:
		if o.f == "read" {
			o.result = strconv.FormatInt(g.counters[o.key], 10)
		} else if o.applies {
			n, _ := strconv.ParseInt(o.in, 10, 64)
			g.counters[o.key] += n
		}
	case kRegister:
		cur := g.regs[o.key]
		switch o.f {
		case "read":
			if cur == nil {
				o.result = "null"
			} else {
				o.result = strconv.FormatInt(*cur, 10)
			}
		case "write":
			n, _ := strconv.ParseInt(o.in, 10, 64)
			g.regs[o.key] = &n
		case "cas":
			var a, b int64
			fmt.Sscanf(o.in, "[%d,%d]", &a, &b)
			if cur == nil || *cur != a {
				if o.outcome == "ok" {
					o.outcome, o.err = "fail", "cas-mismatch"
				}
				return
			}
			g.regs[o.key] = &b
		}
	case kSet:
		if o.f == "read" {
			b := []byte{'['}
			for i, v := range g.sets[o.key] {
				if i > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendInt(b, v, 10)
			}
			o.result = string(append(b, ']'))
		} else if o.applies {
			n, _ := strconv.ParseInt(o.in, 10, 64)
			s := g.sets[o.key]
			i := len(s)
			for i > 0 && s[i-1] > n {
				i--
			}
			s = append(s, 0)
			copy(s[i+1:], s[i:])
			s[i] = n
			g.sets[o.key] = s
		}
	}
}

func (g *gen) line(t int64, proc string, typ, f string, rest string) {
	fmt.Fprintf(g.w, `{"index":%d,"time":%d,"process":%s,"type":%q,"f":%q%s}`+"\n", g.index, t, proc, typ, f, rest)
	g.index++
}

func (g *gen) nemesis(t int64, f, nodes, detail string) {
	rest := ""
	if nodes != "" {
		rest += `,"nodes":[` + nodes + `]`
	}
	if detail != "" {
		rest += "," + detail
	}
	g.line(t, `"nemesis"`, "info", f, rest)
}

func (g *gen) invoke(t int64, o *op) {
	rest := `,"key":"` + o.key + `"`
	if o.in != "" {
		rest += `,"value":` + o.in
	}
	g.line(t, strconv.Itoa(o.process), "invoke", o.f, rest)
}

func (g *gen) complete(t int64, o *op) {
	rest := `,"key":"` + o.key + `"`
	switch {
	case o.outcome == "ok" && o.f == "read":
		rest += `,"value":` + o.result
	case o.outcome != "ok" && o.in != "":
		rest += `,"value":` + o.in
	}
	rest += `,"node":"` + addr(o.node) + `"`
	if o.err != "" {
		rest += `,"error":"` + o.err + `"`
	}
	g.line(t, strconv.Itoa(o.process), o.outcome, o.f, rest)
}
