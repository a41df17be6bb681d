package checker

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/redline-dev/redline/history"
)

// servedCall is a call its slot's primary served, as the attribution's
// passes after the first read it (the slots' primaries before a span, the
// first call served after a span's last failures): of the call, only its
// times, its place among the invocations, its key's slot and its node.
type servedCall struct {
	start, end int64
	seq        int
	slot       int
	node       string
}

func servedCallOf(c *call, seq int) servedCall {
	return servedCall{start: c.start, end: c.end, seq: seq, slot: history.Keyslot(c.inv.Key), node: c.comp.Node}
}

func (s *servedCall) at() servedAt {
	return servedAt{end: s.end, start: s.start, seq: s.seq, node: s.node}
}

// servedLog keeps the served calls of one pass on disk, in the order the
// pass gave them, so that the attribution's later passes read them
// instead of scanning and pairing the history again (issue 42: at 150M
// entries each such scan took two minutes on one core; the log is some
// ten bytes a call, read in seconds). Each record is five varints: the
// differences of its seq and start from the last record's, its end less
// its start, its slot, and its node's number in a table kept in memory
// (a run has a few nodes; a history that lies about them costs a string
// each). The file is unlinked as soon as it is made: nothing is left
// behind whatever ends the check.
type servedLog struct {
	f      *os.File
	w      *bufio.Writer
	nodes  map[string]uint64
	names  []string
	n      int
	last   servedCall
	err    error
	buf    [5 * binary.MaxVarintLen64]byte
	closed bool
}

func newServedLog() (*servedLog, error) {
	f, err := os.CreateTemp("", "redline-served-")
	if err != nil {
		return nil, fmt.Errorf("the attribution's log of served calls: %w", err)
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, fmt.Errorf("the attribution's log of served calls: %w", err)
	}
	return &servedLog{f: f, w: bufio.NewWriterSize(f, 1<<20), nodes: map[string]uint64{}}, nil
}

// add logs s and returns the log's copy of its node's name (one a node,
// out of the scan's buffers).
func (l *servedLog) add(s servedCall) string {
	id, ok := l.nodes[s.node]
	if !ok {
		id = uint64(len(l.names))
		node := string([]byte(s.node))
		l.nodes[node] = id
		l.names = append(l.names, node)
	}
	if l.err != nil {
		return l.names[id]
	}
	b := binary.AppendVarint(l.buf[:0], int64(s.seq-l.last.seq))
	b = binary.AppendVarint(b, s.start-l.last.start)
	b = binary.AppendVarint(b, s.end-s.start)
	b = binary.AppendUvarint(b, uint64(s.slot))
	b = binary.AppendUvarint(b, id)
	if _, err := l.w.Write(b); err != nil {
		l.err = fmt.Errorf("the attribution's log of served calls: %w", err)
		return l.names[id]
	}
	l.last = s
	l.n++
	return l.names[id]
}

// replay gives each logged call to each, in the order they were added.
func (l *servedLog) replay(each func(s *servedCall)) error {
	if l.err != nil {
		return l.err
	}
	if l.closed {
		return errors.New("the attribution's log of served calls is closed")
	}
	if err := l.w.Flush(); err != nil {
		l.err = fmt.Errorf("the attribution's log of served calls: %w", err)
		return l.err
	}
	r := bufio.NewReaderSize(io.NewSectionReader(l.f, 0, 1<<62), 1<<20)
	var s servedCall
	for range l.n {
		var v [5]int64
		for j := range v {
			var err error
			if j < 3 {
				v[j], err = binary.ReadVarint(r)
			} else {
				var u uint64
				u, err = binary.ReadUvarint(r)
				v[j] = int64(u)
			}
			if err != nil {
				return fmt.Errorf("the attribution's log of served calls: reading it back: %w", err)
			}
		}
		if v[4] < 0 || v[4] >= int64(len(l.names)) {
			return fmt.Errorf("the attribution's log of served calls: node %d of %d", v[4], len(l.names))
		}
		s.seq += int(v[0])
		s.start += v[1]
		s.end = s.start + v[2]
		s.slot = int(v[3])
		s.node = l.names[v[4]]
		each(&s)
	}
	return nil
}

func (l *servedLog) close() {
	if !l.closed {
		l.closed = true
		l.f.Close()
	}
}
