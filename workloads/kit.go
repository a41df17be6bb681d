package workloads

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/workloads/client"
)

// What a workload in its own folder (workloads/lock, workloads/queue,
// workloads/ttl) builds on; the workloads of this package use the
// unexported forms of the same.

// Register adds a History workload that lives in its own folder: its
// package calls it from init, and workloads/all imports the package, so
// that a new workload is its folder and one line there. A name
// registered twice is a programming error.
func Register(name string, new func(Config) Workload) {
	if _, ok := registry[name]; ok {
		panic(fmt.Sprintf("workloads: workload %q registered twice", name))
	}
	registry[name] = entry{History, new}
}

// Base is what every workload embeds: its name, its config and its key
// prefix (Name, KeyPrefix, Owns and Measures of the Workload interface).
type Base struct{ base }

// NewBase is the base of workload name built from cfg.
func NewBase(name string, cfg Config) Base { return Base{newBase(name, cfg)} }

// Config is what the workload was built from.
func (b *Base) Config() Config { return b.cfg }

// Scope is the scope of one checker of the workload: its keys, named
// after the aspect it judges.
func (b *Base) Scope(opts CheckOptions, aspect string) checker.Scope { return b.aspect(opts, aspect) }

// WithMeasures appends perf, rto and the other measures to the
// workload's own checkers: what Checkers returns.
func (b *Base) WithMeasures(opts CheckOptions, own ...checker.Checker) []checker.Checker {
	return b.checkers(opts, own...)
}

// Placement gives each key index of a workload a hash tag chosen by slot,
// so that key i lives on primary i mod P (see placement).
type Placement struct{ p placement }

// NewPlacement is a placement whose tags start with stem.
func NewPlacement(stem string) *Placement { return &Placement{placement{name: stem}} }

// Place sets the client's slot map and the number of keys, and places
// them; Tag is key i's hash tag, with its braces.
func (p *Placement) Place(c *client.Client, n int) error { return p.p.place(c, n) }
func (p *Placement) Tag(i int) string                    { return p.p.tag(0, i) }

// KeyCount is the number of keys to use: the one configured, else the
// workload's default raised to one per primary.
func KeyCount(configured, def, primaries int) int { return keyCount(configured, def, primaries) }

// Seeded gives a worker's random source: same seed and worker, same
// stream.
func Seeded(seed int64, worker int) *rand.Rand { return seeded(seed, worker) }

// Complete fills a completion from a client result.
func Complete(inv history.Op, r client.Result) history.Op { return complete(inv, r) }

// Write runs a write op (the commands build returns) with the configured
// WAIT and returns its completion, carrying the invocation's value.
func Write(ctx context.Context, c Conn, cfg Config, inv history.Op, build func(ctx context.Context) []redis.Cmder) (history.Op, client.Result) {
	return write(ctx, c, cfg, inv, build)
}

// EvalScript runs a script by its SHA and, on NOSCRIPT, by its source
// (see evalScript).
func EvalScript(ctx context.Context, c Conn, cfg Config, inv history.Op, s *redis.Script, src string, keys []string, args ...any) (history.Op, *redis.Cmd) {
	return evalScript(ctx, c, cfg, inv, s, src, keys, args...)
}

// ScriptOutcome reads the reply of a script that answers 1 (done) or 0
// (refused: fail with refusal); any other reply is kept raw.
func ScriptOutcome(out *history.Op, cmd *redis.Cmd, refusal string) { scriptOutcome(out, cmd, refusal) }

// UnknownOp completes an op the workload does not know.
func UnknownOp(inv history.Op, why string) history.Op { return unknownOp(inv, why) }

// ReplyInt reads an integer reply (int64, or a JSON number from a client
// library's adapter process).
func ReplyInt(v any) (int64, bool) { return replyInt(v) }
