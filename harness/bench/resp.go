package bench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"
)

// conn is one raw RESP2 connection of one worker to one node. The load
// path does not go through go-redis: a command is appended to a reused
// buffer and a reply is parsed in place, so an op costs no allocation
// (go-redis allocates a command object, its arguments and a reply per op,
// which made the generator, not the cluster, the limit).
type conn struct {
	nc  net.Conn
	r   *bufio.Reader
	out []byte
}

func dial(addr string, timeout time.Duration) (*conn, error) {
	nc, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	return &conn{nc: nc, r: bufio.NewReaderSize(nc, 64<<10), out: make([]byte, 0, 64<<10)}, nil
}

func (c *conn) close() { _ = c.nc.Close() }

// appendCmd appends a RESP array of bulk strings.
func appendCmd(dst []byte, args ...[]byte) []byte {
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(len(args)), 10)
	dst = append(dst, '\r', '\n')
	for _, a := range args {
		dst = append(dst, '$')
		dst = strconv.AppendInt(dst, int64(len(a)), 10)
		dst = append(dst, '\r', '\n')
		dst = append(dst, a...)
		dst = append(dst, '\r', '\n')
	}
	return dst
}

var (
	cmdGET    = []byte("GET")
	cmdSET    = []byte("SET")
	cmdASKING = []byte("ASKING")
)

// flush sends the buffered commands before deadline.
func (c *conn) flush(deadline time.Time) error {
	if err := c.nc.SetDeadline(deadline); err != nil {
		return err
	}
	_, err := c.nc.Write(c.out)
	c.out = c.out[:0]
	return err
}

// reply is what a command returned, without copying the value.
type reply struct {
	kind byte // '+', '-', ':', '$', '*'
	nil  bool // $-1 or *-1
	// err is the error line of a '-' reply (valid until the next read).
	err []byte
	// size is the reply's bytes on the wire (KB/sec counts them).
	size int
}

var errProtocol = errors.New("protocol error: unexpected reply from the server")

// readReply reads one reply and skips its payload.
func (c *conn) readReply() (reply, error) {
	line, err := c.line()
	if err != nil || len(line) == 0 {
		if err == nil {
			err = errProtocol
		}
		return reply{}, err
	}
	rp := reply{kind: line[0], size: len(line) + 2}
	switch line[0] {
	case '+', ':':
	case '-':
		rp.err = line[1:]
	case '$':
		n, err := atoi(line[1:])
		if err != nil {
			return rp, err
		}
		if n < 0 {
			rp.nil = true
			break
		}
		if _, err := c.r.Discard(n + 2); err != nil {
			return rp, err
		}
		rp.size += n + 2
	case '*':
		n, err := atoi(line[1:])
		if err != nil {
			return rp, err
		}
		if n < 0 {
			rp.nil = true
		}
		for i := 0; i < n; i++ {
			el, err := c.readReply()
			if err != nil {
				return rp, err
			}
			rp.size += el.size
		}
	default:
		return rp, errProtocol
	}
	return rp, nil
}

// line returns one CRLF-terminated line without the CRLF. The slice is
// valid until the next read.
func (c *conn) line() ([]byte, error) {
	b, err := c.r.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, errProtocol
		}
		return nil, err
	}
	if len(b) < 2 || b[len(b)-2] != '\r' {
		return nil, errProtocol
	}
	return b[:len(b)-2], nil
}

func atoi(b []byte) (int, error) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, errProtocol
	}
	n := 0
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return 0, errProtocol
		}
		n = n*10 + int(ch-'0')
	}
	if neg {
		n = -n
	}
	return n, nil
}

// redirect parses "MOVED 3999 10.0.0.5:6379" or "ASK ..." error lines.
func redirect(errLine []byte) (kind string, addr string, ok bool) {
	for _, k := range []string{"MOVED ", "ASK "} {
		if bytes.HasPrefix(errLine, []byte(k)) {
			rest := errLine[len(k):]
			if i := bytes.IndexByte(rest, ' '); i >= 0 {
				return k[:len(k)-1], string(rest[i+1:]), true
			}
		}
	}
	return "", "", false
}

// errorKind names an error reply by its first word (CLUSTERDOWN, TRYAGAIN, ...).
func errorKind(errLine []byte) string {
	if i := bytes.IndexByte(errLine, ' '); i > 0 {
		errLine = errLine[:i]
	}
	return string(errLine)
}

// serverError is an error reply, kept as text for the log.
type serverError struct{ line string }

func (e serverError) Error() string { return fmt.Sprintf("server replied -%s", e.line) }
