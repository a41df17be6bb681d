// Command failover-readiness measures the two reasons a default CLUSTER
// FAILOVER ends unpromoted with its replica in sync (docs/findings/F011):
// on a local 6-node cluster under INCR traffic, it fails over one replica
// after another and prints, per round, whether the replica was promoted,
// how long it took, and how long the new primary took to list the former
// primary as its replica (until then a CLUSTER FAILOVER sent to the former
// primary is ignored by the new one and times out after 5 s).
//
//	go run ./scripts/failover-readiness -server redis-server -rounds 12 -pause 4s
//	go run ./scripts/failover-readiness -server "bin/redline server" -pause 1s
//
// A pause under 2 x max(2 x node timeout, 2 s) (8 s here) lets a replica be
// asked again while Redis still waits out its last election (the rounds
// that take seconds); a pause of 1 s also asks demoted nodes before their
// new primary knows them (the rounds that time out).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redline-dev/redline/clusteradmin/localcluster"
)

func main() {
	server := flag.String("server", "redis-server", "the server command (e.g. \"bin/redline server\")")
	rounds := flag.Int("rounds", 12, "failovers to run")
	pause := flag.Duration("pause", 4*time.Second, "pause between failovers")
	flag.Parse()
	bin := *server
	if strings.Contains(bin, " ") { // localcluster runs one program: wrap the command
		w := filepath.Join(os.TempDir(), fmt.Sprintf("failover-readiness-%d.sh", os.Getpid()))
		if err := os.WriteFile(w, []byte("#!/bin/sh\nexec "+bin+" \"$@\"\n"), 0o755); err != nil {
			fail(err)
		}
		defer os.Remove(w)
		bin = w
	}
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "failover-readiness")
	if err != nil {
		fail(err)
	}
	c, err := localcluster.Start(ctx, dir, 6, 1, 2*time.Second, bin)
	if err != nil {
		fail(err)
	}
	defer c.Stop()
	fmt.Printf("server %q, node timeout 2s, logs in %s\n", *server, dir)
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs})
	stop := make(chan struct{})
	for w := 0; w < 8; w++ {
		go func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				cc.Incr(ctx, fmt.Sprintf("k%d", (w*7+i)%50))
			}
		}()
	}
	defer close(stop)
	failed := 0
	for round := 0; round < *rounds; round++ {
		rep, prim := pickReplica(ctx, c.Addrs[round%len(c.Addrs)], round)
		if rep == "" {
			continue
		}
		rc := redis.NewClient(&redis.Options{Addr: rep})
		began := time.Now()
		if err := rc.Do(ctx, "cluster", "failover").Err(); err != nil {
			fmt.Println("CLUSTER FAILOVER:", err)
			continue
		}
		promoted := waitUntil(10*time.Second, func() bool {
			r, _ := rc.Do(ctx, "role").Slice()
			return len(r) > 0 && r[0] == "master"
		})
		took := time.Since(began).Round(time.Millisecond)
		known := "-"
		if promoted {
			t0 := time.Now()
			if waitUntil(5*time.Second, func() bool { return listsAsReplica(ctx, rc, prim) }) {
				known = time.Since(t0).Round(time.Millisecond).String()
			}
		} else {
			failed++
			grep(dir, c.Addrs, rep, prim)
		}
		fmt.Printf("round %2d: replica %s of %s promoted=%v after %v; new primary lists the former one as its replica after %s\n",
			round, rep, prim, promoted, took, known)
		rc.Close()
		time.Sleep(*pause)
	}
	fmt.Printf("unpromoted: %d of %d\n", failed, *rounds)
}

// pickReplica returns a replica (rotating with round) and its primary, from
// the CLUSTER NODES of the node at addr.
func pickReplica(ctx context.Context, addr string, round int) (rep, prim string) {
	cl := redis.NewClient(&redis.Options{Addr: addr})
	defer cl.Close()
	out, err := cl.Do(ctx, "cluster", "nodes").Text()
	if err != nil {
		return "", ""
	}
	byID := map[string]string{}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, l := range lines {
		f := strings.Fields(l)
		byID[f[0]] = strings.Split(f[1], "@")[0]
	}
	var reps [][2]string
	for _, l := range lines {
		f := strings.Fields(l)
		if strings.Contains(f[2], "slave") && !strings.Contains(f[2], "fail") {
			reps = append(reps, [2]string{strings.Split(f[1], "@")[0], byID[f[3]]})
		}
	}
	if len(reps) == 0 {
		return "", ""
	}
	r := reps[round%len(reps)]
	return r[0], r[1]
}

// listsAsReplica says whether the node cl lists the node at addr as a replica.
func listsAsReplica(ctx context.Context, cl *redis.Client, addr string) bool {
	txt, _ := cl.Do(ctx, "cluster", "nodes").Text()
	for _, l := range strings.Split(txt, "\n") {
		f := strings.Fields(l)
		if len(f) > 3 && strings.HasPrefix(f[1], addr+"@") && strings.Contains(f[2], "slave") {
			return true
		}
	}
	return false
}

func waitUntil(limit time.Duration, ok func() bool) bool {
	for t0 := time.Now(); time.Since(t0) < limit; time.Sleep(10 * time.Millisecond) {
		if ok() {
			return true
		}
	}
	return false
}

// grep prints both nodes' log lines about the manual failover.
func grep(dir string, addrs []string, nodes ...string) {
	for _, a := range nodes {
		for i, ad := range addrs {
			if ad == a {
				out, _ := exec.Command("grep", "-i", "manual\\|election\\|failover", filepath.Join(dir, fmt.Sprintf("node%d", i+1), "server.log")).Output()
				ls := strings.Split(strings.TrimSpace(string(out)), "\n")
				fmt.Printf("--- %s (node%d) log, last lines:\n%s\n", a, i+1, strings.Join(ls[max(0, len(ls)-8):], "\n"))
			}
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "failover-readiness:", err)
	os.Exit(1)
}
