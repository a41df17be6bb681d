package nemesis

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/redline-dev/redline/clusteradmin"
)

// A node that redline's failover promoted a moment ago is not asked for a
// manual failover until Redis's election window has passed (sinceWon):
// within it the node "wins" with the old election's votes and epoch and
// is demoted at once (redis/redis#8752). Other nodes wait for nothing.
func TestRestoreWaitsOutTheLastElection(t *testing.T) {
	j, err := clusteradmin.OpenJournal(filepath.Join(t.TempDir(), "journal.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	seq, err := j.Begin(clusteradmin.Step{Kind: "failover", From: "old-primary", To: "promoted"})
	if err != nil {
		t.Fatal(err)
	}
	j.End(seq, nil)
	f := &failoverFault{env: &env{journal: j, opts: Options{NodeTimeout: time.Second}}}
	// Node timeout 1 s: auth_timeout 2 s, auth_retry_time 4 s, plus 0.5 s.
	if w := f.sinceWon("promoted"); w < 4*time.Second || w > 4500*time.Millisecond {
		t.Errorf("wait before a failover on the node just promoted: %s, want about 4.5 s", w)
	}
	if w := f.sinceWon("old-primary"); w != 0 {
		t.Errorf("wait before a failover on the demoted node: %s, want none", w)
	}
	f.opts.NodeTimeout = 5 * time.Second // auth_timeout 10 s, retry 20 s
	if w := f.sinceWon("promoted"); w < 20*time.Second || w > 20500*time.Millisecond {
		t.Errorf("with a 5 s node timeout: %s, want about 20.5 s", w)
	}
}

// The voters' window (sinceVoted): a primary that redline's failover
// replaced a moment ago gets no votes for another of its replicas within
// two node timeouts, so a manual failover of its shard waits that out.
// A failover of the shard's new primary (the way back) waits for nothing.
func TestManualFailoverWaitsOutTheVotersWindow(t *testing.T) {
	j, err := clusteradmin.OpenJournal(filepath.Join(t.TempDir(), "journal.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	seq, err := j.Begin(clusteradmin.Step{Kind: "failover", From: "old-primary", To: "promoted"})
	if err != nil {
		t.Fatal(err)
	}
	j.End(seq, nil)
	f := &failoverFault{env: &env{journal: j, opts: Options{NodeTimeout: 2 * time.Second}}}
	if w := f.sinceVoted("old-primary"); w < 4*time.Second || w > 4500*time.Millisecond {
		t.Errorf("wait before another failover about the replaced primary: %s, want about 4.5 s", w)
	}
	if w := f.sinceVoted("promoted"); w != 0 {
		t.Errorf("wait before failing the new primary back: %s, want none", w)
	}
}
