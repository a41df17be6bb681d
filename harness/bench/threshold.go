package bench

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Thresholds (`bench --threshold 'p99<=2ms,errors<=0.1%'`) make a load
// test a CI gate, as k6's thresholds do: each is a bound on one figure of
// the measured run, checked after it; a run that misses any of them exits
// with its own code. They are parsed before anything starts, so a typo
// costs nothing, and evaluated from the stored Result only (a pure
// function: the tests hand it a Result).

// Threshold is one bound on a figure of the run.
type Threshold struct {
	// Text is the threshold as the user wrote it.
	Text string `json:"text"`
	// Command is "get", "set" or "total" (every op), from a GET. or SET.
	// prefix.
	Command string `json:"command"`
	// Metric is "p50", "p99.9", ..., "mean", "max" (corrected latency,
	// ms), "errors" (failed ops), "ops" (ok ops/s) or "kb" (KB/s on the
	// wire).
	Metric string `json:"metric"`
	// Quantile is the percentile of a pNN metric, 0 otherwise.
	Quantile float64 `json:"quantile,omitempty"`
	// Cmp is "<=", "<", ">=" or ">".
	Cmp string `json:"cmp"`
	// Limit is in Unit.
	Limit float64 `json:"limit"`
	// Unit is "ms", "%" (errors as a share of ops), "ops" (errors as a
	// count), "ops/s" or "KB/s".
	Unit string `json:"unit"`
}

// ThresholdResult is a threshold with what the run measured.
type ThresholdResult struct {
	Threshold
	// Value is the measured figure in the threshold's unit; Measured is
	// false when the run had none (no ok op of the command: no latency).
	Value    float64 `json:"value"`
	Measured bool    `json:"measured"`
	Pass     bool    `json:"pass"`
}

// ParseThresholds reads comma-joined thresholds: 'p99<=2ms',
// 'p99.9<10ms', 'max<=50ms', 'mean<=1ms', 'errors<=0.1%', 'errors<=0'
// (a count), 'ops>=5000' (ok ops/s; also throughput>=5000),
// 'kb>=100' (KB/s), each optionally for one command: 'GET.p99<=1ms',
// 'SET.errors<=0'. Latency units: us, ms, s.
func ParseThresholds(s string) ([]Threshold, error) {
	var out []Threshold
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		t, err := parseThreshold(part)
		if err != nil {
			return nil, fmt.Errorf("threshold %q: %v", part, err)
		}
		out = append(out, t)
	}
	if len(out) == 0 {
		return nil, errors.New("no threshold given: e.g. --threshold 'p99<=2ms' or --threshold 'p99<=2ms,errors<=0.1%,ops>=5000'")
	}
	return out, nil
}

func parseThreshold(part string) (Threshold, error) {
	t := Threshold{Text: part, Command: "total"}
	i := strings.IndexAny(part, "<>")
	if i < 0 {
		return t, errors.New("expected METRIC<=LIMIT or METRIC>=LIMIT, e.g. p99<=2ms, errors<=0.1%, ops>=5000, GET.p99<=1ms")
	}
	name, rest := strings.ToLower(strings.TrimSpace(part[:i])), part[i:]
	for _, c := range []string{"<=", ">=", "<", ">"} {
		if v, ok := strings.CutPrefix(rest, c); ok {
			t.Cmp, rest = c, strings.TrimSpace(v)
			break
		}
	}
	if strings.ContainsAny(rest, "<>=") {
		return t, errors.New("one comparison per threshold: <=, <, >= or >")
	}
	if cmd, metric, ok := strings.Cut(name, "."); ok && (cmd == "get" || cmd == "set" || cmd == "total") {
		t.Command, name = cmd, metric
	} else if ok && !strings.HasPrefix(name, "p") {
		return t, fmt.Errorf("unknown command %q: thresholds per command are GET.METRIC or SET.METRIC", cmd)
	}
	t.Metric = name
	if rest == "" {
		return t, errors.New("no limit after " + t.Cmp)
	}
	switch {
	case name == "errors":
		if num, isPct := strings.CutSuffix(rest, "%"); isPct {
			f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
			if err != nil || f < 0 || f > 100 {
				return t, fmt.Errorf("%q is not a percentage between 0 and 100", rest)
			}
			t.Limit, t.Unit = f, "%"
			break
		}
		n, err := strconv.ParseInt(rest, 10, 64)
		if err != nil || n < 0 {
			return t, fmt.Errorf("%q: the error limit is a share (errors<=0.1%%) or a whole count of ops (errors<=10)", rest)
		}
		t.Limit, t.Unit = float64(n), "ops"
	case name == "ops" || name == "throughput" || name == "ops/s" || name == "rps":
		t.Metric = "ops"
		num := strings.TrimSpace(strings.TrimSuffix(strings.TrimSuffix(rest, "ops/s"), "/s"))
		f, err := strconv.ParseFloat(num, 64)
		if err != nil || f < 0 {
			return t, fmt.Errorf("%q is not a rate in ok ops/s (ops>=5000)", rest)
		}
		t.Limit, t.Unit = f, "ops/s"
	case name == "kb" || name == "kb/s":
		t.Metric = "kb"
		f, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.ToLower(rest), "kb/s")), 64)
		if err != nil || f < 0 {
			return t, fmt.Errorf("%q is not a rate in KB/s (kb>=100)", rest)
		}
		t.Limit, t.Unit = f, "KB/s"
	case name == "mean" || name == "avg" || name == "max" || strings.HasPrefix(name, "p"):
		if name == "avg" {
			t.Metric = "mean"
		}
		if t.Metric != "mean" && t.Metric != "max" {
			q, err := strconv.ParseFloat(name[1:], 64)
			if err != nil || q <= 0 || q >= 100 {
				return t, fmt.Errorf("%q is not a percentile (p50, p90, p99, p99.9)", name)
			}
			t.Quantile = q
		}
		ms, err := parseMs(rest)
		if err != nil {
			return t, err
		}
		t.Limit, t.Unit = ms, "ms"
	default:
		return t, fmt.Errorf("unknown metric %q: choose pNN (p50, p90, p99, p99.9), mean, max (latency), errors, ops (ok ops/s) or kb (KB/s)", name)
	}
	return t, nil
}

// EvaluateThresholds checks each threshold against the run's figures.
// Latency is the corrected latency (from the intended send time in the
// open loop; in the closed loop it equals the raw); errors count every
// op that did not succeed, their share is of every op that ended.
func EvaluateThresholds(r *Result, ts []Threshold) []ThresholdResult {
	out := make([]ThresholdResult, 0, len(ts))
	for _, t := range ts {
		v, ok := r.thresholdValue(t)
		tr := ThresholdResult{Threshold: t, Value: v, Measured: ok}
		if ok {
			switch t.Cmp {
			case "<=":
				tr.Pass = v <= t.Limit
			case "<":
				tr.Pass = v < t.Limit
			case ">=":
				tr.Pass = v >= t.Limit
			case ">":
				tr.Pass = v > t.Limit
			}
		}
		out = append(out, tr)
	}
	return out
}

// ThresholdsPassed is true when every threshold passed.
func ThresholdsPassed(rs []ThresholdResult) bool {
	for _, r := range rs {
		if !r.Pass {
			return false
		}
	}
	return true
}

func (r *Result) thresholdValue(t Threshold) (float64, bool) {
	f := r.Ops[t.Command]
	if f == nil {
		return 0, false
	}
	switch t.Metric {
	case "ops":
		return f.OKPerS, true
	case "kb":
		return f.KBPerS, true
	case "errors":
		failed := f.Failed
		ok := f.Corrected.Count
		if t.Unit == "ops" {
			return float64(failed), true
		}
		if failed+ok == 0 {
			return 0, true
		}
		return float64(failed) / float64(failed+ok) * 100, true
	}
	c := f.Corrected
	if c.Count == 0 {
		return 0, false
	}
	switch t.Metric {
	case "mean":
		return c.Mean, true
	case "max":
		return c.Max, true
	}
	if h := r.Hist(t.Command, "corrected"); h != nil && h.TotalCount() > 0 {
		return float64(h.ValueAtQuantile(t.Quantile)) / 1000, true
	}
	// A Result without its histograms (a test's): the stored quantiles.
	switch t.Quantile {
	case 50:
		return c.P50, true
	case 90:
		return c.P90, true
	case 99:
		return c.P99, true
	case 99.9:
		return c.P999, true
	}
	return 0, false
}

// PrintThresholds prints one line per threshold, the value measured
// against the limit, and a last line that says whether all passed.
// FailedThresholds says each failed threshold in words ("p99<=2ms:
// measured 3.1 ms"), in order; nil when every one passed.
func FailedThresholds(rs []ThresholdResult) []string {
	var out []string
	for _, r := range rs {
		if !r.Pass {
			out = append(out, r.Text+": measured "+r.formatValue())
		}
	}
	return out
}

func PrintThresholds(w io.Writer, rs []ThresholdResult) {
	if len(rs) == 0 {
		return
	}
	fmt.Fprintln(w, "\nthresholds:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	failed := 0
	for _, r := range rs {
		verdict, measured := "pass", r.formatValue()
		if !r.Pass {
			verdict = "FAIL"
			failed++
		}
		fmt.Fprintf(tw, "  %s\t%s\tmeasured %s\tlimit %s %s\n", verdict, r.Text, measured, r.Cmp, r.format(r.Limit))
	}
	tw.Flush()
	if failed == 0 {
		fmt.Fprintf(w, "thresholds: all %d passed\n", len(rs))
	} else {
		fmt.Fprintf(w, "thresholds: %d of %d FAILED\n", failed, len(rs))
	}
}

func (r ThresholdResult) formatValue() string {
	if !r.Measured {
		return "nothing (no ok " + strings.ToUpper(r.Command) + " op)"
	}
	return r.format(r.Value)
}

func (t Threshold) format(v float64) string {
	switch t.Unit {
	case "%":
		return Num(v) + "%"
	case "ops":
		return strconv.FormatFloat(v, 'f', -1, 64) + " failed ops"
	case "ms":
		return Num(v) + " ms"
	}
	return Num(v) + " " + t.Unit
}
