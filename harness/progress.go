package harness

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// Log writes timestamped lines to run.log and to the user's terminal.
// While progress bars are drawn, terminal lines go above them.
type Log struct {
	mu    sync.Mutex
	file  io.Writer
	term  io.Writer
	start time.Time
}

// NewLog logs to file (may be nil) and term (may be nil).
func NewLog(file, term io.Writer) *Log {
	return &Log{file: file, term: term, start: time.Now()}
}

// Printf logs one line.
func (l *Log) Printf(format string, args ...any) {
	if l == nil {
		return
	}
	msg := fmt.Sprintf(format, args...)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.toFile(msg)
	if l.term != nil {
		fmt.Fprintf(l.term, "%s %s\n", time.Now().Format("15:04:05"), msg)
	}
}

// Filef logs one line to the file only: detail the terminal need not see.
func (l *Log) Filef(format string, args ...any) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.toFile(fmt.Sprintf(format, args...))
}

// toFile writes one timestamped line to the file; l.mu is held.
func (l *Log) toFile(msg string) {
	if l.file != nil {
		fmt.Fprintf(l.file, "%s %s\n", time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), msg)
	}
}

// FileOnly is a go-redis logger that writes to run.log only: failed dials
// during faults are expected and would drown the terminal.
type FileOnly struct{ L *Log }

func (f FileOnly) Printf(_ context.Context, format string, args ...any) {
	if f.L == nil {
		return
	}
	msg := fmt.Sprintf(format, args...)
	f.L.mu.Lock()
	defer f.L.mu.Unlock()
	if f.L.file != nil {
		fmt.Fprintf(f.L.file, "%s go-redis: %s\n", time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), msg)
	}
}

// SetFile switches the log file, e.g. from a buffer kept until the run
// directory exists.
func (l *Log) SetFile(w io.Writer) {
	l.mu.Lock()
	l.file = w
	l.mu.Unlock()
}

func (l *Log) setTerm(w io.Writer) {
	l.mu.Lock()
	l.term = w
	l.mu.Unlock()
}

// Progress shows how a run goes: bars on a terminal, a plain line every few
// seconds otherwise.
type Progress struct {
	tty bool
	out io.Writer
	log *Log

	p    *mpb.Progress
	bar  *mpb.Bar
	stop chan struct{}
	done sync.WaitGroup
}

// NewProgress draws on out; tty chooses bars over plain lines.
func NewProgress(out io.Writer, tty bool, log *Log) *Progress {
	return &Progress{tty: tty, out: out, log: log}
}

// Status is what the progress display reads.
type Status struct {
	Counts func() (ok, fail, info int64)
	Fault  func() string
	// Live, if set, adds figures of the moment (a bench's ops/s and p99).
	Live func() string
	// Faults, if set, is how many faults have started so far.
	Faults func() int
	// Verdicts, if set, is the running verdict per checker (liveWatch).
	Verdicts func() string
}

// plainEvery is how often a run without a terminal logs its progress
// line: every 5 s on short runs, less often on long ones (a soak run of an
// hour logs about 120 lines, not 720), at most every minute.
func plainEvery(limit time.Duration) time.Duration {
	return min(max(5*time.Second, (limit/120).Round(time.Second)), time.Minute)
}

// left is the time left of limit after elapsed, in whole seconds.
func left(limit, elapsed time.Duration) time.Duration {
	return max(0, limit-elapsed).Round(time.Second)
}

// StartRun shows elapsed time against the limit, op counts and the fault.
func (pr *Progress) StartRun(limit time.Duration, st Status) {
	start := time.Now()
	pr.stop = make(chan struct{})
	line := func() string {
		ok, fail, info := st.Counts()
		fault := ""
		if st.Fault != nil {
			fault = st.Fault()
		}
		if fault == "" {
			fault = "none"
		}
		live := ""
		if st.Live != nil {
			live = st.Live() + "  "
		}
		line := fmt.Sprintf("%sok %d  fail %d  info %d  fault: %s", live, ok, fail, info, fault)
		if st.Faults != nil {
			line += fmt.Sprintf(" (%d so far)", st.Faults())
		}
		if st.Verdicts != nil {
			if v := st.Verdicts(); v != "" {
				line += "  verdict " + v
			}
		}
		return line
	}
	if !pr.tty {
		pr.done.Add(1)
		go func() {
			defer pr.done.Done()
			t := time.NewTicker(plainEvery(limit))
			defer t.Stop()
			for {
				select {
				case <-pr.stop:
					return
				case <-t.C:
					el := time.Since(start)
					pr.log.Printf("%s / %s (%s left)  %s", el.Round(time.Second), limit, left(limit, el), line())
				}
			}
		}()
		return
	}
	pr.p = mpb.New(mpb.WithOutput(pr.out), mpb.WithRefreshRate(200*time.Millisecond))
	pr.log.setTerm(pr.p)
	total := int64(limit / time.Millisecond)
	pr.bar = pr.p.AddBar(total,
		mpb.PrependDecorators(decor.Name("running "), decor.NewElapsed(decor.ET_STYLE_MMSS, start), decor.Any(func(decor.Statistics) string {
			return " / " + limit.String() + " (" + left(limit, time.Since(start)).String() + " left)"
		})),
		mpb.AppendDecorators(decor.Any(func(decor.Statistics) string { return "  " + line() })),
	)
	pr.done.Add(1)
	go func() {
		defer pr.done.Done()
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-pr.stop:
				return
			case <-t.C:
				el := int64(time.Since(start) / time.Millisecond)
				if el > total {
					el = total
				}
				pr.bar.SetCurrent(el)
			}
		}
	}()
}

// EndRun removes the run display.
func (pr *Progress) EndRun() {
	if pr.stop == nil {
		return
	}
	close(pr.stop)
	pr.done.Wait()
	pr.stop = nil
	if pr.p != nil {
		pr.bar.SetTotal(-1, true)
		pr.p.Wait()
		pr.p = nil
		pr.log.setTerm(pr.out)
	}
}

// Checking shows checker progress; call the returned func per finished checker.
func (pr *Progress) Checking(names []string) (tick func(name string), end func()) {
	if !pr.tty {
		// One line per checker goes to run.log (which one hung shows
		// there); the terminal gets one line when all are done.
		began := time.Now()
		return func(name string) { pr.log.Filef("checker %s done", name) }, func() {
			pr.log.Printf("%d checkers done in %.1f s", len(names), time.Since(began).Seconds())
		}
	}
	p := mpb.New(mpb.WithOutput(pr.out), mpb.WithRefreshRate(150*time.Millisecond))
	bar := p.AddBar(int64(len(names)),
		mpb.PrependDecorators(decor.Name("checking "), decor.CountersNoUnit("%d/%d")),
		mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_GO)))
	var mu sync.Mutex
	return func(string) { mu.Lock(); bar.Increment(); mu.Unlock() }, func() {
		bar.SetTotal(-1, true)
		p.Wait()
	}
}

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
