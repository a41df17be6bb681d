package workloads

import (
	"strings"
	"testing"

	"github.com/redline-dev/redline/history"
)

// A reply that cannot be what the workload wrote is recorded raw on an ok
// completion (issue 10 class 3), never as fail and never collapsed:
// distinct integers beyond int64 stay distinct.
func TestGarbageRepliesAreRecordedRaw(t *testing.T) {
	ctx, c := localClient(t)
	raw := func(cmd ...any) {
		t.Helper()
		key := cmd[1].(string)
		if err := c.Node(c.Primary(Keyslot(key))).Do(ctx, cmd...).Err(); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	invoke := func(w Workload, inv history.Op) history.Op {
		t.Helper()
		out := w.Invoke(ctx, c, inv)
		if out.Type != history.OK {
			t.Fatalf("%s %s: %+v, want ok with the raw reply", inv.F, inv.Key, out)
		}
		return out
	}

	counter, _ := New("counter", Config{Prefix: "t:"})
	for key, want := range map[string]string{
		"t:counter:a": `"abc"`, "t:counter:b": `"1.5"`,
		"t:counter:c": `"99999999999999999999"`, "t:counter:d": `"99999999999999999998"`,
	} {
		raw("set", key, strings.Trim(want, `"`))
		if out := invoke(counter, history.Op{F: "read", Key: key}); string(out.Value) != want {
			t.Errorf("counter read of %s: value %s, want %s", key, out.Value, want)
		}
	}

	set, _ := New("set", Config{Prefix: "t:"})
	raw("sadd", "t:set:0:0", "3", "x", "1")
	if out := invoke(set, history.Op{F: "read", Key: "t:set:0:0"}); string(out.Value) != `[1,3,"x"]` {
		t.Errorf("set read: %s", out.Value)
	}

	tw := mustNew(t, "txn")
	group := tw.(*txn).bankKey(0)
	raw("set", account(group, 0), "lots")
	out := invoke(tw, history.Op{F: "read-all", Key: group})
	if !strings.Contains(string(out.Value), `"lots"`) {
		t.Errorf("read-all: %s", out.Value)
	}
	lg := tw.(*txn).listGroup(0, 0)
	raw("rpush", lg+":l0", "5", "five")
	inv := history.Op{F: "txn", Key: lg}
	inv.SetValue([][]any{{"r", lg + ":l0", nil}})
	if out := invoke(tw, inv); !strings.Contains(string(out.Value), `[5,"five"]`) {
		t.Errorf("list read: %s", out.Value)
	}
}

func mustNew(t *testing.T, name string) Workload {
	t.Helper()
	w, err := New(name, Config{Prefix: "t:"})
	if err != nil {
		t.Fatal(err)
	}
	return w
}
