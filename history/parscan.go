package history

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// scanWorkers is how many goroutines decode a framed history's records
// for Scan: one less than the cores (the caller's fn needs one), at most
// three, and none (Scan decodes in the caller's goroutine) on one core.
func scanWorkers() int {
	return min(runtime.GOMAXPROCS(0)-1, 3)
}

// parsedLine is one line of a record, decoded by a worker.
type parsedLine struct {
	op    Op
	raw   []byte // the trimmed line, in the record's decoded bytes
	blank bool
}

// scanJob is one record on its way through scanFramed: read in order,
// decoded by any worker, handed on in order.
type scanJob struct {
	rec   record
	end   error // set on the job after the last record: io.EOF, or the reader's error
	done  chan struct{}
	lines []parsedLine
	// err is what stopped the record: its frame did not decode, or the
	// line after its lines did not.
	err error
}

// scanFramed is scanLines of a framed history for Scan, with the records
// decompressed and their lines decoded by workers goroutines, several
// records ahead, and fn called in the caller's goroutine in file order:
// the same entries, the same errors at the same lines, the same tear
// (fr.torn, read after it returns) as the scan of one goroutine (issue
// 42: the spill of 150M entries took 2 min 42 s of one core).
func scanFramed(fr *frameReader, name string, res *ReadResult, fn func(*Op, []byte) error, workers int) error {
	stop := make(chan struct{})
	// Records in flight: one being decoded by each worker, and as many
	// more decoded (or waiting for a worker) ahead of the caller.
	order := make(chan *scanJob, workers+1) // the jobs in file order
	jobs := make(chan *scanJob)             // the jobs for the workers
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the reader
		defer wg.Done()
		defer close(order)
		defer close(jobs)
		for {
			rec, err := fr.readRecord()
			if err != nil {
				select {
				case order <- &scanJob{end: err}:
				case <-stop:
				}
				return
			}
			// readRecord reuses its buffer.
			rec.frame = bytes.Clone(rec.frame)
			// A job in order is always a worker's too: the drain at the
			// end waits for it to be done.
			j := &scanJob{rec: rec, done: make(chan struct{})}
			select {
			case jobs <- j:
			case <-stop:
				return
			}
			select {
			case order <- j:
			case <-stop:
				return
			}
		}
	}()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<30))
			if err != nil {
				for j := range jobs {
					j.err = err
					close(j.done)
				}
				return
			}
			defer dec.Close()
			fast := newLineDecoder()
			for j := range jobs {
				j.parse(dec, fast)
				close(j.done)
			}
		}()
	}
	defer func() {
		close(stop)
		// Let the reader and the workers see it and end: nothing they
		// hold outlives the scan.
		for j := range order {
			if j.done != nil {
				<-j.done
			}
		}
		wg.Wait()
	}()
	line := 0
	for j := range order {
		if j.end != nil {
			if j.end == io.EOF {
				return nil
			}
			return &ParseError{name, line + 1, j.end}
		}
		<-j.done
		for k := range j.lines {
			line++
			l := &j.lines[k]
			if l.blank {
				continue
			}
			res.Entries++
			if err := fn(&l.op, l.raw); err != nil {
				return err
			}
		}
		if j.err != nil {
			return &ParseError{name, line + 1, j.err}
		}
	}
	return nil // the reader stopped: unreachable without stop
}

// parse decodes the job's record into its lines, as scanLines decodes a
// line: stopping at the first that does not decode (j.err, at the line
// after j.lines). A record's lines all end in a newline (decode checks),
// so none is torn.
func (j *scanJob) parse(dec *zstd.Decoder, fast *lineDecoder) {
	out, err := j.rec.decode(dec, nil)
	if err != nil {
		j.err = err
		return
	}
	j.lines = make([]parsedLine, 0, j.rec.entries)
	for len(out) > 0 {
		i := bytes.IndexByte(out, '\n')
		l := out[:i+1]
		out = out[i+1:]
		if len(l) > maxLine {
			j.err = fmt.Errorf("line longer than %d bytes", maxLine)
			return
		}
		trimmed := bytes.TrimSpace(l)
		if len(trimmed) == 0 {
			j.lines = append(j.lines, parsedLine{blank: true})
			continue
		}
		j.lines = append(j.lines, parsedLine{raw: trimmed})
		p := &j.lines[len(j.lines)-1]
		var perr error
		if !fast.decode(trimmed, &p.op) {
			var slow Op
			perr = json.Unmarshal(trimmed, &slow)
			p.op = slow
		}
		if perr != nil {
			j.lines = j.lines[:len(j.lines)-1]
			if terr := typeError(perr); terr != nil {
				// A whole entry of no known type.
				j.err = terr
				return
			}
			j.err = fmt.Errorf("not a history entry: %v", perr)
			return
		}
		if verr := p.op.validate(); verr != nil {
			j.lines = j.lines[:len(j.lines)-1]
			j.err = verr
			return
		}
	}
}
