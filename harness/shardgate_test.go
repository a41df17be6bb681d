package harness

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/workloads"
	"github.com/redline-dev/redline/workloads/client"
)

// deadShardCluster routes slots over three primaries; the first never
// answers (a killed primary whose ops wait out their timeout) until the
// test releases it, the others answer at once.
type deadShardCluster struct {
	*fakeCluster
	addrs   []string
	release chan struct{}

	mu             sync.Mutex
	live, blocked  int
	maxBlocked     int
	stopAt         int
	stopTraffic    context.CancelFunc
	liveWhileStuck int
}

func (d *deadShardCluster) Primary(slot int) string { return d.addrs[slot*len(d.addrs)/16384] }

func (d *deadShardCluster) Do(ctx context.Context, req client.Request) client.Result {
	if d.Primary(req.Slot) != d.addrs[0] {
		d.mu.Lock()
		d.live++
		if d.blocked > 0 {
			d.liveWhileStuck++
		}
		if d.live == d.stopAt {
			d.stopTraffic()
		}
		d.mu.Unlock()
		return d.fakeCluster.Do(ctx, req)
	}
	d.mu.Lock()
	d.blocked++
	d.maxBlocked = max(d.maxBlocked, d.blocked)
	d.mu.Unlock()
	<-d.release
	d.mu.Lock()
	d.blocked--
	d.mu.Unlock()
	return client.Result{Node: d.addrs[0], Cmds: req.Build(ctx), Outcome: history.Info, Err: errors.New("read tcp: i/o timeout")}
}

// Issue 23: a dead shard holds at most its share of the workers, and the
// live shards keep being served while its ops hang.
func TestDeadShardDoesNotStarveTheOthers(t *testing.T) {
	for _, gated := range []bool{true, false} {
		d := &deadShardCluster{fakeCluster: newFakeCluster(always(history.OK)), addrs: []string{"10.0.0.1:6379", "10.0.0.2:6379", "10.0.0.3:6379"},
			release: make(chan struct{}), stopAt: 600}
		if !gated {
			d.stopAt = -1 // stopped by the test once every worker hangs
		}
		cfg := Config{Concurrency: 9, Seed: 3}
		w, err := workloads.New("counter", workloads.Config{Prefix: "t:"})
		if err != nil {
			t.Fatal(err)
		}
		rec, err := NewRecorder(filepath.Join(t.TempDir(), history.FileName), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		trafficCtx, stop := context.WithCancel(context.Background())
		d.stopTraffic = stop
		var gate *shardGate
		if gated {
			gate = newShardGate(d, cfg.Concurrency)
			if gate == nil || gate.share != 3 {
				t.Fatalf("gate %+v, want a share of 3 of 9 workers per primary", gate)
			}
		}
		done := make(chan struct{})
		go func() {
			runWorkersGated(trafficCtx, context.Background(), cfg, []workloads.Workload{w}, workloads.Own{Conn: d}, rec, gate)
			close(done)
		}()
		if !gated {
			// Without the gate every worker ends up on the dead shard:
			// wait until all nine hang there, then let them go.
			for {
				d.mu.Lock()
				b := d.blocked
				d.mu.Unlock()
				if b == cfg.Concurrency {
					break
				}
				time.Sleep(time.Millisecond)
			}
			stop()
			close(d.release)
			<-done
			rec.Close()
			continue
		}
		<-trafficCtx.Done() // the live shards served 600 ops: traffic stopped itself
		close(d.release)
		<-done
		rec.Close()
		if d.maxBlocked > gate.share {
			t.Fatalf("%d ops hung on the dead shard at once, more than its share %d", d.maxBlocked, gate.share)
		}
		if d.liveWhileStuck < 500 {
			t.Fatalf("only %d of %d live ops were served while the dead shard held ops", d.liveWhileStuck, d.live)
		}
		if gate.redrawn.Load() == 0 {
			t.Fatal("no op was drawn again: the dead shard was never full")
		}
		if _, err := history.Pairs(recorded(t, rec)); err != nil {
			t.Fatalf("the gated history does not pair: %v", err)
		}
	}
}

// refusingCluster: the first primary refuses every op at once (a dead
// node's connection refused), the others serve.
type refusingCluster struct {
	*fakeCluster
	addrs []string

	mu         sync.Mutex
	live, dead int
	stopAt     int
	stop       context.CancelFunc
}

func (d *refusingCluster) Primary(slot int) string { return d.addrs[slot*len(d.addrs)/16384] }

func (d *refusingCluster) Do(ctx context.Context, req client.Request) client.Result {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.Primary(req.Slot) == d.addrs[0] {
		d.dead++
		return client.Result{Cmds: req.Build(ctx), Outcome: history.Fail, Err: errors.New("dial tcp 10.0.0.1:6379: connect: connection refused")}
	}
	d.live++
	if d.live == d.stopAt {
		d.stop()
	}
	d.mu.Unlock()
	defer d.mu.Lock()
	return d.fakeCluster.Do(ctx, req)
}

// A shard whose ops fail at once rests after each failure instead of
// taking its workers' every turn: on a clock that never moves, the dead
// shard gets its first share of ops and then none while the live shards
// serve 2,000.
func TestFailingShardRests(t *testing.T) {
	d := &refusingCluster{fakeCluster: newFakeCluster(always(history.OK)), addrs: []string{"10.0.0.1:6379", "10.0.0.2:6379", "10.0.0.3:6379"}, stopAt: 2000}
	cfg := Config{Concurrency: 9, Seed: 5}
	w, err := workloads.New("counter", workloads.Config{Prefix: "t:"})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := NewRecorder(filepath.Join(t.TempDir(), history.FileName), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	trafficCtx, stop := context.WithCancel(context.Background())
	d.stop = stop
	gate := newShardGate(d, cfg.Concurrency)
	frozen := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	gate.now = func() time.Time { return frozen }
	runWorkersGated(trafficCtx, context.Background(), cfg, []workloads.Workload{w}, workloads.Own{Conn: d}, rec, gate)
	if d.dead == 0 || d.dead > gate.share {
		t.Fatalf("the refusing shard got %d ops while the live ones served %d: want 1 to %d (one share, then rest)", d.dead, d.live, gate.share)
	}
	// A failure that is the op's own answer does not rest its shard.
	g := newShardGate(d, cfg.Concurrency)
	g.now = func() time.Time { return frozen }
	if !g.tryEnter(d.addrs[1]) {
		t.Fatal("no place on a fresh shard")
	}
	g.leave(d.addrs[1], false)
	if !g.tryEnter(d.addrs[1]) {
		t.Fatal("a served op rested its shard")
	}
}
