package history

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	ops := []Op{
		{Index: 0, Time: 10, Process: 3, Type: Invoke, F: "write", Key: "k", Value: []byte("5")},
		{Index: 1, Time: 20, Process: 3, Type: OK, F: "write", Key: "k", Value: []byte("5"), Node: "10.0.0.2:6379",
			Ext: &Ext{Wait: &Wait{Want: 1, Acked: 0}, Redirects: 2}},
		{Index: 2, Time: 30, Process: Nemesis, Type: Info, F: "start-partition", Ext: &Ext{Nodes: []string{"n1", "n2"},
			Detail: []byte(`{"mode":"halves"}`)}},
		{Index: 3, Time: 40, Process: 4, Type: Info, F: "read", Key: "k", Ext: NewExt(Ext{Error: "i/o timeout"})},
	}
	var buf bytes.Buffer
	for i := range ops {
		if err := Encode(&buf, &ops[i]); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(buf.String(), `"process":"nemesis"`) || !strings.Contains(buf.String(), `"wait":{"want":1,"acked":0}`) {
		t.Fatalf("encoding does not follow the documented format:\n%s", buf.String())
	}
	res, err := Decode(&buf, "h")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Ops) != len(ops) || res.TruncatedTail {
		t.Fatalf("got %d ops, torn=%v", len(res.Ops), res.TruncatedTail)
	}
	for i := range ops {
		a, b := ops[i], res.Ops[i]
		if a.Index != b.Index || a.Process != b.Process || a.Type != b.Type || a.F != b.F || a.Key != b.Key ||
			string(a.Value) != string(b.Value) || a.Node != b.Node || a.RedirectCount() != b.RedirectCount() || a.ErrorText() != b.ErrorText() {
			t.Errorf("op %d: wrote %+v, read %+v", i, a, b)
		}
	}
	if w := res.Ops[1].WaitInfo(); w == nil || w.Want != 1 || w.Acked != 0 {
		t.Errorf("wait lost: %+v", w)
	}
	if n, ok := res.Ops[0].Int(); !ok || n != 5 {
		t.Errorf("Int() = %d, %v", n, ok)
	}
}

func TestCorruptLineNamesFileAndLine(t *testing.T) {
	in := `{"index":0,"time":1,"process":0,"type":"invoke","f":"read","key":"a"}
{"index":1,"time":2,"process":0,"type":"ok","f":"read","key":"a","value":1}
{"index":2,"time":3,"process":0,"type":"invoke","f":"read" BROKEN
{"index":3,"time":4,"process":0,"type":"ok","f":"read","key":"a","value":1}
`
	_, err := Decode(strings.NewReader(in), "run/history.jsonl")
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 3 || !strings.HasPrefix(err.Error(), "run/history.jsonl:3:") {
		t.Fatalf("want an error naming run/history.jsonl:3, got %v", err)
	}
}

func TestBadFieldsAreErrors(t *testing.T) {
	for _, line := range []string{
		`{"index":0,"time":1,"process":0,"type":"maybe","f":"read"}`,
		`{"index":0,"time":1,"process":0,"type":"ok"}`,
		`{"index":0,"time":1,"process":-4,"type":"ok","f":"read"}`,
		`{"index":0,"time":1,"process":"chaos","type":"ok","f":"read"}`,
		`[1,2,3]`,
	} {
		if _, err := Decode(strings.NewReader(line+"\n"), "h"); err == nil {
			t.Errorf("%s: accepted", line)
		}
	}
}

func TestTornTailIsTolerated(t *testing.T) {
	in := `{"index":0,"time":1,"process":0,"type":"invoke","f":"read","key":"a"}
{"index":1,"time":2,"process":0,"type":"ok","f":"re`
	res, err := Decode(strings.NewReader(in), "h")
	if err != nil {
		t.Fatal(err)
	}
	if !res.TruncatedTail || len(res.Ops) != 1 {
		t.Fatalf("torn=%v ops=%d", res.TruncatedTail, len(res.Ops))
	}
}

func TestLongLine(t *testing.T) {
	big := strings.Repeat("1,", 1<<20) + "1"
	in := `{"index":0,"time":1,"process":0,"type":"ok","f":"read","key":"s","value":[` + big + `]}` + "\n"
	res, err := Decode(strings.NewReader(in), "h")
	if err != nil {
		t.Fatal(err)
	}
	if vs, ok := res.Ops[0].Ints(); !ok || len(vs) != 1<<20+1 {
		t.Fatalf("long value lost: %d", len(vs))
	}
}

func TestPairs(t *testing.T) {
	ops := []Op{
		{Index: 0, Process: 0, Type: Invoke, F: "write"},
		{Index: 1, Process: 1, Type: Invoke, F: "read"},
		{Index: 2, Process: Nemesis, Type: Info, F: "start-kill"},
		{Index: 3, Process: 1, Type: OK, F: "read"},
		{Index: 4, Process: 0, Type: Info, F: "write"},
		{Index: 5, Process: 2, Type: Invoke, F: "read"},
	}
	pairs, err := Pairs(ops)
	if err != nil {
		t.Fatal(err)
	}
	if len(pairs) != 3 || pairs[0].Completion.Index != 4 || pairs[1].Completion.Index != 3 || pairs[2].Completion != nil {
		t.Fatalf("pairs %+v", pairs)
	}
	if pairs[2].Outcome() != Info || pairs[0].Outcome() != Info || pairs[1].Outcome() != OK {
		t.Fatal("outcomes")
	}
	if _, err := Pairs([]Op{{Process: 0, Type: OK, F: "read"}}); err == nil {
		t.Fatal("a completion without invocation must be an error")
	}
	if _, err := Pairs([]Op{{Process: 0, Type: Invoke, F: "read"}, {Process: 0, Type: Invoke, F: "read"}}); err == nil {
		t.Fatal("a double invocation must be an error")
	}
}

// ReadFile sizes its slice by counting lines first: blank lines, a last
// line without a newline and a torn last line all give what Decode gives.
func TestReadFileMatchesDecode(t *testing.T) {
	cases := map[string]string{
		"blank lines":   "{\"index\":0,\"time\":1,\"process\":0,\"type\":\"invoke\",\"f\":\"read\"}\n\n\n{\"index\":1,\"time\":2,\"process\":0,\"type\":\"ok\",\"f\":\"read\",\"value\":3}\n",
		"no newline":    "{\"index\":0,\"time\":1,\"process\":0,\"type\":\"invoke\",\"f\":\"read\"}\n{\"index\":1,\"time\":2,\"process\":0,\"type\":\"ok\",\"f\":\"read\"}",
		"torn tail":     "{\"index\":0,\"time\":1,\"process\":0,\"type\":\"invoke\",\"f\":\"read\"}\n{\"index\":1,\"ti",
		"empty":         "",
		"bad type last": "{\"index\":0,\"time\":1,\"process\":0,\"type\":\"invoke\",\"f\":\"read\"}\n{\"index\":1,\"time\":2,\"process\":0,\"type\":\"bogus\",\"f\":\"read\"}\n",
	}
	for name, text := range cases {
		path := filepath.Join(t.TempDir(), "history.jsonl")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		got, gerr := ReadFile(path)
		want, werr := Decode(strings.NewReader(text), path)
		if (gerr == nil) != (werr == nil) || (gerr != nil && gerr.Error() != werr.Error()) {
			t.Errorf("%s: error %v, Decode gives %v", name, gerr, werr)
		}
		if !reflect.DeepEqual(got.Ops, want.Ops) && !(len(got.Ops) == 0 && len(want.Ops) == 0) || got.TruncatedTail != want.TruncatedTail {
			t.Errorf("%s: %+v, Decode gives %+v", name, got, want)
		}
	}
}

// Type is a byte in memory and its name everywhere else: in JSON values,
// as a JSON map key, in text; the zero Type is "".
func TestTypeKeepsItsNames(t *testing.T) {
	b, err := json.Marshal(map[Type]Type{OK: Fail, Invoke: Info})
	if err != nil || string(b) != `{"invoke":"info","ok":"fail"}` {
		t.Fatalf("marshal: %s, %v", b, err)
	}
	var m map[Type]Type
	if err := json.Unmarshal(b, &m); err != nil || m[OK] != Fail || m[Invoke] != Info {
		t.Fatalf("unmarshal: %v, %v", m, err)
	}
	if s := fmt.Sprintf("%s %v %q", OK, Info, Type(0)); s != `ok info ""` {
		t.Errorf("text: %s", s)
	}
	var typ Type
	if err := json.Unmarshal([]byte(`"maybe"`), &typ); err == nil || err.Error() != `type "maybe" is not invoke, ok, fail or info` {
		t.Errorf("unknown type: %v", err)
	}
	// An entry of an unknown type is named as such, on any line.
	_, err = Decode(strings.NewReader(`{"index":0,"time":1,"process":0,"type":"maybe","f":"read"}`), "h")
	if err == nil || !strings.Contains(err.Error(), `h:1: type "maybe" is not invoke, ok, fail or info`) {
		t.Errorf("decode: %v", err)
	}
}

// A client library's sends and replica reads survive a round trip, by the
// fast decoder and by encoding/json alike.
func TestClientFieldsRoundTrip(t *testing.T) {
	op := Op{Index: 3, Time: 5, Process: 1, Type: OK, F: "read", Key: "k", Node: "10.0.0.1:6379"}
	op.SetAttempts(3, 2)
	op.SetReplica(true)
	var buf bytes.Buffer
	if err := Encode(&buf, &op); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"attempts":3,"resent":2,"replica":true`) {
		t.Fatalf("encoded %s", buf.String())
	}
	res, err := Decode(&buf, "t")
	if err != nil {
		t.Fatal(err)
	}
	got := res.Ops[0]
	if got.AttemptCount() != 3 || got.ResentCount() != 2 || !got.FromReplica() {
		t.Fatalf("decoded %+v", got.Ext)
	}
	var fast Op
	if !newLineDecoder().decode([]byte(`{"index":1,"time":2,"process":0,"type":"ok","f":"add","key":"k","attempts":2,"resent":1}`), &fast) {
		t.Fatal("the fast decoder gave up on attempts/resent")
	}
	if fast.AttemptCount() != 2 || fast.ResentCount() != 1 {
		t.Fatalf("fast decoded %+v", fast.Ext)
	}
}
