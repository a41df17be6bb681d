// Package history defines the operations a run records and their JSON-lines
// codec. It is a leaf package: the runner writes histories with it, checkers
// and `redline check` read them back, and nothing here knows about Redis.
//
// An operation is recorded twice, as in Jepsen: once when a process invokes it
// (type "invoke") and once when it completes ("ok", "fail" or "info").
//   - ok:   the operation certainly happened and its result is in Value.
//   - fail: the operation certainly did not happen (MOVED, CROSSSLOT,
//     CLUSTERDOWN before execution, ...).
//   - info: the outcome is unknown (timeout, connection reset after sending).
//     The process that saw it is retired and a fresh process id replaces it.
//
// These three types are the one vocabulary of outcomes: the workload client
// classifies its results with them too. The package is also the one home of
// the building blocks every reader and writer of a history shares: the
// decoding of integer values (ParseInt, ParseInts) and a key's slot
// (Keyslot).
package history

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Type is the kind of a history entry.
type Type string

const (
	Invoke Type = "invoke"
	OK     Type = "ok"
	Fail   Type = "fail"
	Info   Type = "info"
)

// Process identifies who performed an operation: a client process number
// (0, 1, 2, ...) or the nemesis. In JSON a client is a number and the nemesis
// is the string "nemesis".
type Process int

// Nemesis is the process of fault events.
const Nemesis Process = -1

func (p Process) MarshalJSON() ([]byte, error) {
	if p == Nemesis {
		return []byte(`"nemesis"`), nil
	}
	return strconv.AppendInt(nil, int64(p), 10), nil
}

func (p *Process) UnmarshalJSON(b []byte) error {
	if string(b) == `"nemesis"` {
		*p = Nemesis
		return nil
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("process must be a non-negative integer or \"nemesis\", got %s", b)
	}
	*p = Process(n)
	return nil
}

func (p Process) String() string {
	if p == Nemesis {
		return "nemesis"
	}
	return strconv.Itoa(int(p))
}

// Wait records a WAIT sent on the same connection right after a write:
// how many replicas were wanted and how many acknowledged.
// Acked is -1 when the WAIT itself got no reply.
type Wait struct {
	Want  int `json:"want"`
	Acked int `json:"acked"`
}

// Op is one line of history.jsonl.
type Op struct {
	Index   int64   `json:"index"`
	Time    int64   `json:"time"` // nanoseconds since the run started
	Process Process `json:"process"`
	Type    Type    `json:"type"`
	F       string  `json:"f"`
	Key     string  `json:"key,omitempty"`
	// Value is kept as raw JSON so that a checker sees exactly the same
	// thing in a live run and when re-checking a stored history.
	// Use SetValue / DecodeValue / Int / Ints to work with it.
	Value json.RawMessage `json:"value,omitempty"`
	// Node is the ip:port that served (or last refused) the operation.
	Node  string `json:"node,omitempty"`
	Error string `json:"error,omitempty"`
	Wait  *Wait  `json:"wait,omitempty"`
	// Redirects counts MOVED/ASK replies the client followed for this op.
	Redirects int `json:"redirects,omitempty"`
	// Nodes lists the nodes a nemesis event touched.
	Nodes []string `json:"nodes,omitempty"`
	// Detail holds free-form data of a nemesis event (fault kind, slots ...).
	Detail json.RawMessage `json:"detail,omitempty"`
}

// NemesisOp reports whether the entry is a fault event rather than a client op.
func (o *Op) NemesisOp() bool { return o.Process == Nemesis }

// SetValue marshals v into o.Value. A nil v clears it.
func (o *Op) SetValue(v any) {
	if v == nil {
		o.Value = nil
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		// Values are built by workloads from plain Go types; failing here
		// is a programming error.
		panic(fmt.Sprintf("history: value %#v does not marshal: %v", v, err))
	}
	o.Value = b
}

// DecodeValue unmarshals o.Value into v.
func (o *Op) DecodeValue(v any) error {
	if len(o.Value) == 0 {
		return fmt.Errorf("op %d has no value", o.Index)
	}
	return json.Unmarshal(o.Value, v)
}

// HasValue reports whether the value is present and not JSON null.
func (o *Op) HasValue() bool {
	return len(o.Value) > 0 && string(o.Value) != "null"
}

// Int returns the value as an integer (ParseInt); ok is false when it is
// absent, null or not an integer.
func (o *Op) Int() (n int64, ok bool) { return ParseInt(o.Value) }

// Ints returns the value as a list of integers (ParseInts); null is the
// empty list.
func (o *Op) Ints() ([]int64, bool) { return ParseInts(o.Value) }

// Recorder appends entries to a history as a run goes. It assigns Index and
// Time and returns the entry as recorded. Safe for concurrent use.
type Recorder interface {
	Record(op Op) Op
}
