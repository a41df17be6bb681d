package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redline-dev/redline/history"
)

// Recorder appends every entry to the history file (history.FileName) as
// the run goes. It keeps none of them in memory: a soak run of an hour
// records over a hundred million entries, and the checkers read them back
// from the file, as `redline check` does (issue 42). The entries are
// written as compressed frames (history.FrameWriter), one every
// frameEvery or every maxFrame bytes of JSON, whichever comes first: a
// crashed run leaves a history that is at most that much short, every
// whole frame readable and a frame cut mid-write reported by the reader
// (never read as a silent prefix).
type Recorder struct {
	start time.Time

	mu    sync.Mutex
	n     int64 // entries recorded: the next entry's index
	last  int64 // the last entry's time
	watch func(*history.Op)
	pend  []byte // JSON lines of the next frame
	pendN int    // entries in pend
	spare []byte // the previous frame's buffer, for reuse
	err   error  // first write error, sticky
	kick  chan struct{}
	done  chan struct{}
	wg    sync.WaitGroup

	wmu sync.Mutex           // one frame written at a time, in order
	fw  *history.FrameWriter // under wmu
	f   *os.File

	ok, fail, info atomic.Int64
}

// frameEvery bounds what a crash loses, as the JSON-lines writer's flush
// did. Small frames compress little worse: the 87,139 entries of a 15 s
// counter,register,set run under partitions took 26.4 bytes an entry in
// frames of 20 entries, 17.0 in frames of 100, 15.4 in frames of 400 and
// 16.0 in frames of 6000 (a second of that run); 200 ms of a run at
// --rate 250 or more is 100 entries or more.
const frameEvery = 200 * time.Millisecond

// maxFrame bounds a frame's JSON (the memory it holds and what a torn
// frame loses) when entries come faster than frameEvery cuts them.
const maxFrame = 4 << 20

// NewRecorder creates (truncates) the history file at path.
func NewRecorder(path string, start time.Time) (*Recorder, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cannot create the history file: %w", err)
	}
	fw, err := history.NewFrameWriter(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("cannot create the history file: %w", err)
	}
	r := &Recorder{start: start, f: f, fw: fw, kick: make(chan struct{}, 1), done: make(chan struct{})}
	r.wg.Add(1)
	go r.flusher()
	return r, nil
}

func (r *Recorder) flusher() {
	defer r.wg.Done()
	t := time.NewTicker(frameEvery)
	defer t.Stop()
	for {
		select {
		case <-r.done:
			return
		case <-t.C:
		case <-r.kick:
		}
		r.writeFrame()
	}
}

// writeFrame writes the pending entries as one frame, compressing them
// outside mu (Record does not wait for it); wmu keeps frames whole and in
// order.
func (r *Recorder) writeFrame() {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	r.mu.Lock()
	if r.err != nil || r.pendN == 0 {
		r.mu.Unlock()
		return
	}
	lines, n := r.pend, r.pendN
	r.pend, r.pendN, r.spare = r.spare[:0], 0, nil
	r.mu.Unlock()
	err := r.fw.WriteFrame(lines, n)
	r.mu.Lock()
	if r.err == nil && err != nil {
		r.err = fmt.Errorf("cannot write the history file: %w", err)
	}
	if cap(lines) <= 2*maxFrame {
		r.spare = lines[:0]
	}
	r.mu.Unlock()
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
	op.Index = r.n
	// Time is taken under the lock so that index order and time order agree.
	if r.n > 0 && now < r.last {
		now = r.last
	}
	op.Time, r.last = now, now
	r.n++
	if r.watch != nil {
		// Under the lock, so that the watcher sees entries in index order:
		// an add acknowledged before a read began is seen before the read.
		r.watch(&op)
	}
	switch {
	case r.err != nil:
	case !split:
		// Not the expected shape (or an encoding error): encode it whole.
		w := bytes.NewBuffer(r.pend)
		r.err = history.Encode(w, &op)
		r.pend = w.Bytes()
		r.pendN++
	default:
		r.pend = append(r.pend, `{"index":`...)
		r.pend = strconv.AppendInt(r.pend, op.Index, 10)
		r.pend = append(r.pend, `,"time":`...)
		r.pend = strconv.AppendInt(r.pend, op.Time, 10)
		r.pend = append(r.pend, ',')
		r.pend = append(r.pend, body[len(encodedHead):]...)
		r.pend = append(r.pend, '\n')
		r.pendN++
	}
	kick := len(r.pend) >= maxFrame
	r.mu.Unlock()
	if kick {
		select {
		case r.kick <- struct{}{}:
		default: // the flusher has been told already
		}
	}
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

// Len is the number of entries recorded so far.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return int(r.n)
}

// Watch calls f with every entry recorded from now on, in index order,
// under the recorder's lock: f must be quick and must not record.
func (r *Recorder) Watch(f func(*history.Op)) {
	r.mu.Lock()
	r.watch = f
	r.mu.Unlock()
}

// Close writes the last frame and closes the file. It returns the first
// write error.
func (r *Recorder) Close() error {
	close(r.done)
	r.wg.Wait()
	r.writeFrame()
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.f.Close(); r.err == nil && err != nil {
		r.err = fmt.Errorf("cannot close the history file: %w", err)
	}
	return r.err
}
