package server

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/server/resp"
)

// TestCompareWithRedis sends testdata/compare.txt, one command a line, to
// this server and to a real redis-server (Debian's 7.0), over RESP2 and
// RESP3, and requires byte-identical replies. scripts/install-deps installs
// redis-server.
func TestCompareWithRedis(t *testing.T) {
	raddr := startRedisServer(t)
	s := startServer(t)
	data, err := os.ReadFile(compareFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	for _, proto := range []string{"2", "3"} {
		ref := dialRaw(t, s.Addr().String())
		red := dialRaw(t, raddr)
		for _, c := range []*rawClient{ref, red} {
			c.do(t, [][]byte{[]byte("FLUSHALL")})
			c.do(t, [][]byte{[]byte("HELLO"), []byte(proto)})
		}
		for n, line := range lines {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			argv, ok := resp.SplitArgs([]byte(line), nil)
			if !ok {
				t.Fatalf("line %d: bad quoting", n+1)
			}
			a, b := ref.do(t, argv), red.do(t, argv)
			if !bytes.Equal(a, b) {
				t.Errorf("RESP%s line %d %q:\n  ref   %q\n  redis %q", proto, n+1, line, a, b)
			}
		}
	}
}

// compareFile is testdata/compare.txt resolved before any test runs: a
// test that runs Main in-process changes the working directory (--dir).
var compareFile, _ = filepath.Abs("testdata/compare.txt")

// startRedisServer runs Debian's redis-server (7.0) on a free port for the
// test and returns its address; scripts/install-deps installs it.
func startRedisServer(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatal("redis-server is not installed: run scripts/install-deps (Debian package redis-server)")
	}
	port := freePort(t)
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	raddr := fmt.Sprintf("127.0.0.1:%d", port)
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", raddr)
		if err == nil {
			c.Close()
			return raddr
		}
		if i > 500 {
			t.Fatalf("redis-server did not start: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type rawClient struct {
	c   net.Conn
	r   *bufio.Reader
	buf []byte
}

func dialRaw(t *testing.T, addr string) *rawClient {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawClient{c: c, r: bufio.NewReader(c)}
}

// syncAsReplica connects to addr as a replica by the pre-PSYNC protocol
// and reads the snapshot ("$<len>\r\n" and the file, with no CRLF after
// it): what it reads next is the stream.
func syncAsReplica(t *testing.T, addr string) *rawClient {
	t.Helper()
	repl := dialRaw(t, addr)
	repl.send(t, splitTest(t, "SYNC"))
	line, err := repl.r.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "$") {
		t.Fatalf("SYNC: %q %v", line, err)
	}
	var n int
	fmt.Sscan(line[1:], &n)
	if _, err := io_ReadFull(repl.r, make([]byte, n)); err != nil {
		t.Fatal(err)
	}
	return repl
}

// do sends argv and returns the raw bytes of one reply.
func (rc *rawClient) do(t *testing.T, argv [][]byte) []byte {
	t.Helper()
	rc.send(t, argv)
	return rc.read(t)
}

func (rc *rawClient) send(t *testing.T, argv [][]byte) {
	t.Helper()
	req := resp.AppendArray(nil, len(argv))
	for _, a := range argv {
		req = resp.AppendBulk(req, a)
	}
	rc.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := rc.c.Write(req); err != nil {
		t.Fatal(err)
	}
}

// read returns the raw bytes of the next reply.
func (rc *rawClient) read(t *testing.T) []byte {
	t.Helper()
	rc.c.SetDeadline(time.Now().Add(10 * time.Second))
	for {
		if _, n, err := resp.ReadReply(rc.buf); err != nil {
			t.Fatal(err)
		} else if n > 0 {
			out := append([]byte(nil), rc.buf[:n]...)
			rc.buf = rc.buf[n:]
			return out
		}
		chunk := make([]byte, 4096)
		m, err := rc.r.Read(chunk)
		if err != nil {
			t.Fatalf("reading a reply: %v", err)
		}
		rc.buf = append(rc.buf, chunk[:m]...)
	}
}
