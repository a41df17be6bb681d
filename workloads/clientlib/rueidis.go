package clientlib

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/rueidis"

	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/workloads"
)

// rueidisClient is rueidis's cluster client. rueidis offers no hook on
// its node connections: redline sees its final result only, not its sends
// nor the node that answered.
type rueidisClient struct {
	c         rueidis.Client
	meta      Info
	cache     bool
	timeout   time.Duration
	closeOnce sync.Once
}

// rueidisVersion is go.mod's version of rueidis, for binaries without
// build information (a test checks the two agree).
const rueidisVersion = "v1.0.79"

// cacheTTL bounds how long rueidis may serve a read from its local cache
// (it also drops entries the server invalidates).
const cacheTTL = time.Minute

func openRueidis(ctx context.Context, name string, o Options) (backend, error) {
	opt := rueidis.ClientOption{
		InitAddress:      o.Seeds,
		Username:         o.Username,
		Password:         o.Password,
		TLSConfig:        o.TLSConfig,
		Dialer:           net.Dialer{Timeout: o.Timeout},
		ConnWriteTimeout: o.Timeout,
		DisableCache:     true,
		// Redis 7.0 has no CLIENT SETINFO; it changes nothing a command does.
		ClientSetInfo: rueidis.DisableClientSetInfo,
	}
	var set []string
	r := &rueidisClient{timeout: o.Timeout}
	switch name {
	case "rueidis:cache":
		opt.DisableCache = false
		r.cache = true
		set = append(set, "client-side caching on (DoCache, TTL "+cacheTTL.String()+")")
	case "rueidis:nopipe":
		opt.DisableAutoPipelining = true
		set = append(set, "DisableAutoPipelining: true")
	}
	c, err := rueidis.NewClient(opt)
	if err != nil {
		return nil, err
	}
	r.c = c
	r.meta = Info{Name: name, Library: "github.com/redis/rueidis", Version: moduleVersion("github.com/redis/rueidis", rueidisVersion),
		Options: strings.Join(set, ", "),
		Retries: "follows MOVED/ASK; resends read-only commands after network errors, CLUSTERDOWN, TRYAGAIN and LOADING; " +
			"never resends a write (writes are not marked retryable): a write is applied at most once",
		Sees: "the final result only (no hook on its connections): neither its sends nor the node",
	}
	if r.cache {
		r.meta.Retries += "; cached reads are answered locally until the server invalidates them"
	}
	return r, nil
}

func (r *rueidisClient) info() Info { return r.meta }

func (r *rueidisClient) close() error {
	r.closeOnce.Do(r.c.Close)
	return nil
}

func (r *rueidisClient) do(ctx context.Context, op workloads.LibOp, _ workloads.Workload, _ history.Op) workloads.LibReply {
	// rueidis bounds a command by its context: the op timeout, as a
	// service sets a deadline per request.
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	var res rueidis.RedisResult
	switch {
	case r.cache && op.ReadOnly && op.Args[0] == "GET":
		res = r.c.DoCache(ctx, r.c.B().Get().Key(op.Key).Cache(), cacheTTL)
	case r.cache && op.ReadOnly && op.Args[0] == "SMEMBERS":
		res = r.c.DoCache(ctx, r.c.B().Smembers().Key(op.Key).Cache(), cacheTTL)
	default:
		ki := slices.Index(op.Args[1:], op.Key) + 1
		b := r.c.B().Arbitrary(op.Args[:ki]...).Keys(op.Key).Args(op.Args[ki+1:]...)
		if op.ReadOnly {
			res = r.c.Do(ctx, b.ReadOnly())
		} else {
			res = r.c.Do(ctx, b.Build())
		}
	}
	v, err := res.ToAny()
	switch {
	case err == nil:
		return workloads.LibReply{Type: history.OK, Reply: plain(v)}
	case rueidis.IsRedisNil(err):
		return workloads.LibReply{Type: history.OK}
	}
	rep := workloads.LibReply{Type: history.Info, Error: errText(err)}
	if _, ok := rueidis.IsRedisErr(err); ok {
		rep.Type = history.Fail // an error reply: the command did not run
	} else if isDial(err) || errors.Is(err, rueidis.ErrClosing) {
		rep.Type = history.Fail // never sent
	}
	return rep
}

// plain turns rueidis's values into the workloads' plain ones.
func plain(v any) any {
	if l, ok := v.([]any); ok {
		out := make([]any, len(l))
		for i, e := range l {
			out[i] = plain(e)
		}
		return out
	}
	return v
}

func errText(err error) string {
	s := err.Error()
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}
