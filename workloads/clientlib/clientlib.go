// Package clientlib puts a client library under test (--client): go-redis
// and rueidis in process, any other language through the JSON-lines
// protocol of PROTOCOL.md (redis-py and node-redis adapters ship here).
// Each op of a workload is one command (workloads.LibCommand) that the
// library routes, redirects and retries as it does for an application;
// the completion says what the library reported, plus what redline could
// see of what it did inside (its sends, the node, a replica read).
package clientlib

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"strings"
	"time"

	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/workloads"
)

// Own is the name of redline's own exactly-once client, the default.
const Own = "redline"

// Options are what every library is opened with.
type Options struct {
	Seeds []string
	// Timeout is the run's --op-timeout: the library's dial, read and
	// write timeouts (its own option names differ).
	Timeout time.Duration
	// Concurrency is the number of workers that call at once.
	Concurrency int
	Username    string
	Password    string
	TLSConfig   *tls.Config
	// Log receives an adapter process's stderr (nil: discarded).
	Log io.Writer
}

// Info describes the client under test for config.json, the report and
// the suite tables.
type Info struct {
	Name    string `json:"name"`    // as given to --client
	Library string `json:"library"` // e.g. github.com/redis/go-redis/v9
	Version string `json:"version"`
	// Options are the library options redline set (beyond seeds,
	// credentials and timeouts).
	Options string `json:"options,omitempty"`
	// Retries says what the library sends again on its own: the retries
	// that can apply a write twice are named here.
	Retries string `json:"retries"`
	// ReplicaReads: reads may be served by replicas (judged as reads
	// that may be stale).
	ReplicaReads bool `json:"replica_reads,omitempty"`
	// Sees says what redline can observe of the library's inside: its
	// sends per op, the serving node.
	Sees string `json:"sees,omitempty"`
}

// OwnInfo describes redline's own client, the default.
func OwnInfo() Info {
	return Info{Name: Own, Library: "redline workloads/client over go-redis node connections",
		Version: "go-redis " + moduleVersion("github.com/redis/go-redis/v9", "v9"),
		Retries: "none: every command is sent once; MOVED and ASK are followed (they did not run) and counted; a WAIT goes on the write's connection",
		Sees:    "everything: it is redline's own routing"}
}

// Client is an open client library.
type Client interface {
	workloads.Client
	Info() Info
	// Close ends the library (and its process); the error reports a
	// broken protocol or a crashed adapter, which makes the run's
	// history untrustworthy.
	Close() error
}

// backend runs one command its library's way.
type backend interface {
	do(ctx context.Context, op workloads.LibOp, w workloads.Workload, inv history.Op) workloads.LibReply
	info() Info
	close() error
}

// libClient adapts a backend to workloads.Client.
type libClient struct{ b backend }

func (c libClient) Info() Info   { return c.b.info() }
func (c libClient) Close() error { return c.b.close() }

func (c libClient) Invoke(ctx context.Context, w workloads.Workload, inv history.Op) history.Op {
	op, err := workloads.LibCommand(w, inv)
	if err != nil {
		// Never sent: a certain failure, with the reason.
		return workloads.LibCompletion(w, inv, workloads.LibReply{Type: history.Fail, Error: err.Error()})
	}
	return workloads.LibCompletion(w, inv, c.b.do(ctx, op, w, inv))
}

// spec is one name --client accepts.
type spec struct {
	name  string
	about string
	open  func(ctx context.Context, name string, o Options) (backend, error)
}

var specs = []spec{
	{"go-redis", "go-redis v9 ClusterClient with its defaults (MaxRedirects 3: resends after timeouts and connection errors)", openGoRedis},
	{"go-redis-noretry", "go-redis v9 ClusterClient with MaxRedirects -1: every command sent once, MOVED/ASK not followed", openGoRedis},
	{"go-redis:readonly", "go-redis defaults plus ReadOnly: reads served by replicas", openGoRedis},
	{"go-redis:route-by-latency", "go-redis defaults plus RouteByLatency: reads to the closest node, replicas included", openGoRedis},
	{"go-redis:route-randomly", "go-redis defaults plus RouteRandomly: reads to a random node of the shard", openGoRedis},
	{"rueidis", "rueidis cluster client with its defaults: auto-pipelining, client-side caching off", openRueidis},
	{"rueidis:cache", "rueidis with client-side caching on: reads through DoCache (RESP3 CLIENT TRACKING)", openRueidis},
	{"rueidis:nopipe", "rueidis with DisableAutoPipelining: a pooled connection per command", openRueidis},
	{"redis-py", "redis-py's RedisCluster (Debian's python3-redis) through the bundled adapter", openRedisPy},
	{"node-redis", "node-redis's createCluster (Debian's node-redis) through the bundled adapter", openNodeRedis},
}

// ExecPrefix starts a --client that names a command speaking PROTOCOL.md.
const ExecPrefix = "exec:"

// Names lists the accepted --client values (exec:CMD as a pattern).
func Names() []string {
	out := []string{Own}
	for _, s := range specs {
		out = append(out, s.name)
	}
	return append(out, ExecPrefix+"CMD")
}

// Describe lists every accepted name with what it is, for --client list.
func Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-26s %s\n", Own, "redline's own client: every command sent once, MOVED/ASK followed and counted, WAIT on the write's connection")
	for _, s := range specs {
		fmt.Fprintf(&b, "%-26s %s\n", s.name, s.about)
	}
	fmt.Fprintf(&b, "%-26s %s\n", ExecPrefix+"CMD", "a client process speaking the JSON-lines protocol (workloads/clientlib/PROTOCOL.md)")
	return b.String()
}

// Validate checks a --client value without opening anything.
func Validate(name string) error {
	if name == "" || name == Own {
		return nil
	}
	if strings.HasPrefix(name, ExecPrefix) {
		if strings.TrimSpace(strings.TrimPrefix(name, ExecPrefix)) == "" {
			return errors.New("exec: needs a command, e.g. exec:'python3 my_adapter.py'")
		}
		return nil
	}
	for _, s := range specs {
		if s.name == name {
			return nil
		}
	}
	return fmt.Errorf("unknown client %q: choose from %s", name, strings.Join(Names(), ", "))
}

// Open starts the named library (never Own: the runner has that client).
func Open(ctx context.Context, name string, o Options) (Client, error) {
	if err := Validate(name); err != nil {
		return nil, err
	}
	if name == "" || name == Own {
		return nil, errors.New("clientlib: redline's own client is not a library to open")
	}
	if o.Timeout <= 0 {
		o.Timeout = time.Second
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 1
	}
	if strings.HasPrefix(name, ExecPrefix) {
		b, err := openExec(ctx, name, strings.TrimSpace(strings.TrimPrefix(name, ExecPrefix)), nil, o)
		if err != nil {
			return nil, err
		}
		return libClient{b}, nil
	}
	for _, s := range specs {
		if s.name == name {
			b, err := s.open(ctx, name, o)
			if err != nil {
				return nil, fmt.Errorf("client %s: %w", name, err)
			}
			return libClient{b}, nil
		}
	}
	return nil, fmt.Errorf("unknown client %q", name)
}

// moduleVersion is the version of a Go module linked into this binary,
// or fallback when the binary carries no build information of it.
func moduleVersion(path, fallback string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return fallback
	}
	for _, d := range bi.Deps {
		if d.Path == path {
			if d.Replace != nil {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	return fallback
}

// sends sums up the attempts a library made for one op.
type sends struct {
	nodes    []string
	outcomes []history.Type // per attempt: ok, fail (a reply that says it did not run), info (unknown)
	moved    int
}

// reply fills the attempt figures of r: Attempts when more than one,
// Resent (sends after an attempt of unknown outcome), Redirects, the last
// node. A definite error after an attempt of unknown outcome leaves the
// op unknown: the earlier attempt may have applied it, whatever the
// library's last word was (which stays the error text).
func (s *sends) reply(r *workloads.LibReply) {
	n := len(s.outcomes)
	if n == 0 {
		return
	}
	if n > 1 {
		r.Attempts = n
	}
	for i := 1; i < n; i++ {
		if s.outcomes[i-1] == history.Info {
			r.Resent++
		}
	}
	r.Redirects = s.moved
	r.Node = s.nodes[n-1]
	if r.Type == history.Fail {
		for _, o := range s.outcomes {
			if o == history.Info {
				r.Type = history.Info
				r.Error += " (after an earlier attempt of unknown outcome)"
				break
			}
		}
	}
}

// isDial reports a connection that was never made: nothing was sent.
func isDial(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
