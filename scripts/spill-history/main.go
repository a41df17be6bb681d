// Command spill-history measures the first pass of checking in bounded
// memory (issue 42): it reads a stored run's history once and spills its
// client ops into per-key partitions on disk (history.Spill), then loads
// the largest partition back as a per-key checker would, and prints what
// that took:
//
//	go run ./scripts/spill-history -run /tmp/run10m -partitions 64
//	/usr/bin/time -v spill-history -run /tmp/run10m    # peak RSS
//
// A key goes to partition fnv32a(key) mod -partitions, so one key's ops are
// in one partition: the largest partition bounds what a per-key checker
// loading one at a time holds. With -linearizable PREFIX it spills by key
// slot instead (as `redline check` does) and runs the linearizable checker
// on the register keys of PREFIX partition by partition, as `redline
// check` does for a big history, printing its verdict:
//
//	/usr/bin/time -v spill-history -run /tmp/run10m -load=false -linearizable gen:register:
//
// With -counter-set PREFIX it runs the counter and set workloads' checkers
// that judge partitions (counter, set, their rpo, default-failover and
// wait-probe) on the partitions, one after the other:
//
//	/usr/bin/time -v spill-history -run /tmp/run10m -load=false -counter-set gen:
//
// With -rto PREFIX it runs the RTO checker of the keys of PREFIX on the
// partitions (two loads of each), and with -whole then on the history read
// whole too, and says whether results.json would be the same, byte for byte:
//
//	/usr/bin/time -v spill-history -run /tmp/run10m -load=false -rto gen:
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
)

func main() {
	run := flag.String("run", "", "run directory whose history to spill")
	dir := flag.String("dir", "", "directory for the partition files (default: a new one in $TMPDIR)")
	n := flag.Int("partitions", 64, "partitions to spill into")
	load := flag.Bool("load", true, "load the largest partition back afterwards")
	keep := flag.Bool("keep", false, "keep the partition files")
	linPrefix := flag.String("linearizable", "", "key prefix of register keys to check for linearizability on the partitions (spills by key slot)")
	timeout := flag.Duration("timeout", time.Minute, "the linearizability search's time budget, for the whole run")
	family := flag.String("counter-set", "", "run prefix (gen:) whose counter and set keys (PREFIXcounter:, PREFIXset:) the counter and set checkers, their rpo, default-failover and wait-probe judge on the partitions (spills by key slot)")
	rtoPrefix := flag.String("rto", "", "key prefix whose RTO checker to run on the partitions (spills by key slot)")
	whole := flag.Bool("whole", false, "with -rto, run it on the history read whole too and compare the results")
	flag.Parse()
	if *run == "" || *n < 1 {
		fmt.Fprintln(os.Stderr, "spill-history: -run DIR is required, -partitions at least 1")
		os.Exit(254)
	}
	if *dir == "" {
		d, err := os.MkdirTemp("", "spill-")
		if err != nil {
			fail(err)
		}
		*dir = d
	}
	partOf := func(op *history.Op) int {
		h := fnv.New32a()
		h.Write([]byte(op.Key))
		return int(h.Sum32() % uint32(*n))
	}
	if *linPrefix != "" || *family != "" || *rtoPrefix != "" {
		partOf = history.SlotPartition(*n)
	}
	t0 := time.Now()
	p, err := history.Spill(history.Path(*run), *dir, *n, partOf)
	if err != nil {
		fail(err)
	}
	spilled := time.Since(t0)
	var disk int64
	largest := 0
	for i := range p.N() {
		if st, err := os.Stat(filepath.Join(*dir, fmt.Sprintf("part-%d.jsonl.zst", i))); err == nil {
			disk += st.Size()
		}
		if p.Entries(i) > p.Entries(largest) {
			largest = i
		}
	}
	fmt.Printf("spilled %d entries into %d partitions in %.1f s: %d run-wide in memory, largest partition %d entries, %d MB on disk\n",
		p.Read.Entries, p.N(), spilled.Seconds(), len(p.RunWide), p.Entries(largest), disk>>20)
	if p.Read.TruncatedTail {
		fmt.Printf("the history is torn (line %d, %d bytes): the entries before it were spilled\n", p.Read.TornLine, p.Read.TornBytes)
	}
	if *load {
		t1 := time.Now()
		ops, err := p.Load(largest)
		if err != nil {
			fail(err)
		}
		// The live heap is the partition's ops (the spill's garbage
		// collected first), what a per-key checker starts from.
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fmt.Printf("loaded the largest partition (%d entries with the run-wide ones) in %.1f s, live heap %d MB\n",
			len(ops), time.Since(t1).Seconds(), ms.HeapAlloc>>20)
		runtime.KeepAlive(ops)
	}
	if *linPrefix != "" {
		t1 := time.Now()
		c := checker.Linearizable(checker.LinearizableOptions{Scope: checker.Scope{KeyPrefix: *linPrefix}, Timeout: *timeout, NoVisualization: true})
		r, err := c.(checker.PartitionChecker).CheckPartitions(context.Background(), p.N(), p.LoadWhere)
		if err != nil {
			fail(err)
		}
		f, ok := checker.FiguresAs[*checker.LinearizableFigures](r)
		if !ok {
			fail(fmt.Errorf("linearizable: %v: %s", r.Valid, r.Why()))
		}
		fmt.Printf("linearizable on %d partitions (paired %v, indexes increase %v) in %.1f s: %v, %v keys, %v ops, unknown keys %d, anomalous keys %d\n",
			p.N(), p.Paired, p.IndexesIncrease, time.Since(t1).Seconds(), r.Valid, f.Keys, f.Ops,
			len(f.UnknownKeys), len(f.AnomalousKeys))
	}
	if *family != "" {
		cs, ss := checker.Scope{KeyPrefix: *family + "counter:"}, checker.Scope{KeyPrefix: *family + "set:"}
		for _, c := range []checker.Checker{
			checker.Counter(cs), checker.RPO(checker.RPOOptions{Scope: cs, Kind: "counter"}),
			checker.DefaultFailover(checker.RPOOptions{Scope: cs, Kind: "counter"}), checker.WaitProbe(checker.ProbeAtLeast, cs),
			checker.Set(ss), checker.RPO(checker.RPOOptions{Scope: ss, Kind: "set"}),
			checker.DefaultFailover(checker.RPOOptions{Scope: ss, Kind: "set"}), checker.WaitProbe(checker.ProbeMember, ss),
		} {
			t1 := time.Now()
			r, err := c.(checker.PartitionChecker).CheckPartitions(checker.WithHistoryEnd(context.Background(), p.Latest), p.N(), p.LoadWhere)
			if err != nil {
				fail(err)
			}
			fmt.Printf("%s (%s) on %d partitions in %.1f s: %v %s\n", c.Name(), *family, p.N(), time.Since(t1).Seconds(), r.Valid, r.Why())
		}
	}
	if *rtoPrefix != "" {
		checkRTO(p, *run, *rtoPrefix, *whole)
	}
	if !*keep {
		if err := p.Remove(); err != nil {
			fail(err)
		}
		os.Remove(*dir)
	}
}

// checkRTO runs the RTO checker of prefix on p's partitions, and on the
// history of run read whole when whole is set, comparing their results.
func checkRTO(p *history.Partitions, run, prefix string, whole bool) {
	c := checker.RTO(checker.Scope{KeyPrefix: prefix})
	t1 := time.Now()
	parts, err := c.(checker.PartitionChecker).CheckPartitions(checker.WithHistoryEnd(context.Background(), p.Latest), p.N(), p.LoadWhere)
	if err != nil {
		fail(err)
	}
	took := time.Since(t1)
	f, ok := checker.FiguresAs[*checker.RTOFigures](parts)
	if !ok {
		fail(fmt.Errorf("rto: %v: %s %s", parts.Valid, parts.NotApplicable, parts.Why()))
	}
	fmt.Printf("rto (%s) on %d partitions (paired %v, indexes increase %v) in %.1f s: %v, %d windows, %d shards and %d keys affected, %d unrecovered\n",
		prefix, p.N(), p.Paired, p.IndexesIncrease, took.Seconds(), parts.Valid, f.Windows, f.Affected, f.AffectedKeys, f.Unrecovered)
	if !whole {
		return
	}
	read, err := history.ReadRun(run)
	if err != nil {
		fail(err)
	}
	t1 = time.Now()
	w := c.Check(context.Background(), checker.NewHistory(read.Ops))
	took = time.Since(t1)
	pj, err := json.Marshal(parts)
	if err != nil {
		fail(err)
	}
	wj, err := json.Marshal(w)
	if err != nil {
		fail(err)
	}
	fmt.Printf("rto (%s) on the history read whole in %.1f s: %v; the same results.json: %v\n", prefix, took.Seconds(), w.Valid, bytes.Equal(pj, wj))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "spill-history:", err)
	os.Exit(255)
}
