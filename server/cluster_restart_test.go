package server

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redline-dev/redline/server/keyslot"
)

// ownLine is the node's own CLUSTER NODES line, split in fields.
func ownLine(t *testing.T, n *node) []string {
	t.Helper()
	for _, l := range strings.Split(n.str("cluster", "nodes"), "\n") {
		if f := strings.Fields(l); len(f) >= 8 && strings.Contains(f[2], "myself") {
			return f
		}
	}
	t.Fatalf("%s: no myself line in CLUSTER NODES", n.addr())
	return nil
}

// ownSlots are the slots on the node's own line.
func ownSlots(t *testing.T, n *node) []int {
	var out []int
	for _, f := range ownLine(t, n)[8:] {
		if strings.HasPrefix(f, "[") {
			continue
		}
		a, b, ok := strings.Cut(f, "-")
		lo, _ := strconv.Atoi(a)
		hi := lo
		if ok {
			hi, _ = strconv.Atoi(b)
		}
		for s := lo; s <= hi; s++ {
			out = append(out, s)
		}
	}
	return out
}

// TestRestartChecksKeysAgainstSlots: a primary that starts with keys of a
// slot another node owns sets that slot IMPORTING from the owner and keeps
// them, and takes back a slot with keys that nobody owns, as Redis 7.0's
// verifyClusterConfigWithData does (the reference trimmed such keys: Redis
// keeps them, and redline's end phase closes what the restart opened).
func TestRestartChecksKeysAgainstSlots(t *testing.T) {
	nodes := startCluster(t, 3, 0, 2000, "--appendonly", "yes")
	const foreign = "{restart-foreign}k"
	slot := keyslot.Of(foreign)
	var owner, holder *node
	for _, n := range nodes {
		if slices.Contains(ownSlots(t, n), slot) {
			owner = n
		} else if holder == nil {
			holder = n
		}
	}
	ownerID := owner.myID()
	hc := holder.client()
	mustDo := func(args ...any) {
		t.Helper()
		if err := hc.Do(ctx, args...).Err(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	mustDo("cluster", "setslot", slot, "importing", ownerID)
	pipe := hc.Pipeline()
	pipe.Do(ctx, "asking")
	pipe.Set(ctx, foreign, "stale", 0)
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	mustDo("cluster", "setslot", slot, "stable")
	// A slot of its own, with a key, that it then forgets.
	mine := ownSlots(t, holder)
	lo, hi := mine[0], mine[len(mine)-1]
	own := keyIn("restart-own", lo, hi)
	ownSlot := keyslot.Of(own)
	mustDo("set", own, "mine")
	mustDo("cluster", "delslots", ownSlot)

	holder.kill()
	holder.start()
	line := strings.Join(ownLine(t, holder), " ")
	if want := fmt.Sprintf("[%d-<-%s]", slot, ownerID); !strings.Contains(line, want) {
		t.Fatalf("after the restart the holder's line is %q, want %s (IMPORTING from the owner)\n%s", line, want, lastLines(holder.log.String(), 20))
	}
	if !slices.Contains(ownSlots(t, holder), ownSlot) {
		t.Fatalf("after the restart the holder does not claim slot %d it holds keys of and nobody owned: %q", ownSlot, line)
	}
	for _, msg := range []string{
		fmt.Sprintf("I have keys for slot %d, but the slot is assigned to another node. Setting it to importing state.", slot),
		fmt.Sprintf("I have keys for unassigned slot %d. Taking responsibility for it.", ownSlot),
	} {
		if !strings.Contains(holder.log.String(), msg) {
			t.Fatalf("the holder's log lacks %q:\n%s", msg, lastLines(holder.log.String(), 20))
		}
	}
	hc = holder.client()
	waitFor(t, "cluster_state:ok on the restarted holder", 10*time.Second, func() bool {
		return strings.Contains(holder.str("cluster", "info"), "cluster_state:ok")
	})
	pipe = hc.Pipeline()
	pipe.Do(ctx, "asking")
	get := pipe.Get(ctx, foreign)
	if _, err := pipe.Exec(ctx); err != nil || get.Val() != "stale" {
		t.Fatalf("the key of the foreign slot after the restart: %q %v, want it kept", get.Val(), err)
	}
	if v, err := hc.Get(ctx, own).Result(); err != nil || v != "mine" {
		t.Fatalf("the key of the retaken slot: %q %v", v, err)
	}
}

// TestRestartTrimsAnUnfinishedAtomicImport: a destination killed while a
// CLUSTER MIGRATION import was under way comes back without the imported
// keys and with no slot open (Redis 8.4 trims the task's slots on load):
// the task's slots are kept beside nodes.conf for the restart to know.
func TestRestartTrimsAnUnfinishedAtomicImport(t *testing.T) {
	nodes := startCluster(t, 3, 0, 2000, "--appendonly", "yes")
	var src, dst *node
	for _, n := range nodes {
		if slices.Contains(ownSlots(t, n), 0) {
			src = n
		} else if dst == nil {
			dst = n
		}
	}
	srcID := src.myID()
	// The source stopped: the task stays where the test puts it.
	src.cmd.Process.Signal(syscall.SIGSTOP)
	defer func() {
		if src.cmd != nil {
			src.cmd.Process.Signal(syscall.SIGCONT)
		}
	}()
	dc := dst.client()
	id, err := dc.Do(ctx, "cluster", "migration", "import", 0, 999).Text()
	if err != nil {
		t.Fatal(err)
	}
	var payload []byte
	for i := range 3 {
		k := keyIn("restart-imp"+strconv.Itoa(i)+"-", 0, 999)
		payload = appendCommand(payload, [][]byte{[]byte("SET"), []byte(k), []byte("v")})
	}
	if err := dc.Do(ctx, "cluster", "syncslots", srcID, 1, id, 0, 0, "0-999", "", payload, 0).Err(); err != nil {
		t.Fatal(err)
	}
	dst.kill()
	src.cmd.Process.Signal(syscall.SIGCONT)
	dst.start()
	line := strings.Join(ownLine(t, dst), " ")
	if strings.Contains(line, "-<-") {
		t.Fatalf("after the restart the destination shows an import: %q", line)
	}
	dc = dst.client()
	waitFor(t, "the imported keys trimmed", 5*time.Second, func() bool {
		n, err := dc.DBSize(ctx).Result()
		return err == nil && n == 0
	})
	if !strings.Contains(dst.log.String(), "trimmed 3 keys") {
		t.Fatalf("the destination's log does not say it trimmed the 3 keys:\n%s", lastLines(dst.log.String(), 20))
	}
}
