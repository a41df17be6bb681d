package clientlib

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/workloads"
	"github.com/redline-dev/redline/workloads/client"
)

// goRedis is go-redis v9's ClusterClient. A hook on every node client it
// creates sees each send of an op's command: go-redis's own retries and
// redirects happen between node clients, so the history counts them
// although the caller sees one result.
type goRedis struct {
	cc        *redis.ClusterClient
	meta      Info
	replicas  bool
	closeOnce sync.Once
}

func openGoRedis(ctx context.Context, name string, o Options) (backend, error) {
	opt := &redis.ClusterOptions{
		Addrs:        o.Seeds,
		Username:     o.Username,
		Password:     o.Password,
		TLSConfig:    o.TLSConfig,
		DialTimeout:  o.Timeout,
		ReadTimeout:  o.Timeout,
		WriteTimeout: o.Timeout,
		// Redis 7.0 knows neither CLIENT SETINFO nor maintenance
		// notifications; neither changes what a command does.
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	}
	var set []string
	retries := "MaxRedirects 3 (the default): up to 4 sends of a command; after a timeout or a connection error " +
		"(EOF, reset) it sends the command again, first to the same node, then to another: a write whose reply was lost " +
		"may apply twice. It also resends on CLUSTERDOWN, TRYAGAIN, LOADING, READONLY and follows MOVED/ASK (safe: those did not run)"
	switch name {
	case "go-redis-noretry":
		opt.MaxRedirects = -1
		set = append(set, "MaxRedirects: -1")
		retries = "none: MaxRedirects -1 sends every command once; MOVED and ASK come back as errors (fail)"
	case "go-redis:readonly":
		opt.ReadOnly = true
		set = append(set, "ReadOnly: true")
	case "go-redis:route-by-latency":
		opt.RouteByLatency = true
		set = append(set, "RouteByLatency: true")
	case "go-redis:route-randomly":
		opt.RouteRandomly = true
		set = append(set, "RouteRandomly: true")
	}
	g := &goRedis{cc: redis.NewClusterClient(opt), replicas: opt.ReadOnly || opt.RouteByLatency || opt.RouteRandomly}
	g.meta = Info{Name: name, Library: "github.com/redis/go-redis/v9", Version: "v" + redis.Version(),
		Options: strings.Join(set, ", "), Retries: retries, ReplicaReads: g.replicas,
		Sees: "every send of an op (a hook on each node client), the node that answered, replica reads"}
	g.cc.OnNewNode(func(rdb *redis.Client) { rdb.AddHook(sendHook{addr: rdb.Options().Addr}) })
	if err := g.cc.Ping(ctx).Err(); err != nil {
		g.cc.Close()
		return nil, err
	}
	return g, nil
}

func (g *goRedis) info() Info { return g.meta }

func (g *goRedis) close() error {
	g.closeOnce.Do(func() { _ = g.cc.Close() })
	return nil
}

func (g *goRedis) do(ctx context.Context, op workloads.LibOp, _ workloads.Workload, _ history.Op) workloads.LibReply {
	args := make([]any, len(op.Args))
	for i, a := range op.Args {
		args[i] = a
	}
	cmd := redis.NewCmd(ctx, args...)
	log := &sendLog{cmd: cmd}
	err := g.cc.Process(context.WithValue(ctx, sendLogKey{}, log), cmd)
	r := workloads.LibReply{Type: client.Classify(err)}
	if err != nil && err != redis.Nil {
		r.Error = client.ErrorString(err)
	} else if err == nil {
		r.Reply = normalize(cmd.Val())
	}
	log.mu.Lock()
	log.sends.reply(&r)
	log.mu.Unlock()
	if r.Type == history.OK && op.ReadOnly && g.replicas && r.Node != "" {
		// Judged by the library's own slot map: the master it would
		// write to is not the node that answered the read.
		if m, err := g.cc.MasterForKey(ctx, op.Key); err == nil && m.Options().Addr != r.Node {
			r.Replica = true
		}
	}
	return r
}

// normalize makes go-redis's reply values the workloads' plain ones.
func normalize(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out
	case map[any]struct{}: // a RESP3 set
		out := make([]any, 0, len(x))
		for e := range x {
			out = append(out, normalize(e))
		}
		return out
	}
	return v
}

type sendLogKey struct{}

// sendLog collects the sends of one op's command by every node client.
type sendLog struct {
	cmd   redis.Cmder
	mu    sync.Mutex
	sends sends
}

func (l *sendLog) add(addr string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sends.nodes = append(l.sends.nodes, addr)
	out := client.Classify(err)
	if err == redis.Nil {
		out = history.OK
	}
	if isDial(err) || errors.Is(err, redis.ErrPoolTimeout) {
		out = history.Fail
	}
	if _, ok := redis.IsMovedError(err); ok {
		l.sends.moved++
	} else if _, ok := redis.IsAskError(err); ok {
		l.sends.moved++
	}
	l.sends.outcomes = append(l.sends.outcomes, out)
}

// sendHook is installed on each node client of a ClusterClient.
type sendHook struct{ addr string }

func (h sendHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h sendHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if l, _ := ctx.Value(sendLogKey{}).(*sendLog); l != nil && l.cmd == cmd {
			l.add(h.addr, err)
		}
		return err
	}
}

// ProcessPipelineHook sees the ASKING + command pipeline of an ASK.
func (h sendHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		if l, _ := ctx.Value(sendLogKey{}).(*sendLog); l != nil {
			for _, c := range cmds {
				if c == l.cmd {
					e := c.Err()
					if e == nil && err != nil {
						e = err
					}
					l.add(h.addr, e)
				}
			}
		}
		return err
	}
}
