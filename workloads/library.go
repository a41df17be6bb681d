package workloads

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/redline-dev/redline/history"
)

// Client is the client under test as a worker calls it, one op at a time:
// redline's own exactly-once client (Own), or a client library of
// workloads/clientlib, which runs the op's one command (LibCommand, from the
// workload's LibForm) its own way and reports back what it saw
// (LibCompletion).
type Client interface {
	Invoke(ctx context.Context, w Workload, inv history.Op) history.Op
}

// Own runs each op through the workload's own code over redline's
// exactly-once client: every command sent once, redirects followed and
// counted, WAIT on the write's connection.
type Own struct{ Conn Conn }

func (o Own) Invoke(ctx context.Context, w Workload, inv history.Op) history.Op {
	return w.Invoke(ctx, o.Conn, inv)
}

// LibOp is an invocation as a client library runs it: one command with
// one key, that the library routes, retries and redirects as it does for
// any application.
type LibOp struct {
	Args     []string // the command and its arguments, e.g. INCRBY k 3
	Key      string   // the key the library routes by
	ReadOnly bool     // a read: a library may serve it from a replica
}

// LibReply is what a client library reported for one LibOp.
type LibReply struct {
	// Type is ok (a reply), fail (the library's error, and the command
	// certainly did not run) or info (unknown: a timeout, a connection
	// lost after sending).
	Type history.Type
	// Reply is the command's reply: nil, a string, an integer (int64 or
	// json.Number) or a list of those.
	Reply any
	Error string
	Node  string // ip:port that served the op, when the library tells
	// Attempts and Resent: the library's own sends of the op, when it
	// lets them be seen (history.Ext).
	Attempts, Resent int
	Redirects        int
	Replica          bool // a replica served the read
}

// LibForm is a workload whose every op is one command on one key: what a
// client library can run without redline's own client. Each such workload
// brings its own form beside its own code (register, counter, set, ttl);
// the library path below only asks for it.
type LibForm interface {
	// LibCommand is the one command of an invocation.
	LibCommand(inv history.Op) (LibOp, error)
	// LibReply decodes a library's reply to an op that succeeded into its
	// completion out, as the workload's own code decodes its reply: a
	// reply that cannot be what was written is kept raw for the checkers
	// to flag.
	LibReply(inv history.Op, r LibReply, out *history.Op)
}

// OwnClientOnly is a workload that is no LibForm and says why it needs
// redline's own client (txn: WATCH/MULTI on one connection ...).
type OwnClientOnly interface {
	OwnClientOnly() string
}

// libFormOf is the named workload's library form; ok is false when it has
// none (or is no History workload).
func libFormOf(name string) (w Workload, ok bool) {
	w, err := New(name, Config{})
	if err != nil {
		return nil, false
	}
	_, ok = w.(LibForm)
	return w, ok
}

// LibSupports reports whether a client library can run the workload.
func LibSupports(workload string) bool {
	_, ok := libFormOf(workload)
	return ok
}

// LibUnsupported says why a client library cannot run the workload, and
// which workloads it can run; "" when it can.
func LibUnsupported(workload string) string {
	w, ok := libFormOf(workload)
	if ok {
		return ""
	}
	why := "it needs redline's own client"
	if o, ok := w.(OwnClientOnly); ok {
		why = o.OwnClientOnly()
	}
	var names []string
	for _, n := range Names() {
		if LibSupports(n) {
			names = append(names, n)
		}
	}
	return fmt.Sprintf("workload %s needs redline's own client (%s); client libraries run %s", workload, why, strings.Join(names, ", "))
}

// LibCommand is the one command of an invocation of w, for a client library.
func LibCommand(w Workload, inv history.Op) (LibOp, error) {
	f, ok := w.(LibForm)
	if !ok {
		return LibOp{}, fmt.Errorf("workload %s has no single-command form for a client library", w.Name())
	}
	return f.LibCommand(inv)
}

// LibCompletion turns a library's reply into the op's completion: what
// every op shares here, the value as w's LibReply decodes it.
func LibCompletion(w Workload, inv history.Op, r LibReply) history.Op {
	out := history.Op{Type: r.Type, Node: r.Node}
	out.SetRedirects(r.Redirects)
	out.SetAttempts(r.Attempts, r.Resent)
	if r.Type != history.OK {
		if r.Type == 0 {
			out.Type = history.Info
		}
		out.Value = inv.Value
		out.SetError(r.Error)
		return out
	}
	f, ok := w.(LibForm)
	if !ok {
		out.Value = inv.Value
		return out
	}
	f.LibReply(inv, r, &out)
	return out
}

// libUnknownOp is the error of an op a workload's library form does not know.
func libUnknownOp(w Workload, inv history.Op) error {
	return fmt.Errorf("unknown op %s of workload %s", inv.F, w.Name())
}

// libIntRead decodes a GET's reply as readInt does: a missing key reads as
// null, a string as an integer or raw, anything else is garbage, kept raw.
func libIntRead(out *history.Op, reply any) {
	switch v := reply.(type) {
	case nil:
		out.Value = []byte("null")
	case string:
		out.SetValue(intOrRaw(v))
	default:
		out.SetValue(fmt.Sprint(v)) // no string reply: garbage
	}
}

// replyInt reads an integer reply (int64, or a JSON number from an
// adapter process).
func replyInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}
