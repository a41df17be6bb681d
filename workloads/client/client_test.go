package client

import (
	"bufio"
	"context"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin/localcluster"
	"github.com/redline-dev/redline/history"
)

// fakeNode answers CLUSTER SLOTS with itself for every slot and, for any
// other command, counts it and drops the connection without replying: the
// outcome of a write sent to it is unknown.
func fakeNode(t *testing.T) (addr string, writes *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	writes = new(atomic.Int64)
	host, port, _ := net.SplitHostPort(l.Addr().String())
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					args, err := readCommand(r)
					if err != nil {
						return
					}
					switch strings.ToLower(args[0]) {
					case "hello":
						c.Write([]byte("-ERR unknown command 'hello'\r\n"))
					case "client", "ping", "readwrite":
						c.Write([]byte("+OK\r\n"))
					case "cluster":
						c.Write([]byte("*1\r\n*3\r\n:0\r\n:16383\r\n*2\r\n$" + itoa(len(host)) + "\r\n" + host + "\r\n:" + port + "\r\n"))
					default:
						writes.Add(1)
						return // reply lost
					}
				}
			}()
		}
	}()
	return l.Addr().String(), writes
}

func itoa(n int) string { return strconv.Itoa(n) }

func readCommand(r *bufio.Reader) ([]string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n := 0
	for _, ch := range strings.TrimSpace(line[1:]) {
		n = n*10 + int(ch-'0')
	}
	args := make([]string, n)
	for i := range args {
		if _, err := r.ReadString('\n'); err != nil {
			return nil, err
		}
		v, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		args[i] = strings.TrimSuffix(v, "\r\n")
	}
	return args, nil
}

// A write whose reply is lost is sent exactly once and reported info.
func TestNoHiddenRetries(t *testing.T) {
	addr, writes := fakeNode(t)
	ctx := context.Background()
	c, err := New(ctx, Options{Seeds: []string{addr}, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := c.Do(ctx, Request{Slot: 5, Build: func(ctx context.Context) []redis.Cmder {
		return []redis.Cmder{redis.NewIntCmd(ctx, "incr", "k")}
	}})
	if r.Outcome != history.Info {
		t.Fatalf("outcome %v (%v), want info", r.Outcome, r.Err)
	}
	time.Sleep(100 * time.Millisecond)
	if n := writes.Load(); n != 1 {
		t.Fatalf("the write reached the server %d times, want exactly 1", n)
	}
}

func TestClassify(t *testing.T) {
	if Classify(nil) != history.OK || Classify(redis.Nil) != history.OK {
		t.Fatal("nil and redis.Nil are successes")
	}
	if Classify(redis.ErrPoolTimeout) != history.Fail {
		t.Fatal("pool timeout: never sent")
	}
	if Classify(&net.OpError{Op: "dial", Err: errString("refused")}) != history.Fail {
		t.Fatal("dial errors: never sent")
	}
	if Classify(&net.OpError{Op: "read", Err: errString("reset")}) != history.Info {
		t.Fatal("read errors: unknown")
	}
	if Classify(context.DeadlineExceeded) != history.Info {
		t.Fatal("timeouts: unknown")
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// MOVED and ASK are followed (the command had not run) and counted.
func TestRedirects(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	lc, err := localcluster.Start(ctx, t.TempDir(), 3, 0, time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Stop()
	c, err := New(ctx, Options{Seeds: lc.Addrs, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	const key, slot = "foo", 12182 // CLUSTER KEYSLOT foo
	owner := c.Primary(slot)
	var other string
	for _, a := range lc.Addrs {
		if a != owner {
			other = a
			break
		}
	}

	// A stale map sends the write to the wrong node: MOVED, followed once.
	c.setSlot(slot, other)
	r := c.Do(ctx, Request{Slot: slot, Build: func(ctx context.Context) []redis.Cmder {
		return []redis.Cmder{redis.NewStatusCmd(ctx, "set", key, "1")}
	}})
	if r.Outcome != history.OK || r.Redirects != 1 || r.Node != owner {
		t.Fatalf("MOVED: outcome %v err %v redirects %d node %s (owner %s)", r.Outcome, r.Err, r.Redirects, r.Node, owner)
	}

	// Slot migrating from owner to other, key absent on owner: ASK.
	text, err := c.Node(owner).ClusterNodes(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := cluster.ParseNodes(text)
	if err != nil {
		t.Fatal(err)
	}
	id := map[string]string{}
	for _, n := range nodes {
		id[n.Addr] = n.ID
	}
	oc, xc := c.Node(owner), c.Node(other)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(xc.Do(ctx, "cluster", "setslot", slot, "importing", id[owner]).Err())
	must(oc.Do(ctx, "cluster", "setslot", slot, "migrating", id[other]).Err())
	must(oc.Del(ctx, key).Err())
	r = c.Do(ctx, Request{Slot: slot, Build: func(ctx context.Context) []redis.Cmder {
		return []redis.Cmder{redis.NewStatusCmd(ctx, "set", key, "2")}
	}})
	if r.Outcome != history.OK || r.Redirects != 1 || r.Node != other {
		t.Fatalf("ASK: outcome %v err %v redirects %d node %s (target %s)", r.Outcome, r.Err, r.Redirects, r.Node, other)
	}
}
