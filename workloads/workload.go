// Package workloads drives Redis with client operations and records them.
// A workload generates invocations (per worker, from a seed, so a seed
// replays the same sequence), executes one against the cluster through
// workloads/client, and brings the checkers its history wants, as a Jepsen
// workload brings client, generator and checker together. The registry
// below is the one list of workloads, and each entry's Kind says which of
// a run's two traffic drivers carries it: History workloads (register,
// counter, set, txn, script here; lock, queue, ttl in their own folders,
// registered by workloads/all) are Workload values driven by the history
// workers and judged by their checkers; the Load workload kv (workloads/kv:
// its config and generator) is driven by the load driver, harness/bench,
// and only measured.
package workloads

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/workloads/client"
)

// Config is what every workload is built from.
type Config struct {
	// Prefix starts every key this run writes, so runs never touch each
	// other's data (or a user's) on a shared cluster.
	Prefix string
	// Keys is the number of keys; 0 picks the workload's default.
	Keys int
	// Wait > 0 sends WAIT Wait WaitTimeout after each write on the same
	// connection and records the replica count it returned.
	Wait        int
	WaitTimeout time.Duration
}

// Validate checks what every workload is built from; the words name the
// flags that set it.
func (c Config) Validate() error {
	switch {
	case c.Keys < 0:
		return errors.New("--keys must not be negative")
	case c.Wait < 0:
		return errors.New("--wait must not be negative")
	case c.WaitTimeout < 0:
		return errors.New("--wait-timeout must not be negative")
	}
	return nil
}

// Workload is one kind of traffic.
type Workload interface {
	Name() string
	// Setup prepares keys before traffic starts (e.g. initial balances).
	Setup(ctx context.Context, c *client.Client) error
	// Generator returns the op source of one worker.
	Generator(worker int, seed int64) Generator
	// Invoke executes an invocation through c and returns its completion:
	// Type, and where they apply Value, Error, Node, Redirects and Wait.
	// The runner pairs it with inv (process, f and key).
	Invoke(ctx context.Context, c Conn, inv history.Op) history.Op
	// InitOps are invocations run, and recorded, before traffic starts,
	// each retried until it succeeds (e.g. initial bank balances).
	InitOps() []history.Op
	// FinalOps are invocations run once the cluster has healed.
	FinalOps() []history.Op
	// Owns reports whether a client op belongs to this workload (by key).
	Owns(op *history.Op) bool
	// KeyPrefix starts every key of this workload (see keyPrefix).
	KeyPrefix() string
	// Checkers judge and measure this workload's part of a history: its
	// correctness checkers, then perf and rto. opts.Name, when set, names
	// them "<opts.Name>/<aspect>" (several workloads in one run).
	Checkers(opts CheckOptions) []checker.Checker
	// Measures are only perf and rto, for load tests.
	Measures(opts CheckOptions) []checker.Checker
}

// CheckOptions are what a run tunes of its workloads' checkers; each
// workload turns them into the options of the checkers it brings (each
// checker's own type: checker.Scope, checker.LinearizableOptions ...).
type CheckOptions struct {
	// Name, when set, names the checkers "<Name>/<aspect>" (several
	// workloads in one run).
	Name string
	// Timeout bounds the linearizability search [60s].
	Timeout time.Duration
	// Replicas is how many replicas each primary had when the run made
	// the cluster (0: not known, an existing cluster): the WAIT probe
	// judges a write only when it probed all of them.
	Replicas int
}

// Conn is what Invoke needs of the cluster: *client.Client implements it,
// and tests complete ops through fakes (perfectly or not) without a
// cluster.
type Conn interface {
	// Do sends one request once, routed by its slot.
	Do(ctx context.Context, req client.Request) client.Result
	// PrimaryClient and NoteError serve the flows of several round trips
	// (WATCH ... MULTI ... EXEC) that follow no redirect.
	PrimaryClient(slot int) (string, *redis.Client)
	NoteError(slot int, err error)
}

var _ Conn = (*client.Client)(nil)

// base is what every workload shares: its name, its config and its key
// prefix, built in one place.
type base struct {
	name   string
	cfg    Config
	prefix string
}

func newBase(name string, cfg Config) base {
	return base{name: name, cfg: cfg, prefix: keyPrefix(cfg.Prefix, name)}
}

// keyPrefix is the prefix of a workload's keys in a run: the run's prefix,
// the workload's name and a colon. The checkers filter by it.
func keyPrefix(run, workload string) string { return run + workload + ":" }

func (b *base) Name() string             { return b.name }
func (b *base) KeyPrefix() string        { return b.prefix }
func (b *base) Owns(op *history.Op) bool { return strings.HasPrefix(op.Key, b.prefix) }

// aspect gives the scope of one checker of the workload: filtered by its
// key prefix, named after the aspect.
func (b *base) aspect(opts CheckOptions, name string) checker.Scope {
	s := checker.Scope{KeyPrefix: b.prefix, Name: name}
	if opts.Name != "" {
		s.Name = opts.Name + "/" + name
	}
	return s
}

// checkers appends perf and rto to a workload's own checkers.
func (b *base) checkers(opts CheckOptions, own ...checker.Checker) []checker.Checker {
	return append(own, b.Measures(opts)...)
}

// Measures are the checkers that only measure (perf, rto, write-pause),
// plus handoff (keys on both or neither side after a slot move, valid
// when no move happened): what a load test (bench) wants of any workload.
func (b *base) Measures(opts CheckOptions) []checker.Checker {
	return []checker.Checker{checker.Perf(checker.PerfOptions{Scope: b.aspect(opts, "perf")}), checker.RTO(b.aspect(opts, "rto")),
		checker.WritePause(b.aspect(opts, "write-pause")), checker.Handoff(b.aspect(opts, "handoff"))}
}

// rpo is the RPO checker of a workload whose losses are of kind.
func (b *base) rpo(opts CheckOptions, kind string) checker.Checker {
	return checker.RPO(checker.RPOOptions{Scope: b.aspect(opts, "rpo"), Kind: kind})
}

// defaultFailover judges a workload's losses of kind by the mode of the
// failover that lost them: only a default CLUSTER FAILOVER promises none.
func (b *base) defaultFailover(opts CheckOptions, kind string) checker.Checker {
	return checker.DefaultFailover(checker.RPOOptions{Scope: b.aspect(opts, "default-failover"), Kind: kind})
}

// Checkers builds a workload's checkers from a run's config alone (no
// cluster), as `redline check` does on a stored run. A Load workload has
// none: the load driver measures it as it runs (bench.json).
func Checkers(name string, cfg Config, opts CheckOptions, measureOnly bool) ([]checker.Checker, error) {
	if k, err := KindOf(name); err != nil || k == Load {
		return nil, err
	}
	w, err := New(name, cfg)
	if err != nil {
		return nil, err
	}
	if measureOnly {
		return w.Measures(opts), nil
	}
	return w.Checkers(opts), nil
}

// Generator yields invocations: F, Key and Value set, the rest is filled by
// the recorder.
type Generator interface {
	Next() history.Op
}

type factory func(cfg Config) Workload

// Kind says which traffic driver carries a workload.
type Kind int

const (
	// History: the history driver (harness's workers) runs the workload's
	// Generator and Invoke, records every op in the history and the
	// workload's checkers judge it.
	History Kind = iota
	// Load: the load driver (harness/bench) runs it open or closed loop
	// from its own config and generator, measures it in per-second
	// histograms, records no history and checks nothing (`redline bench`).
	Load
)

func (k Kind) String() string {
	if k == Load {
		return "load"
	}
	return "history"
}

// entry is one registered workload: its kind and, for History, how to
// build it.
type entry struct {
	kind Kind
	new  factory // nil for Load: the load driver builds its own generator
}

// registry is every workload: those of this package here, and those in
// their own folder (workloads/lock ...) added by Register when
// workloads/all imports them.
var registry = map[string]entry{
	"register": {History, newRegister},
	"counter":  {History, newCounter},
	"set":      {History, newSet},
	"txn":      {History, newTxn},
	"script":   {History, newScript},
	"kv":       {Load, nil}, // workloads/kv: kv.Config, kv.Config.NewGen
}

// KindOf says which driver carries the named workload.
func KindOf(name string) (Kind, error) {
	e, ok := registry[name]
	if !ok {
		return 0, unknown(name)
	}
	return e.kind, nil
}

func unknown(name string) error {
	return fmt.Errorf("unknown workload %q: choose from %s", name, strings.Join(Names(), ", "))
}

// Names lists the workloads redline knows, of both kinds.
func Names() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// NamesOf lists the workloads of one kind.
func NamesOf(k Kind) []string {
	var names []string
	for _, n := range Names() {
		if registry[n].kind == k {
			names = append(names, n)
		}
	}
	return names
}

// New builds a History workload by name; a Load workload is no Workload
// value (the load driver builds it from its own config).
func New(name string, cfg Config) (Workload, error) {
	e, ok := registry[name]
	if !ok {
		return nil, unknown(name)
	}
	if e.kind != History {
		return nil, fmt.Errorf("workload %s is a %s workload: the load driver runs it ('redline bench --workload %s'), not the history workers", name, e.kind, name)
	}
	return e.new(cfg), nil
}

// seeded gives a worker's random source: same seed and worker, same stream.
func seeded(seed int64, worker int) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), uint64(worker)*0x9E3779B97F4A7C15+1))
}

// complete fills a completion from a client result.
func complete(inv history.Op, r client.Result) history.Op {
	out := history.Op{Node: r.Node}
	out.SetRedirects(r.Redirects)
	out.Type = r.Outcome
	if r.Outcome != history.OK {
		out.SetError(client.ErrorString(r.Err))
		out.Value = inv.Value
	}
	return out
}

// waitOf reads the WAIT appended to a write, if any.
func waitOf(want int, r client.Result) *history.Wait {
	if want <= 0 || r.Outcome != history.OK || len(r.Cmds) == 0 {
		return nil
	}
	w := &history.Wait{Want: want, Acked: -1}
	last := r.Cmds[len(r.Cmds)-1]
	if ic, ok := last.(interface{ Result() (int64, error) }); ok && last.Name() == "wait" {
		if n, err := ic.Result(); err == nil {
			w.Acked = int(n)
		}
	}
	return w
}

// raiseTo lifts *a to v if v is larger (the newest key generation in use).
func raiseTo(a *atomic.Int64, v int64) {
	for {
		cur := a.Load()
		if v <= cur || a.CompareAndSwap(cur, v) {
			return
		}
	}
}

// write runs a write op (the commands Build returns) with the configured
// WAIT and returns its completion, carrying the invocation's value.
func write(ctx context.Context, c Conn, cfg Config, inv history.Op, build func(ctx context.Context) []redis.Cmder) (history.Op, client.Result) {
	return writeProbed(ctx, c, cfg, inv, build, nil, nil)
}

// writeProbed is write with a WAIT probe (client.Request.Probe): when WAIT
// answers 1 or more, probe's read goes to every replica of the node that
// took the write, and the replies are recorded with the WAIT, beside the
// write's own reply (reply, when set) they are judged against.
func writeProbed(ctx context.Context, c Conn, cfg Config, inv history.Op, build func(ctx context.Context) []redis.Cmder,
	probe func(ctx context.Context) redis.Cmder, reply func() string) (history.Op, client.Result) {
	req := client.Request{Slot: Keyslot(inv.Key), Wait: cfg.Wait, WaitTimeout: cfg.WaitTimeout, Build: build}
	if cfg.Wait > 0 {
		req.Probe = probe
	}
	r := c.Do(ctx, req)
	out := complete(inv, r)
	out.Value = inv.Value
	w := waitOf(cfg.Wait, r)
	if w != nil && len(r.Probes) > 0 {
		if reply != nil {
			w.Reply = reply()
		}
		for _, p := range r.Probes {
			wp := history.WaitProbe{Node: p.Node}
			switch err := p.Cmd.Err(); {
			case err == redis.Nil:
			case err != nil:
				wp.Error = client.ErrorString(err)
			default:
				v := fmt.Sprint(probeReply(p.Cmd))
				wp.Value = &v
			}
			w.Probes = append(w.Probes, wp)
		}
	}
	out.SetWait(w)
	return out, r
}

// probeReply is a probe command's reply value.
func probeReply(cmd redis.Cmder) any {
	if v, ok := cmd.(interface{ Val() string }); ok {
		return v.Val()
	}
	if v, ok := cmd.(interface{ Val() int64 }); ok {
		return v.Val()
	}
	if v, ok := cmd.(interface{ Val() bool }); ok {
		if v.Val() {
			return 1
		}
		return 0
	}
	return fmt.Sprint(cmd.Args()...)
}

// evalScript runs a script by its SHA and, on NOSCRIPT (a node that never
// saw it, e.g. one that joined later), by its source. NOSCRIPT means the
// first attempt did not run, so the script still runs at most once.
func evalScript(ctx context.Context, c Conn, cfg Config, inv history.Op, s *redis.Script, src string, keys []string, args ...any) (history.Op, *redis.Cmd) {
	var cmd *redis.Cmd
	call := func(verb, body string) func(ctx context.Context) []redis.Cmder {
		return func(ctx context.Context) []redis.Cmder {
			a := []any{verb, body, len(keys)}
			for _, k := range keys {
				a = append(a, k)
			}
			cmd = redis.NewCmd(ctx, append(a, args...)...)
			return []redis.Cmder{cmd}
		}
	}
	out, r := write(ctx, c, cfg, inv, call("evalsha", s.Hash()))
	if r.Outcome == history.Fail && redis.HasErrorPrefix(r.Err, "NOSCRIPT") {
		out, _ = write(ctx, c, cfg, inv, call("eval", src))
	}
	return out, cmd
}

// scriptOutcome reads the reply of a script that answers 1 (done) or 0
// (refused: the op certainly did nothing, recorded as fail with refusal).
// Any other reply is garbage: the op ran, so it stays ok, and the raw reply
// replaces its value as a JSON string for the checkers to flag.
func scriptOutcome(out *history.Op, cmd *redis.Cmd, refusal string) {
	if out.Type != history.OK {
		return
	}
	switch n, err := cmd.Int64(); {
	case err == nil && n == 1:
	case err == nil && n == 0:
		out.Type = history.Fail
		out.SetError(refusal)
	default:
		out.SetValue(fmt.Sprint(cmd.Val()))
	}
}

// unknownOp completes an op this workload does not know.
func unknownOp(inv history.Op, why string) history.Op {
	return history.Op{Type: history.Fail, Value: inv.Value, Ext: history.NewExt(history.Ext{Error: why})}
}
