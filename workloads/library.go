package workloads

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
)

// Client is the client under test as a worker calls it, one op at a time:
// redline's own exactly-once client (Own), or a client library of
// workloads/clientlib, which runs the op's one command (LibCommand) its own
// way and reports back what it saw (LibCompletion).
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

// casLua is the register's compare-and-set, as one command a library can
// send by itself (EVAL, so no script cache is needed on any node).
const casLua = casScript

// libWorkloads are the workloads whose every op is one command on one key:
// what a client library can run without redline's own client. txn needs
// WATCH/MULTI on one connection and is not among them; nor is lock, whose
// release waits out its hold in the workload's own code before it sends;
// nor is queue, whose ack names the message its consumer's dequeue
// returned (the workload's own code keeps it between the two ops). ttl's
// ops are one command each (its reads and hash sets one script); its
// probe and finals run on redline's own client, as every settled op does.
var libWorkloads = map[string]bool{"register": true, "counter": true, "set": true, "ttl": true}

// LibSupports reports whether a client library can run the workload.
func LibSupports(workload string) bool { return libWorkloads[workload] }

// libWhyNot says why a workload needs redline's own client.
var libWhyNot = map[string]string{
	"txn":    "WATCH/MULTI on one connection",
	"script": "SCRIPT LOAD on every primary and EVALSHA by SHA only",
	"lock":   "its release waits out its hold in redline's code before it is sent",
	"queue":  "its ack names the message its dequeue returned, kept by redline's code between the two ops",
}

// LibUnsupported says why a client library cannot run the workload, and
// which workloads it can run; "" when it can.
func LibUnsupported(workload string) string {
	if libWorkloads[workload] {
		return ""
	}
	why := libWhyNot[workload]
	if why == "" {
		why = "it needs redline's own client"
	}
	var names []string
	for _, n := range Names() {
		if libWorkloads[n] {
			names = append(names, n)
		}
	}
	return fmt.Sprintf("workload %s needs redline's own client (%s); client libraries run %s", workload, why, strings.Join(names, ", "))
}

// LibCommand is the one command of an invocation of w, for a client library.
func LibCommand(w Workload, inv history.Op) (LibOp, error) {
	if !libWorkloads[w.Name()] {
		return LibOp{}, fmt.Errorf("workload %s has no single-command form for a client library", w.Name())
	}
	if w.Name() == "ttl" {
		return ttlCommand(inv)
	}
	k := inv.Key
	switch w.Name() + "/" + inv.F {
	case "register/read", "counter/read":
		return LibOp{Args: []string{"GET", k}, Key: k, ReadOnly: true}, nil
	case "set/read":
		return LibOp{Args: []string{"SMEMBERS", k}, Key: k, ReadOnly: true}, nil
	case "register/write":
		v, _ := inv.Int()
		return LibOp{Args: []string{"SET", k, strconv.FormatInt(v, 10)}, Key: k}, nil
	case "register/cas":
		vs, ok := inv.Ints()
		if !ok || len(vs) != 2 {
			return LibOp{}, fmt.Errorf("malformed cas value %s", inv.Value)
		}
		return LibOp{Args: []string{"EVAL", casLua, "1", k, strconv.FormatInt(vs[0], 10), strconv.FormatInt(vs[1], 10)}, Key: k}, nil
	case "counter/add":
		d, _ := inv.Int()
		return LibOp{Args: []string{"INCRBY", k, strconv.FormatInt(d, 10)}, Key: k}, nil
	case "set/add":
		e, _ := inv.Int()
		return LibOp{Args: []string{"SADD", k, strconv.FormatInt(e, 10)}, Key: k}, nil
	}
	return LibOp{}, fmt.Errorf("unknown op %s of workload %s", inv.F, w.Name())
}

// LibCompletion turns a library's reply into the op's completion, decoding
// the reply as the workload's own code does: a reply that cannot be what
// was written is kept raw for the checkers to flag.
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
	if w.Name() == "ttl" {
		var v checker.TTLValue
		_ = inv.DecodeValue(&v)
		setTTLReply(&out, inv.F, v, r.Reply)
		return out
	}
	switch inv.F {
	case "read":
		out.SetReplica(r.Replica)
		if w.Name() == "set" {
			out.SetValue(setReply(r.Reply))
			return out
		}
		switch v := r.Reply.(type) {
		case nil:
			out.Value = []byte("null")
		case string:
			out.SetValue(intOrRaw(v))
		default:
			out.SetValue(fmt.Sprint(v)) // no string reply: garbage
		}
	case "cas":
		out.Value = inv.Value
		switch n, ok := replyInt(r.Reply); {
		case ok && n == 1:
		case ok && n == 0:
			out.Type = history.Fail
			out.SetError(CASMismatch)
		default:
			out.SetValue(fmt.Sprint(r.Reply))
		}
	default:
		out.Value = inv.Value
	}
	return out
}

// setReply orders a SMEMBERS reply as the set workload does; a reply that
// is no list is garbage, kept as one raw member.
func setReply(reply any) []any {
	list, ok := reply.([]any)
	if !ok {
		if reply == nil {
			return []any{}
		}
		return []any{fmt.Sprint(reply)}
	}
	members := make([]string, len(list))
	for i, m := range list {
		members[i] = fmt.Sprint(m)
	}
	return sortedMembers(members)
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
