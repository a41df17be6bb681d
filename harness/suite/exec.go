package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/results"
)

// Verdicts of a run in a summary: a checker verdict's name, or one of the
// two states a run without a verdict is in.
var (
	Valid   = checker.Valid.String()
	Invalid = checker.Invalid.String()
	Unknown = checker.Unknown.String()
)

const (
	Error   = "error"   // the run could not finish (redline or its environment failed)
	Pending = "pending" // not run yet (an interrupted suite)
)

// Outcome is what running one test returned: its exit code, its run
// directory (empty when none was made) and an error message if it failed.
type Outcome struct {
	Code int
	Dir  string
	Err  string
}

// RunFunc runs one test through the normal runner (cmd wires `redline
// run`'s code in); it must return when ctx is cancelled.
type RunFunc func(ctx context.Context, r Run) Outcome

// Options of Execute.
type Options struct {
	Dir string // the suite directory, created if missing
	// ResultsRoot is where the runs are stored, recorded in summary.json.
	ResultsRoot string
	Run         RunFunc // runs one test
	// Out gets progress: bars when TTY, else one plain line per run.
	Out io.Writer
	TTY bool
	// Prior is the summary of an interrupted suite being resumed: runs it
	// has with a verdict are kept, the others run again.
	Prior *Summary
}

// done says whether a run has a verdict a resumed suite keeps.
func done(r Result) bool {
	return r.Verdict == Valid || r.Verdict == Invalid || r.Verdict == Unknown
}

// Execute runs every test of s one after another (one cluster at a time),
// rewriting summary.json, junit.xml and summary.html after each, so an
// interrupted suite leaves a current summary that --resume continues. It
// returns the summary; Interrupted is set when ctx ended it early.
func Execute(ctx context.Context, s *Suite, opts Options) (*Summary, error) {
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("suite directory: %w", err)
	}
	y, err := s.Marshal()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(opts.Dir, "suite.yaml"), y, 0o644); err != nil {
		return nil, fmt.Errorf("suite directory: %w", err)
	}
	sum := &Summary{Name: s.Name, Study: s.Study, Dir: opts.Dir, ResultsRoot: opts.ResultsRoot, Started: time.Now().UTC()}
	for i, r := range s.Runs {
		res := Result{Index: i, Name: r.Name, Params: r.Params, Verdict: Pending}
		if opts.Prior != nil && i < len(opts.Prior.Runs) && opts.Prior.Runs[i].Name == r.Name && done(opts.Prior.Runs[i]) {
			res = opts.Prior.Runs[i]
			res.Checkers = keyFigures(res.Checkers)
		}
		sum.Runs = append(sum.Runs, res)
	}
	if opts.Prior != nil {
		sum.Started = opts.Prior.Started
	}
	if err := sum.Write(); err != nil {
		return nil, err
	}
	pr := newProgress(opts.Out, opts.TTY, sum)
	defer pr.close()
	for i := range sum.Runs {
		if done(sum.Runs[i]) {
			pr.skip(i)
			continue
		}
		if ctx.Err() != nil {
			sum.Interrupted = true
			break
		}
		pr.begin(i)
		began := time.Now()
		out := opts.Run(ctx, s.Runs[i])
		res := &sum.Runs[i]
		res.Started = began.UTC()
		res.DurationS = time.Since(began).Seconds()
		if ctx.Err() != nil && out.Code > 2 {
			// Cut short by the interruption: not a verdict.
			res.Verdict, res.Error, res.Dir = Pending, "interrupted", out.Dir
			sum.Interrupted = true
		} else {
			fill(res, out)
		}
		if err := sum.Write(); err != nil {
			return sum, err
		}
		pr.end(i)
		if sum.Interrupted {
			break
		}
	}
	sum.Finished = time.Now().UTC()
	return sum, sum.Write()
}

// fill turns a run's outcome and its results.json into a summary entry.
func fill(res *Result, out Outcome) {
	res.ExitCode, res.Dir, res.Error = out.Code, out.Dir, out.Err
	res.Checkers = nil
	if out.Dir != "" {
		if rj, err := readResults(out.Dir); err == nil {
			res.Checkers = keyFigures(rj)
		} else if res.Error == "" && out.Code <= 2 {
			res.Error = err.Error()
		}
	}
	v, isVerdict := checker.ValidityOfExit(out.Code)
	switch {
	case !isVerdict:
		res.Verdict = Error
	case v == checker.Valid && res.Checkers == nil:
		// Exit 0 with no results.json to show for it is no evidence.
		res.Verdict = Unknown
		if res.Error == "" {
			res.Error = "the run reported success but left no results.json"
		}
	default:
		res.Verdict = v.String()
	}
}

// CheckerResult is one checker of a run as the summary keeps it: its
// verdict and its figures, as results.json has them (fields this version
// does not know are kept as they are).
type CheckerResult struct {
	Valid   any            `json:"valid"`
	Figures map[string]any `json:"figures,omitempty"`
}

// Result is the checker result c keeps, of checker name: its figures
// typed where its checker's are and the record holds what the type needs
// (the summary keeps key figures only), else by name (checker.Map).
func (c CheckerResult) Result(name string) checker.Result {
	m := map[string]any{"valid": c.Valid}
	for k, v := range c.Figures {
		if k != "valid" {
			m[k] = v
		}
	}
	if b, err := json.Marshal(m); err == nil {
		if r, err := checker.ReadResult(name, b); err == nil {
			return r
		}
	}
	return checker.Result{Valid: checker.Unknown, Figures: checker.Map(c.Figures)}
}

// readResults reads a run's results.json with the results store's reader.
func readResults(dir string) (map[string]CheckerResult, error) {
	s, err := results.ReadSummary(dir)
	if err != nil {
		return nil, err
	}
	out := map[string]CheckerResult{}
	for name, c := range s.Checkers {
		cr := CheckerResult{Valid: c.Valid.JSONValue(), Figures: map[string]any{}}
		figs := c.Values()
		if f, ok := figs["figures"].(map[string]any); ok {
			figs = f // a nested figures object, if the checker writes one
		}
		for k, v := range figs {
			if k != "valid" && k != "figures" {
				cr.Figures[k] = v
			}
		}
		out[name] = cr
	}
	return out, nil
}

// keyFigures keeps what a summary needs of each checker: its verdict and
// its scalar figures and quantile summaries; series, per-window lists and
// example lists stay in the run's own results.json.
func keyFigures(cs map[string]CheckerResult) map[string]CheckerResult {
	out := map[string]CheckerResult{}
	for name, c := range cs {
		k := CheckerResult{Valid: c.Valid, Figures: map[string]any{}}
		for f, v := range c.Figures {
			switch x := v.(type) {
			case float64, bool:
				k.Figures[f] = v
			case string:
				if len(x) <= 300 {
					k.Figures[f] = v
				}
			case map[string]any:
				if _, q := x["p50"]; q && len(x) <= 8 {
					k.Figures[f] = v
				}
			}
		}
		out[name] = k
	}
	return out
}

// progress shows the suite: one bar over all runs on a terminal, a plain
// line per run otherwise.
type progress struct {
	out io.Writer
	sum *Summary
	p   *mpb.Progress
	bar *mpb.Bar

	mu     sync.Mutex // the bar's decorator reads these from mpb's goroutine
	cur    string
	counts map[string]int
}

// set updates what the bar shows.
func (pr *progress) set(cur string) {
	pr.mu.Lock()
	pr.cur, pr.counts = cur, pr.sum.Counts()
	pr.mu.Unlock()
}

func (pr *progress) status() string {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	c := pr.counts
	return fmt.Sprintf(" valid %d invalid %d unknown %d error %d  %s", c[Valid], c[Invalid], c[Unknown], c[Error], pr.cur)
}

func newProgress(out io.Writer, tty bool, sum *Summary) *progress {
	if out == nil {
		out = io.Discard
	}
	pr := &progress{out: out, sum: sum, counts: sum.Counts()}
	if tty {
		pr.p = mpb.New(mpb.WithOutput(out), mpb.WithAutoRefresh())
		pr.bar = pr.p.AddBar(int64(len(sum.Runs)),
			mpb.PrependDecorators(decor.Name("suite "+sum.Name+" "), decor.CountersNoUnit("run %d/%d")),
			mpb.AppendDecorators(decor.Any(func(decor.Statistics) string { return pr.status() })))
	}
	return pr
}

func (pr *progress) skip(i int) {
	r := pr.sum.Runs[i]
	pr.set("")
	if pr.bar != nil {
		pr.bar.Increment()
		return
	}
	fmt.Fprintf(pr.out, "suite %s: run %d/%d %s: %s (kept from before)\n", pr.sum.Name, i+1, len(pr.sum.Runs), r.Name, r.Verdict)
}

func (pr *progress) begin(i int) {
	r := pr.sum.Runs[i]
	pr.set(r.Name)
	if pr.bar == nil {
		fmt.Fprintf(pr.out, "suite %s: run %d/%d %s ...\n", pr.sum.Name, i+1, len(pr.sum.Runs), r.Name)
	}
}

func (pr *progress) end(i int) {
	r := pr.sum.Runs[i]
	pr.set("")
	if pr.bar != nil {
		pr.bar.Increment()
		return
	}
	line := fmt.Sprintf("suite %s: run %d/%d %s: %s in %.0fs", pr.sum.Name, i+1, len(pr.sum.Runs), r.Name, r.Verdict, r.DurationS)
	if r.Dir != "" {
		line += ", " + r.Dir
	}
	if r.Error != "" {
		line += ": " + r.Error
	}
	fmt.Fprintln(pr.out, line)
}

func (pr *progress) close() {
	if pr.p != nil {
		pr.bar.Abort(false)
		pr.p.Wait()
	}
}
