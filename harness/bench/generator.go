package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/workloads/kv"
)

// A distributed load run (`bench --generators N`) is N generators, each a
// `redline bench-generator` process (a pod of a Job, a container, a local
// process), each open loop at its share of the rate against the same
// cluster from one coordinated start. A generator streams its report on
// stdout, one line a second, as it measures:
//
//	redline-generator/1 <crc32 of the JSON, 8 hex digits> <JSON>
//
// a header (who it is, its clock against the cluster's, the shards it
// saw), one line per measured second (the second's counters and its HDR
// histograms, HdrHistogram's compressed encoding), and an end line with
// the run's totals and whole-run histograms. The coordinator (merge.go)
// checks each report before it merges anything: every line's checksum,
// the seconds in order, the totals equal to the sum of the seconds and
// the whole-run histograms equal to the merge of the seconds'; a report
// without its end (the generator died, its log was cut) or with a line
// that fails a check is named, never merged. Lines without the marker
// (the generator's log, where a runtime mixes stderr into stdout, as
// Kubernetes' pod logs do) are not the report's.

// GeneratorMarker starts every line of a generator's report.
const GeneratorMarker = "redline-generator/1"

// GeneratorConfig is what one generator runs: its share of the load,
// passed on its command line as JSON by the coordinator.
type GeneratorConfig struct {
	// Index is the generator's number, 1..Of. The coordinator writes one
	// config for all (Index 0); each generator learns its own from its
	// command line (--index) or, as a pod of an Indexed Job, from
	// JOB_COMPLETION_INDEX.
	Index int `json:"index"`
	Of    int `json:"of"`
	// Seeds are the cluster's node addresses.
	Seeds []string  `json:"seeds"`
	KV    kv.Config `json:"kv"`
	// Rate is this generator's share of the total rate (ops/s).
	Rate        float64 `json:"rate"`
	Concurrency int     `json:"concurrency"`
	// DurationNs is the traffic's length, the warm-up included.
	DurationNs  int64 `json:"duration_ns"`
	WarmupNs    int64 `json:"warmup_ns"`
	OpTimeoutNs int64 `json:"op_timeout_ns"`
	Seed        int64 `json:"seed"`
	// StartAtNs is when traffic starts, in Unix ns of the cluster's clock
	// (its TIME, as read from ClockNode): every generator reads the same
	// clock, so the starts agree however the pods' own clocks differ.
	StartAtNs int64  `json:"start_at_ns"`
	ClockNode string `json:"clock_node"`
}

// Validate checks a generator's config before anything starts.
func (c *GeneratorConfig) Validate() error {
	switch {
	case c.Of < 1 || c.Index < 1 || c.Index > c.Of:
		return fmt.Errorf("generator %d of %d: the index runs from 1 to the number of generators", c.Index, c.Of)
	case len(c.Seeds) == 0:
		return fmt.Errorf("generator %d: no cluster node addresses (seeds)", c.Index)
	case c.Rate <= 0:
		return fmt.Errorf("generator %d: rate %g: a generator runs open loop at a positive rate", c.Index, c.Rate)
	case c.Concurrency < 1 || c.DurationNs <= 0 || c.OpTimeoutNs <= 0 || c.WarmupNs < 0 || c.WarmupNs >= c.DurationNs:
		return fmt.Errorf("generator %d: concurrency, duration and op timeout must be positive, the warm-up shorter than the duration", c.Index)
	case c.StartAtNs <= 0 || c.ClockNode == "":
		return fmt.Errorf("generator %d: no coordinated start (start_at_ns and clock_node)", c.Index)
	}
	return c.KV.Validate()
}

// genHeader is a report's first line.
type genHeader struct {
	Type  string `json:"type"` // "header"
	Index int    `json:"index"`
	Of    int    `json:"of"`
	Host  string `json:"host"`
	// Rate is this generator's share.
	Rate  float64 `json:"rate"`
	Cores int     `json:"cores"`
	// StartAtNs is the coordinated start; StartedNs when this generator's
	// traffic began, both in the cluster's clock. ClockOffsetNs is the
	// cluster's clock minus this host's, read with a round trip of
	// ClockRTTNs (the offset is known to half of it).
	StartAtNs     int64 `json:"start_at_ns"`
	StartedNs     int64 `json:"started_ns"`
	ClockOffsetNs int64 `json:"clock_offset_ns"`
	ClockRTTNs    int64 `json:"clock_rtt_ns"`
	// Shards are the shards' primaries at the start, by address, in the
	// generator's shard order (per-second shard figures follow it).
	Shards []string `json:"shards"`
}

// genSecond is one measured second.
type genSecond struct {
	Type   string            `json:"type"` // "second"
	Second int               `json:"second"`
	AtNs   int64             `json:"at_ns"`
	LenNs  int64             `json:"len_ns"`
	Counts Counts            `json:"counts"`
	Hist   map[string][]byte `json:"hist,omitempty"` // by histKey, compressed
	CPU    float64           `json:"cpu"`
	// Per shard, in the header's order.
	ShardOK      []int64 `json:"shard_ok"`
	ShardBacklog []int64 `json:"shard_backlog"`
	ShardLagNs   []int64 `json:"shard_lag_ns"`
}

// genEnd is a report's last line.
type genEnd struct {
	Type string `json:"type"` // "end"
	// Error is why the generator measured nothing (the cluster could not
	// be reached, ...): the report has no seconds then.
	Error     string            `json:"error,omitempty"`
	Seconds   int               `json:"seconds"`
	ElapsedNs int64             `json:"elapsed_ns"`
	WarmedNs  int64             `json:"warmed_ns"`
	Counts    Counts            `json:"counts"`
	Hist      map[string][]byte `json:"hist,omitempty"`
	// ShardHist is each shard's corrected latency over the run.
	ShardHist [][]byte `json:"shard_hist,omitempty"`
	// Gaps are the generator's availability gaps (ms of the run), all of
	// them unless GapsCapped.
	Gaps       []Gap `json:"gaps,omitempty"`
	GapsCapped bool  `json:"gaps_capped,omitempty"`
	Unsent     int64 `json:"unsent"`
}

// reportWriter writes a report's lines, each with its checksum; the
// first write error sticks (the coordinator sees a torn report).
type reportWriter struct {
	mu  sync.Mutex
	w   *bufio.Writer
	err error
}

func (rw *reportWriter) line(v any) {
	b, err := json.Marshal(v)
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.err != nil {
		return
	}
	if err != nil {
		rw.err = err
		return
	}
	fmt.Fprintf(rw.w, "%s %08x %s\n", GeneratorMarker, crc32.ChecksumIEEE(b), b)
	rw.err = rw.w.Flush()
}

// RunGenerator runs one generator: it reads the cluster's clock, waits
// for the coordinated start, drives its share of the load and streams its
// report to out. Log lines go to log. An error is also written as the
// report's end line, so the coordinator can say why.
func RunGenerator(ctx context.Context, c GeneratorConfig, out io.Writer, log func(format string, args ...any)) error {
	rw := &reportWriter{w: bufio.NewWriter(out)}
	fail := func(err error) error {
		rw.line(genEnd{Type: "end", Error: err.Error()})
		return err
	}
	if err := c.Validate(); err != nil {
		return fail(err)
	}
	offset, rtt, err := ClusterClockOffset(ctx, c.ClockNode, time.Duration(c.OpTimeoutNs))
	if err != nil {
		return fail(err)
	}
	// The start in this host's clock: the cluster's start minus the offset.
	startAt := time.Unix(0, c.StartAtNs-int64(offset))
	host, _ := os.Hostname()
	var hdr genHeader
	o := Options{
		Seeds: c.Seeds, KV: c.KV, Concurrency: c.Concurrency, Rate: c.Rate,
		Duration: time.Duration(c.DurationNs), Warmup: time.Duration(c.WarmupNs), OpTimeout: time.Duration(c.OpTimeoutNs),
		// Each generator its own op stream.
		Seed: c.Seed + int64(c.Index-1)*7919, Log: log, StartAt: startAt,
	}
	o.beforeTraffic = func(shards []string, started time.Time) {
		hdr = genHeader{Type: "header", Index: c.Index, Of: c.Of, Host: host, Rate: c.Rate, Cores: runtime.GOMAXPROCS(0),
			StartAtNs: c.StartAtNs, StartedNs: started.UnixNano() + int64(offset), ClockOffsetNs: int64(offset), ClockRTTNs: int64(rtt), Shards: shards}
		rw.line(hdr)
	}
	o.onSecond = func(sec *second) { rw.line(sec.wire()) }
	res, err := Run(ctx, o)
	if err != nil {
		return fail(err)
	}
	if ctx.Err() != nil {
		return fail(fmt.Errorf("interrupted"))
	}
	end := genEnd{Type: "end", Seconds: len(res.secs), ElapsedNs: int64(res.elapsed), WarmedNs: int64(res.warmedAt),
		Counts: res.Counts, Hist: res.Histograms, Unsent: res.Unsent, Gaps: res.Gaps, GapsCapped: len(res.Gaps) >= maxGapsListed}
	for _, h := range res.shardHists {
		enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			return fail(err)
		}
		end.ShardHist = append(end.ShardHist, enc)
	}
	rw.line(end)
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return rw.err
}

// wire is the second as a report line.
func (sec *second) wire() genSecond {
	g := genSecond{Type: "second", AtNs: int64(sec.At), LenNs: int64(sec.Len), Counts: sec.C, CPU: sec.CPU, Hist: map[string][]byte{},
		ShardOK: sec.Shard.ok, ShardBacklog: sec.Shard.backlog, ShardLagNs: sec.Shard.lagNs}
	for o := range sec.H {
		for k, enc := range sec.H[o] {
			if len(enc) > 0 {
				g.Hist[histKey(o, k)] = enc
			}
		}
	}
	return g
}

// ClusterClockOffset reads the cluster's clock (TIME on node) a few times
// and returns its offset from this host's clock, from the reading with
// the shortest round trip, and that round trip: the offset is known to
// half of it. The coordinator and every generator read the same node, so
// their starts agree to within their round trips, whatever their own
// clocks say.
func ClusterClockOffset(ctx context.Context, node string, timeout time.Duration) (offset, rtt time.Duration, err error) {
	c := redis.NewClient(&redis.Options{Addr: node, DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout,
		MaxRetries: -1, DisableIdentity: true, Protocol: 2})
	defer c.Close()
	best := time.Duration(-1)
	for i := 0; i < 7; i++ {
		before := time.Now()
		t, err := c.Time(ctx).Result()
		after := time.Now()
		if err != nil {
			if best >= 0 {
				break
			}
			return 0, 0, fmt.Errorf("reading the cluster's clock (TIME on %s): %w", node, err)
		}
		d := after.Sub(before)
		if best < 0 || d < best {
			mid := before.Add(d / 2)
			best, offset = d, t.Sub(mid)
		}
	}
	return offset, best, nil
}

// GeneratorArgs is the command line every generator of c runs,
// `redline bench-generator --config JSON`; the runtime adds `--index N`
// (a pod of an Indexed Job has JOB_COMPLETION_INDEX instead).
func GeneratorArgs(c GeneratorConfig) []string {
	c.Index = 0
	b, _ := json.Marshal(c)
	return []string{"bench-generator", "--config", string(b)}
}

// ParseGeneratorConfig reads --config for generator index (1-based).
func ParseGeneratorConfig(s string, index int) (GeneratorConfig, error) {
	var c GeneratorConfig
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		return c, fmt.Errorf("--config is not a generator's JSON config: %v", err)
	}
	c.Index = index
	return c, c.Validate()
}
