package server

import (
	"bufio"
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/server/cluster/bus"
	"github.com/redline-dev/redline/server/config"
	"github.com/redline-dev/redline/server/store"
)

// startServer runs a server on a free loopback port for the test. A
// cluster-enabled server's bus runs over memory: port+10000 of a random
// port may not exist.
func startServer(t testing.TB, args ...string) *Server {
	t.Helper()
	return startServerWith(t, Options{Log: io.Discard, Clock: store.NewClock(nil), ClusterTransport: bus.NewMemNetwork()}, args...)
}

// startExtServer runs a server whose cluster bus and replica links use
// TCP, as Main's do.
func startExtServer(t testing.TB, args ...string) *Server {
	t.Helper()
	return startServerWith(t, Options{Log: io.Discard}, args...)
}

// startServerWith runs a server with opts on a free loopback port, in a
// directory of the test's, until the test ends.
func startServerWith(t testing.TB, opts Options, args ...string) *Server {
	t.Helper()
	cfg, err := config.ParseArgs(append([]string{"--port", "0", "--bind", "127.0.0.1", "--dir", t.TempDir()}, args...))
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newClient(t testing.TB, s *Server, proto int) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{
		Addr:            s.Addr().String(),
		Protocol:        proto,
		DisableIdentity: true,
		MaxRetries:      -1,
		ReadTimeout:     10 * time.Second,
	})
	t.Cleanup(func() { c.Close() })
	return c
}

var ctx = context.Background()

func io_ReadFull(r *bufio.Reader, b []byte) (int, error) { return io.ReadFull(r, b) }

func netDial(addr string) (net.Conn, error) { return net.Dial("tcp", addr) }

// recordPropagation makes s's propagation tap record each write as its
// space-joined argv; the returned function gives what was recorded so far,
// one line per write.
func recordPropagation(s *Server) func() string {
	var mu sync.Mutex
	var stream []string
	s.Lock()
	s.propagationTap = func(db int, argv [][]byte) {
		mu.Lock()
		defer mu.Unlock()
		parts := make([]string, len(argv))
		for i, a := range argv {
			parts[i] = string(a)
		}
		stream = append(stream, strings.Join(parts, " "))
	}
	s.Unlock()
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(stream, "\n")
	}
}
