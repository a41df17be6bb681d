package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin/localcluster"
	"github.com/redline-dev/redline/harness/bench"
)

// TestBenchSlotStatsOnReference: `redline bench` on six reference-server
// processes with cluster-slot-stats-enabled and all keys in 4 hash tags
// (4 slots): the client-side load and every primary's CLUSTER SLOT-STATS
// are reported side by side, and they agree on which slots are hot.
func TestBenchSlotStatsOnReference(t *testing.T) {
	bin := os.Getenv("REDLINE_BINARY")
	if bin == "" {
		t.Fatal("REDLINE_BINARY is not set: run `make build` and set it to bin/redline (make test does)")
	}
	dir := t.TempDir()
	wrapper := filepath.Join(dir, "redline-server")
	if err := os.WriteFile(wrapper, []byte("#!/bin/sh\nexec "+bin+" server \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lc, err := localcluster.StartWith(ctx, dir, 6, 1, time.Second, wrapper, cluster.Credentials{},
		func(int) []string { return []string{"--cluster-slot-stats-enabled", "yes"} })
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Stop()
	res := t.TempDir()
	var out, errb bytes.Buffer
	if code := run([]string{"bench", "--addrs", strings.Join(lc.Addrs, ","), "--rate", "1000", "--concurrency", "4",
		"--time-limit", "2s", "--keys", "200", "--hash-tags", "4", "--results", res, "--seed", "5"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	var r bench.Result
	b, _ := os.ReadFile(filepath.Join(res, "latest", "bench.json"))
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	l := r.Load
	if l == nil || l.SlotsTouched != 4 || len(l.TopSlots) != 4 || len(l.Server) != 3 || l.ServerNote != "" {
		t.Fatalf("load %+v\n%s", l, out.String())
	}
	for _, s := range l.TopSlots {
		if s.Server == nil || s.Server.KeyCount == 0 || s.Server.CPUUsec < 0 || s.Server.NetIn <= 0 {
			t.Fatalf("hot slot %d lacks the server's figures: %+v", s.Slot, s.Server)
		}
	}
	hot := map[int]bool{}
	for _, s := range l.TopSlots {
		hot[s.Slot] = true
	}
	for _, s := range l.ServerTop {
		if !hot[s.Slot] {
			t.Fatalf("the server's hot slot %d is not one the clients loaded (%v)", s.Slot, l.TopSlots)
		}
	}
	for _, want := range []string{"load per shard", "hot slots", "server CLUSTER SLOT-STATS per primary"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("summary lacks %q:\n%s", want, out.String())
		}
	}
	page, _ := os.ReadFile(filepath.Join(res, "latest", "report.html"))
	if !bytes.Contains(page, []byte("hot slots")) || !bytes.Contains(page, []byte("CLUSTER SLOT-STATS")) {
		t.Fatal("report.html lacks the load tables")
	}
	t.Logf("\n%s", out.String())
}
