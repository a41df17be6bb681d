package bench

import (
	"bufio"
	"compress/gzip"
	"os"
	"strconv"
	"sync"
)

// opLog is the optional op log (--history): one JSON line per op,
// gzip-compressed, written by workers in chunks. Lines are grouped by
// worker, not sorted by time: each carries its own times, in ns since the
// start of traffic: intended ("due"), sent and done.
type opLog struct {
	mu  sync.Mutex
	f   *os.File
	buf *bufio.Writer
	gz  *gzip.Writer
	err error
}

func newOpLog(path string) (*opLog, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	l := &opLog{f: f, buf: bufio.NewWriterSize(f, 1<<16)}
	l.gz, _ = gzip.NewWriterLevel(l.buf, gzip.BestSpeed)
	return l, nil
}

func (l *opLog) write(chunk []byte) {
	if len(chunk) == 0 {
		return
	}
	l.mu.Lock()
	if l.err == nil {
		_, l.err = l.gz.Write(chunk)
	}
	l.mu.Unlock()
}

func (l *opLog) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, err := range []error{l.gz.Close(), l.buf.Flush(), l.f.Close()} {
		if l.err == nil {
			l.err = err
		}
	}
	return l.err
}

// appendOps appends the log lines of a finished batch.
func appendOps(dst []byte, batch []pending) []byte {
	for i := range batch {
		b := &batch[i]
		f := "get"
		if b.op.Set {
			f = "set"
		}
		dst = append(dst, `{"f":"`...)
		dst = append(dst, f...)
		dst = append(dst, `","key":`...)
		dst = strconv.AppendQuote(dst, string(b.key))
		dst = append(dst, `,"due":`...)
		dst = strconv.AppendInt(dst, int64(b.intended), 10)
		dst = append(dst, `,"sent":`...)
		dst = strconv.AppendInt(dst, int64(b.sent), 10)
		dst = append(dst, `,"done":`...)
		dst = strconv.AppendInt(dst, int64(b.done), 10)
		dst = append(dst, `,"result":"`...)
		dst = append(dst, b.out.String()...)
		dst = append(dst, '"')
		if b.errKind != "" {
			dst = append(dst, `,"error":`...)
			dst = strconv.AppendQuote(dst, b.errKind)
		}
		if b.op.Set {
			dst = append(dst, `,"size":`...)
			dst = strconv.AppendInt(dst, int64(b.op.Size), 10)
		}
		dst = append(dst, "}\n"...)
	}
	return dst
}
