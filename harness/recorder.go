package harness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redline-dev/redline/harness/history"
)

// Recorder appends every entry to history.jsonl as the run goes and keeps
// them in memory for the checkers. The file is flushed every flushEvery, so
// a crashed run leaves a history that is at most that much short; a torn
// last line is tolerated by history.Decode.
type Recorder struct {
	start time.Time

	mu   sync.Mutex
	ops  []history.Op
	w    *bufio.Writer
	f    *os.File
	err  error  // first write error, sticky
	head []byte // scratch for an entry's index and time
	done chan struct{}
	wg   sync.WaitGroup

	ok, fail, info atomic.Int64
}

const flushEvery = 200 * time.Millisecond

// NewRecorder creates (truncates) the history file at path.
func NewRecorder(path string, start time.Time) (*Recorder, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cannot create the history file: %w", err)
	}
	r := &Recorder{start: start, f: f, w: bufio.NewWriterSize(f, 1<<16), done: make(chan struct{})}
	r.wg.Add(1)
	go r.flusher()
	return r, nil
}

func (r *Recorder) flusher() {
	defer r.wg.Done()
	t := time.NewTicker(flushEvery)
	defer t.Stop()
	for {
		select {
		case <-r.done:
			return
		case <-t.C:
			r.mu.Lock()
			if r.err == nil {
				r.err = r.w.Flush()
			}
			r.mu.Unlock()
		}
	}
}

// encodedHead is how an op with Index and Time zero starts in JSON: those
// two fields come first, so Record encodes the rest outside its lock and
// writes only the two numbers under it (with 50 workers, JSON encoding
// under the lock made every record wait for the others').
var encodedHead = []byte(`{"index":0,"time":0,`)

// Record assigns the entry its index and time and appends it.
func (r *Recorder) Record(op history.Op) history.Op {
	op.Index, op.Time = 0, 0
	body, encErr := json.Marshal(&op)
	split := encErr == nil && bytes.HasPrefix(body, encodedHead)
	now := time.Since(r.start).Nanoseconds()
	r.mu.Lock()
	op.Index = int64(len(r.ops))
	// Time is taken under the lock so that index order and time order agree.
	if len(r.ops) > 0 && now < r.ops[len(r.ops)-1].Time {
		now = r.ops[len(r.ops)-1].Time
	}
	op.Time = now
	r.ops = append(r.ops, op)
	switch {
	case r.err != nil:
	case !split:
		// Not the expected shape (or an encoding error): encode it whole.
		r.err = history.Encode(r.w, &op)
	default:
		head := append(r.head[:0], `{"index":`...)
		head = strconv.AppendInt(head, op.Index, 10)
		head = append(head, `,"time":`...)
		head = strconv.AppendInt(head, op.Time, 10)
		head = append(head, ',')
		r.head = head
		_, _ = r.w.Write(head)
		_, _ = r.w.Write(body[len(encodedHead):])
		r.err = r.w.WriteByte('\n')
	}
	r.mu.Unlock()
	if op.Process != history.Nemesis {
		switch op.Type {
		case history.OK:
			r.ok.Add(1)
		case history.Fail:
			r.fail.Add(1)
		case history.Info:
			r.info.Add(1)
		}
	}
	return op
}

// Counts returns the completions so far.
func (r *Recorder) Counts() (ok, fail, info int64) {
	return r.ok.Load(), r.fail.Load(), r.info.Load()
}

// Ops returns the entries recorded so far (a copy of the slice header; the
// entries are never modified after recording).
func (r *Recorder) Ops() []history.Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ops[:len(r.ops):len(r.ops)]
}

// Close flushes and closes the file. It returns the first write error.
func (r *Recorder) Close() error {
	close(r.done)
	r.wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = r.w.Flush()
	}
	if err := r.f.Close(); r.err == nil {
		r.err = err
	}
	return r.err
}
