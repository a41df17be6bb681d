package ttl

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/clusteradmin/localcluster"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/workloads"
	"github.com/redline-dev/redline/workloads/client"
	"github.com/redline-dev/redline/workloads/workloadtest"
)

func ttlOp(f, key string, v Value) history.Op {
	op := history.Op{F: f, Key: key}
	op.SetValue(v)
	return op
}

// The commands on a real (in-process, Redis 7.0) cluster: the probe finds
// no hash-field expiration; SET PX, PEXPIRE, PERSIST and the read and
// final scripts answer as the checker reads them.
func TestTTLCommands(t *testing.T) {
	ctx, c := workloadtest.LocalClient(t)
	w := workloadtest.New(t, "ttl").(*ttl)
	if err := w.Setup(ctx, c); err != nil {
		t.Fatal(err)
	}
	value := func(op history.Op) Value {
		t.Helper()
		var v Value
		if op.Type != history.OK || op.DecodeValue(&v) != nil {
			t.Fatalf("%s: %+v %s", op.F, op, op.Value)
		}
		return v
	}
	p := value(w.Invoke(ctx, c, w.InitOps()[0]))
	if p.HashFieldExpiry == nil || *p.HashFieldExpiry || len(p.Missing) != 3 || w.hashFields.Load() {
		t.Fatalf("probe on Redis 7.0: %+v", p)
	}
	k := w.key(0, "k", 0)
	read := func() (string, int64) {
		v := value(w.Invoke(ctx, c, ttlOp("read", k, Value{})))
		got := ""
		if v.Got != nil {
			got = *v.Got
		}
		return got, *v.PTTL
	}
	if got, pttl := read(); got != "" || pttl != -2 {
		t.Fatalf("read of no key: %q %d", got, pttl)
	}
	value(w.Invoke(ctx, c, ttlOp("set", k, Value{Value: "v1", TTLms: 60000})))
	if got, pttl := read(); got != "v1" || pttl <= 0 || pttl > 60000 {
		t.Fatalf("read after SET PX: %q %d", got, pttl)
	}
	if v := value(w.Invoke(ctx, c, ttlOp("persist", k, Value{}))); *v.Reply != 1 {
		t.Fatalf("persist: %+v", v)
	}
	if got, pttl := read(); got != "v1" || pttl != -1 {
		t.Fatalf("read after PERSIST: %q %d", got, pttl)
	}
	if v := value(w.Invoke(ctx, c, ttlOp("pexpire", k, Value{TTLms: 50}))); *v.Reply != 1 {
		t.Fatalf("pexpire: %+v", v)
	}
	time.Sleep(80 * time.Millisecond)
	if got, pttl := read(); got != "" || pttl != -2 {
		t.Fatalf("read after the expiry: %q %d", got, pttl)
	}
	if v := value(w.Invoke(ctx, c, ttlOp("pexpire", k, Value{TTLms: 50}))); *v.Reply != 0 {
		t.Fatalf("pexpire of no key: %+v", v)
	}
	value(w.Invoke(ctx, c, ttlOp("set", k, Value{Value: "v2"})))
	if v := value(w.Invoke(ctx, c, history.Op{F: "final", Key: k})); v.Got == nil || *v.Got != "v2" || *v.PTTL != -1 {
		t.Fatalf("final: %+v", v)
	}
	if got, pttl := read(); got != "" || pttl != -2 {
		t.Fatalf("read after the final: %q %d", got, pttl)
	}
}

// A library's replies decode as redline's own: integers as int64 or JSON
// numbers, the read script's list, and garbage kept raw.
func TestTTLLibraryForm(t *testing.T) {
	w := workloadtest.New(t, "ttl")
	if !workloads.LibSupports("ttl") || workloads.LibUnsupported("queue") == "" || workloads.LibUnsupported("ttl") != "" {
		t.Fatal("ttl runs on libraries, queue does not")
	}
	for _, c := range []struct {
		f     string
		v     Value
		cmd   string
		reply any
		want  string
	}{
		{"set", Value{Value: "a", TTLms: 100}, "SET", "OK", `{"value":"a","ttl_ms":100}`},
		{"pexpire", Value{TTLms: 100}, "PEXPIRE", int64(1), `{"ttl_ms":100,"reply":1}`},
		{"persist", Value{}, "PERSIST", json.Number("0"), `{"reply":0}`},
		{"persist", Value{Field: "f"}, "HPERSIST", []any{int64(-1)}, `{"field":"f","reply":-1}`},
		{"read", Value{}, "EVAL", []any{"a", int64(42)}, `{"got":"a","pttl":42}`},
		{"read", Value{}, "EVAL", []any{nil, int64(-2)}, `{"pttl":-2}`},
		{"read", Value{}, "EVAL", "garbage", `"garbage"`},
		{"pexpire", Value{TTLms: 1}, "PEXPIRE", "x", `"x"`},
	} {
		inv := ttlOp(c.f, "t:ttl:w0:k0{x}", c.v)
		lop, err := workloads.LibCommand(w, inv)
		if err != nil || lop.Args[0] != c.cmd {
			t.Fatalf("%s: %v %v", c.f, lop, err)
		}
		out := workloads.LibCompletion(w, inv, workloads.LibReply{Type: history.OK, Reply: c.reply})
		if string(out.Value) != c.want {
			t.Errorf("%s %v: %s, want %s", c.f, c.reply, out.Value, c.want)
		}
	}
	if _, err := workloads.LibCommand(w, history.Op{F: "final", Key: "k"}); err == nil {
		t.Fatal("the final has no library form")
	}
}

// A few workers on a healthy cluster, with a final per key: the ttl
// checker finds every deadline kept and judges many pairs.
func TestTTLWorkersOnAHealthyClusterAreValid(t *testing.T) {
	ctx, c := workloadtest.LocalClient(t)
	w := workloadtest.New(t, "ttl").(*ttl)
	if err := w.Setup(ctx, c); err != nil {
		t.Fatal(err)
	}
	var ops []history.Op
	pr := w.InitOps()[0]
	pr.Process, pr.Type = 999, history.Invoke
	ops = append(ops, pr)
	out := w.Invoke(ctx, c, pr)
	out.Process, out.F, out.Key, out.Index, out.Time = 999, pr.F, pr.Key, 1, 1
	ops = append(ops, out)
	rest := workloadtest.RunRecorded(t, ctx, c, w, 4, 60, nil)
	for i := range rest {
		rest[i].Index += 2
		rest[i].Time += 2
	}
	ops = append(ops, rest...)
	r := Checker(checker.Scope{KeyPrefix: w.KeyPrefix()}).Check(ctx, checker.NewHistory(ops))
	if r.Valid != checker.Valid {
		t.Fatalf("valid = %v: %v", r.Valid, r.Figures)
	}
	if f, ok := checker.FiguresAs[*Figures](r); !ok || f.PairsJudged < 50 || f.FinalsOK != 4*w.keys {
		t.Fatalf("figures %v", r.Figures)
	}
	t.Logf("%v", r.Values()["why"])
}

// Hash-field expiration on a server that has it (Redis >= 7.4; none is
// bundled): set REDLINE_HFE_SERVER to its redis-server, e.g. one built by
// the version matrix. The probe finds HPEXPIRE, HPERSIST and HPTTL, the
// hash ops answer as the checker reads them, and workers on both keys and
// fields give a valid history with hash-field ops judged.
func TestTTLHashFieldsOnAServerThatHasThem(t *testing.T) {
	bin := os.Getenv("REDLINE_HFE_SERVER")
	if bin == "" {
		t.Skip("set REDLINE_HFE_SERVER to a redis-server >= 7.4 (hash-field expiration)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lc, err := localcluster.Start(ctx, t.TempDir(), 3, 0, time.Second, bin)
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Stop()
	c, err := client.New(ctx, client.Options{Seeds: lc.Addrs})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w := workloadtest.New(t, "ttl").(*ttl)
	if err := w.Setup(ctx, c); err != nil {
		t.Fatal(err)
	}
	var ops []history.Op
	pr := w.InitOps()[0]
	pr.Process, pr.Type = 999, history.Invoke
	out := w.Invoke(ctx, c, pr)
	var p Value
	if out.Type != history.OK || out.DecodeValue(&p) != nil || p.HashFieldExpiry == nil || !*p.HashFieldExpiry {
		t.Fatalf("probe: %+v %s", out, out.Value)
	}
	out.Process, out.F, out.Key, out.Index, out.Time = 999, pr.F, pr.Key, 1, 1
	ops = append(ops, pr, out)
	hk := w.key(0, "h", 0)
	f := Value{Field: ttlField}
	for _, step := range []struct {
		f    string
		v    Value
		want string
	}{
		{"read", f, `{"field":"f","pttl":-2}`},
		{"set", Value{Field: ttlField, Value: "v1", TTLms: 60000}, `{"field":"f","value":"v1","ttl_ms":60000}`},
		{"persist", f, `{"field":"f","reply":1}`},
		{"read", f, `{"field":"f","got":"v1","pttl":-1}`},
		{"pexpire", Value{Field: ttlField, TTLms: 60000}, `{"field":"f","ttl_ms":60000,"reply":1}`},
		{"final", f, ``},
		{"read", f, `{"field":"f","pttl":-2}`},
	} {
		got := w.Invoke(ctx, c, ttlOp(step.f, hk, step.v))
		if got.Type != history.OK || step.want != "" && string(got.Value) != step.want {
			t.Fatalf("%s: %s %s, want %s", step.f, got.Type, got.Value, step.want)
		}
	}
	rest := workloadtest.RunRecorded(t, ctx, c, w, 4, 60, nil)
	for i := range rest {
		rest[i].Index += 2
		rest[i].Time += 2
	}
	ops = append(ops, rest...)
	r := Checker(checker.Scope{KeyPrefix: w.KeyPrefix()}).Check(ctx, checker.NewHistory(ops))
	if f, ok := checker.FiguresAs[*Figures](r); r.Valid != checker.Valid || !ok || f.HashFieldOps == 0 || f.HashFieldExpiry != "judged" {
		t.Fatalf("valid = %v: %v", r.Valid, r.Figures)
	}
	t.Logf("%v", r.Values()["why"])
}
