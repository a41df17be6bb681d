package workloads

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/redline-dev/redline/history"
)

// Each workload brings its own library form: the ones that have one are
// exactly those whose every op is one command on one key, and the others
// say why they need redline's own client.
func TestLibraryFormsAreTheWorkloads(t *testing.T) {
	// The workloads known here; a new one (its own folder and a line in
	// workloads/all) needs no entry: every registered workload is held to
	// the same rules below.
	var lib []string
	for _, n := range Names() {
		if LibSupports(n) {
			lib = append(lib, n)
		}
	}
	for _, n := range []string{"counter", "register", "set", "ttl"} {
		if !slices.Contains(lib, n) {
			t.Errorf("%s has no library form; library workloads %v", n, lib)
		}
	}
	for _, n := range NamesOf(History) {
		if LibSupports(n) {
			continue
		}
		w := mustNew(t, n)
		why := LibUnsupported(n)
		if o, ok := w.(OwnClientOnly); !ok || !strings.Contains(why, "("+o.OwnClientOnly()+")") ||
			!strings.HasSuffix(why, "client libraries run "+strings.Join(lib, ", ")) {
			t.Errorf("%s: %q", n, why)
		}
		if _, err := LibCommand(w, history.Op{F: "read", Key: "k"}); err == nil || !strings.Contains(err.Error(), "no single-command form") {
			t.Errorf("%s: LibCommand: %v", n, err)
		}
	}
}

// register, counter and set: each op's one command, and the reply decoded
// as the workload's own code decodes it (garbage kept raw).
func TestLibraryFormCommandsAndReplies(t *testing.T) {
	op := func(f string, v any) history.Op {
		o := history.Op{F: f, Key: "k"}
		if v != nil {
			o.SetValue(v)
		}
		return o
	}
	for _, c := range []struct {
		workload string
		inv      history.Op
		args     string
		reply    any
		typ      history.Type
		value    string
	}{
		{"register", op("read", nil), "GET k", "3", history.OK, "3"},
		{"register", op("read", nil), "GET k", nil, history.OK, "null"},
		{"register", op("read", nil), "GET k", "x", history.OK, `"x"`},
		{"register", op("read", nil), "GET k", int64(5), history.OK, `"5"`},
		{"register", op("write", 4), "SET k 4", "OK", history.OK, "4"},
		{"register", op("cas", []int{1, 2}), "EVAL " + casScript + " 1 k 1 2", int64(1), history.OK, "[1,2]"},
		{"register", op("cas", []int{1, 2}), "EVAL " + casScript + " 1 k 1 2", json.Number("0"), history.Fail, "[1,2]"},
		{"register", op("cas", []int{1, 2}), "EVAL " + casScript + " 1 k 1 2", "what", history.OK, `"what"`},
		{"counter", op("read", nil), "GET k", "7", history.OK, "7"},
		{"counter", op("add", 3), "INCRBY k 3", int64(10), history.OK, "3"},
		{"set", op("read", nil), "SMEMBERS k", []any{"3", "1"}, history.OK, "[1,3]"},
		{"set", op("read", nil), "SMEMBERS k", nil, history.OK, "[]"},
		{"set", op("add", 9), "SADD k 9", int64(1), history.OK, "9"},
	} {
		w := mustNew(t, c.workload)
		lop, err := LibCommand(w, c.inv)
		if err != nil || strings.Join(lop.Args, " ") != c.args || lop.Key != "k" || lop.ReadOnly != (c.inv.F == "read") {
			t.Fatalf("%s %s: %+v, %v; want %s", c.workload, c.inv.F, lop, err, c.args)
		}
		out := LibCompletion(w, c.inv, LibReply{Type: history.OK, Reply: c.reply, Replica: true})
		if out.Type != c.typ || string(out.Value) != c.value || out.FromReplica() != (c.inv.F == "read") {
			t.Errorf("%s %s %v: %s %s replica=%v, want %s %s", c.workload, c.inv.F, c.reply, out.Type, out.Value, out.FromReplica(), c.typ, c.value)
		}
		if c.typ == history.Fail && out.ErrorText() != CASMismatch {
			t.Errorf("%s %s: error %q, want %s", c.workload, c.inv.F, out.ErrorText(), CASMismatch)
		}
	}
	for _, c := range []struct{ workload, f string }{{"register", "add"}, {"counter", "cas"}, {"set", "write"}} {
		if _, err := LibCommand(mustNew(t, c.workload), op(c.f, 1)); err == nil || err.Error() != "unknown op "+c.f+" of workload "+c.workload {
			t.Errorf("%s %s: %v", c.workload, c.f, err)
		}
	}
}
