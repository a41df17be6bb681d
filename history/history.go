package history

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Type is the kind of a history entry. It is one byte in memory (a history
// of millions of entries holds one per entry) and its name in JSON and text.
// The zero Type is no type at all: it names itself "" and a history entry
// with it is rejected.
type Type uint8

const (
	Invoke Type = iota + 1
	OK
	Fail
	Info
)

var typeNames = [...]string{"", "invoke", "ok", "fail", "info"}

func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "type(" + strconv.Itoa(int(t)) + ")"
}

// ParseType returns the Type named s; ok is false when s names none.
func ParseType(s string) (t Type, ok bool) {
	switch s {
	case "invoke":
		return Invoke, true
	case "ok":
		return OK, true
	case "fail":
		return Fail, true
	case "info":
		return Info, true
	}
	return 0, false
}

// TypeError says a history entry's type is not one of the four.
type TypeError struct{ Name string }

func (e *TypeError) Error() string {
	return fmt.Sprintf("type %q is not invoke, ok, fail or info", e.Name)
}

// MarshalText gives the name, so that JSON (values and map keys) carries
// the strings it always did.
func (t Type) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText reads a name; "" is the zero Type (as MarshalText writes it).
func (t *Type) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*t = 0
		return nil
	}
	v, ok := ParseType(string(b))
	if !ok {
		return &TypeError{string(b)}
	}
	*t = v
	return nil
}

// Process identifies who performed an operation: a client process number
// (0, 1, 2, ...) or the nemesis. In JSON a client is a number and the nemesis
// is the string "nemesis". It is 32 bits in memory: a history holds one per
// entry, and a run retires far fewer than two billion processes.
type Process int32

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
	n, err := strconv.ParseInt(string(b), 10, 32)
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
	// Reply is the write's own reply where a probe judges against it (an
	// INCRBY's new value: a replica that has the write holds at least
	// that).
	Reply string `json:"reply,omitempty"`
	// Probes are the reads sent to every replica of the node that took
	// the write right after WAIT answered 1 or more (redline's own client
	// only): WAIT says Acked replicas have the write, the probes show
	// whether they do. Absent when no probe was sent.
	Probes []WaitProbe `json:"probes,omitempty"`
}

// WaitProbe is one replica's answer to a WAIT probe.
type WaitProbe struct {
	Node string `json:"node"`
	// Value is the reply (nil: a nil reply, or Error is set).
	Value *string `json:"value,omitempty"`
	Error string  `json:"error,omitempty"`
}

// Op is one line (one entry) of a history.
//
// A history of millions of entries is held in memory whole, so an Op is
// kept small (104 bytes): the fields only nemesis events or some client
// ops carry (an error, the WAIT reply, redirects, a fault's nodes and
// detail) live behind one pointer, Ext, read with ErrorText, WaitInfo,
// RedirectCount, NodeList and DetailRaw and written with SetError,
// SetWait, SetRedirects, SetNodes and SetDetail.
// In JSON an Op is the flat object it always was (wireOp).
type Op struct {
	Index   int64   // "index"
	Time    int64   // "time": nanoseconds since the run started
	Process Process // "process"
	Type    Type    // "type"
	F       string  // "f"
	Key     string  // "key", omitted when empty
	// Value is kept as raw JSON so that a checker sees exactly the same
	// thing in a live run and when re-checking a stored history.
	// Use SetValue / DecodeValue / Int / Ints to work with it.
	Value json.RawMessage // "value", omitted when empty
	// Node is the ip:port that served (or last refused) the operation.
	Node string // "node", omitted when empty
	// Ext holds the rare fields; nil when all of them are empty. It may be
	// shared between copies of an Op: replace it, never write through it
	// (the setters do so).
	Ext *Ext
}

// Ext is the part of an Op that most entries do not have.
type Ext struct {
	// Error is what the client got instead of a result ("error"): the
	// error of a fail or an info, or a fail's own answer (cas-mismatch).
	Error string
	// Wait is the WAIT sent after a write ("wait").
	Wait *Wait
	// Redirects counts MOVED/ASK replies the client followed for this op
	// ("redirects").
	Redirects int
	// Attempts is how many times the client library sent the op's
	// command, when it sent it more than once and said so ("attempts"):
	// its own retries, invisible to the caller.
	Attempts int
	// Resent counts the sends that followed an attempt whose outcome was
	// unknown (a timeout, a connection lost after sending) ("resent"):
	// each may have applied the write once more.
	Resent int
	// Replica marks a read the client library served from a replica
	// ("replica"): it may be stale by design, and is judged as such.
	Replica bool
	// Nodes lists the nodes a nemesis event touched ("nodes").
	Nodes []string
	// Detail holds free-form data of a nemesis event (fault kind, slots
	// ...) ("detail").
	Detail json.RawMessage
}

// NewExt returns &e, or nil when e is empty, as an Op keeps it: for
// building an Op in one literal.
func NewExt(e Ext) *Ext {
	if e.empty() {
		return nil
	}
	return &e
}

func (e *Ext) empty() bool {
	return e.Error == "" && e.Wait == nil && e.Redirects == 0 && e.Attempts == 0 && e.Resent == 0 && !e.Replica &&
		len(e.Nodes) == 0 && len(e.Detail) == 0
}

// ErrorText is the op's error ("" when none).
func (o Op) ErrorText() string {
	if o.Ext == nil {
		return ""
	}
	return o.Ext.Error
}

// WaitInfo is the WAIT recorded with the op, nil when none was sent.
func (o Op) WaitInfo() *Wait {
	if o.Ext == nil {
		return nil
	}
	return o.Ext.Wait
}

// RedirectCount is the number of MOVED/ASK replies the client followed.
func (o Op) RedirectCount() int {
	if o.Ext == nil {
		return 0
	}
	return o.Ext.Redirects
}

// AttemptCount is how many times the client library sent the op (0 or 1:
// once, as far as anyone knows).
func (o Op) AttemptCount() int {
	if o.Ext == nil {
		return 0
	}
	return o.Ext.Attempts
}

// ResentCount is how many sends followed an attempt of unknown outcome.
func (o Op) ResentCount() int {
	if o.Ext == nil {
		return 0
	}
	return o.Ext.Resent
}

// FromReplica reports whether a replica served the read.
func (o Op) FromReplica() bool { return o.Ext != nil && o.Ext.Replica }

// NodeList is the nodes a nemesis event touched.
func (o Op) NodeList() []string {
	if o.Ext == nil {
		return nil
	}
	return o.Ext.Nodes
}

// DetailRaw is the free-form data of a nemesis event (raw JSON).
func (o Op) DetailRaw() json.RawMessage {
	if o.Ext == nil {
		return nil
	}
	return o.Ext.Detail
}

// ext returns a copy of the op's Ext (or a new one) for a setter to change
// and install: an Ext may be shared by copies of the op.
func (o *Op) ext() *Ext {
	if o.Ext == nil {
		return &Ext{}
	}
	e := *o.Ext
	return &e
}

func (o *Op) setExt(e *Ext) {
	if e.empty() {
		e = nil
	}
	o.Ext = e
}

// SetError records the op's error ("": none).
func (o *Op) SetError(s string) {
	if s == "" && o.Ext == nil {
		return
	}
	e := o.ext()
	e.Error = s
	o.setExt(e)
}

// SetWait records the WAIT sent with the op (nil: none).
func (o *Op) SetWait(w *Wait) {
	if w == nil && o.Ext == nil {
		return
	}
	e := o.ext()
	e.Wait = w
	o.setExt(e)
}

// SetRedirects records how many MOVED/ASK replies the client followed.
func (o *Op) SetRedirects(n int) {
	if n == 0 && o.Ext == nil {
		return
	}
	e := o.ext()
	e.Redirects = n
	o.setExt(e)
}

// SetAttempts records the client library's sends of the op: how many in
// all, and how many followed an attempt of unknown outcome.
func (o *Op) SetAttempts(attempts, resent int) {
	if attempts == 0 && resent == 0 && o.Ext == nil {
		return
	}
	e := o.ext()
	e.Attempts, e.Resent = attempts, resent
	o.setExt(e)
}

// SetReplica marks a read served by a replica.
func (o *Op) SetReplica(r bool) {
	if !r && o.Ext == nil {
		return
	}
	e := o.ext()
	e.Replica = r
	o.setExt(e)
}

// SetNodes records the nodes a nemesis event touched.
func (o *Op) SetNodes(nodes []string) {
	if len(nodes) == 0 && o.Ext == nil {
		return
	}
	e := o.ext()
	e.Nodes = nodes
	o.setExt(e)
}

// SetDetail records the free-form data of a nemesis event (raw JSON).
func (o *Op) SetDetail(d json.RawMessage) {
	if len(d) == 0 && o.Ext == nil {
		return
	}
	e := o.ext()
	e.Detail = d
	o.setExt(e)
}

// wireOp is an Op as a line of a history: the same fields, in the
// same order, under the same names as ever.
type wireOp struct {
	Index     int64           `json:"index"`
	Time      int64           `json:"time"` // nanoseconds since the run started
	Process   Process         `json:"process"`
	Type      string          `json:"type"`
	F         string          `json:"f"`
	Key       string          `json:"key,omitempty"`
	Value     json.RawMessage `json:"value,omitempty"`
	Node      string          `json:"node,omitempty"`
	Error     string          `json:"error,omitempty"`
	Wait      *Wait           `json:"wait,omitempty"`
	Redirects int             `json:"redirects,omitempty"`
	Attempts  int             `json:"attempts,omitempty"`
	Resent    int             `json:"resent,omitempty"`
	Replica   bool            `json:"replica,omitempty"`
	Nodes     []string        `json:"nodes,omitempty"`
	Detail    json.RawMessage `json:"detail,omitempty"`
}

func (o Op) MarshalJSON() ([]byte, error) {
	w := wireOp{Index: o.Index, Time: o.Time, Process: o.Process, Type: o.Type.String(), F: o.F,
		Key: o.Key, Value: o.Value, Node: o.Node}
	if e := o.Ext; e != nil {
		w.Error, w.Wait, w.Redirects, w.Nodes, w.Detail = e.Error, e.Wait, e.Redirects, e.Nodes, e.Detail
		w.Attempts, w.Resent, w.Replica = e.Attempts, e.Resent, e.Replica
	}
	return json.Marshal(&w)
}

// UnmarshalJSON reads an entry. A type that is not one of the four is a
// *TypeError (after every other field has been read).
func (o *Op) UnmarshalJSON(b []byte) error {
	var w wireOp
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*o = Op{Index: w.Index, Time: w.Time, Process: w.Process, F: w.F,
		Key: w.Key, Value: w.Value, Node: w.Node}
	o.setExt(&Ext{Error: w.Error, Wait: w.Wait, Redirects: w.Redirects, Attempts: w.Attempts, Resent: w.Resent,
		Replica: w.Replica, Nodes: w.Nodes, Detail: w.Detail})
	t, ok := ParseType(w.Type)
	if !ok {
		return &TypeError{w.Type}
	}
	o.Type = t
	return nil
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
