package checker

import (
	"fmt"
	"strings"
)

// Workloads lists the workload names ForWorkload knows.
var Workloads = []string{"register", "counter", "set", "bank", "list-append", "cross-slot", "txn"}

// ForWorkload returns the checkers a workload wants: its own correctness
// checker(s), then perf and RTO, and RPO for the workloads that can lose
// acknowledged writes (counter, set, list-append). "txn" stands for bank, list-append
// and cross-slot together.
//
// Checker names are the aspect alone ("linearizable", "counter", "set",
// "bank", "list-append", "cross-slot", "perf", "rto", "rpo"). When several
// workloads share a run, call ForWorkload once per workload with
// opts.Name = the workload (names become "<workload>/<aspect>") and
// opts.KeyPrefix = that workload's key prefix.
func ForWorkload(name string, opts Options) ([]Checker, error) {
	prefix := ""
	if opts.Name != "" {
		prefix = opts.Name + "/"
	}
	with := func(aspect string) Options {
		o := opts
		o.Name = prefix + aspect
		return o
	}
	var cs []Checker
	switch name {
	case "register":
		cs = append(cs, Linearizable(with("linearizable")))
	case "counter":
		o := with("rpo")
		o.Kind = "counter"
		cs = append(cs, Counter(with("counter")), RPO(o))
	case "set":
		o := with("rpo")
		o.Kind = "set"
		cs = append(cs, Set(with("set")), RPO(o))
	case "bank":
		cs = append(cs, Bank(opts.Total, with("bank")))
	case "list-append":
		o := with("rpo")
		o.Kind = "list-append"
		cs = append(cs, ListAppend(with("list-append")), RPO(o))
	case "cross-slot":
		cs = append(cs, CrossSlot(with("cross-slot")))
	case "txn":
		o := with("rpo")
		o.Kind = "list-append"
		cs = append(cs, Bank(opts.Total, with("bank")), ListAppend(with("list-append")), CrossSlot(with("cross-slot")), RPO(o))
	default:
		return nil, fmt.Errorf("unknown workload %q: want one of %s", name, strings.Join(Workloads, ", "))
	}
	cs = append(cs, Perf(with("perf")), RTO(with("rto")))
	return cs, nil
}
