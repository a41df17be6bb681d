package clientlib

import (
	"bufio"
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/workloads"
)

// ProtocolVersion is the version of PROTOCOL.md this side speaks.
const ProtocolVersion = 1

//go:embed adapters/redis_py_adapter.py adapters/node_redis_adapter.js
var adapters embed.FS

// helloTimeout bounds the adapter's start and handshake.
const helloTimeout = 30 * time.Second

// execClient talks to a client process over its stdin and stdout, one
// JSON object per line. Ops are matched to completions by id only: the
// process may complete them in any order, as its library does.
type execClient struct {
	proc  *exec.Cmd
	stdin io.WriteCloser
	wmu   sync.Mutex
	meta  Info
	// patience is how long an op waits for its completion before it is
	// recorded as info and abandoned (its late completion is dropped).
	patience time.Duration
	timeout  time.Duration

	nextID    atomic.Uint64
	mu        sync.Mutex
	pending   map[uint64]chan wireCompletion
	abandoned map[uint64]bool
	protoErr  error
	readDone  chan struct{}
	readErr   error
	tmpDir    string
	closeOnce sync.Once
	closeErr  error
}

// wireHello is the first line each side writes.
type wireHello struct {
	Type        string   `json:"type"` // "hello" (or "error" from the adapter)
	Protocol    int      `json:"protocol"`
	Seeds       []string `json:"seeds,omitempty"`
	TimeoutMS   int64    `json:"timeout_ms,omitempty"`
	Concurrency int      `json:"concurrency,omitempty"`
	Username    string   `json:"username,omitempty"`
	Password    string   `json:"password,omitempty"`
	// The adapter's answer.
	Library      string `json:"library,omitempty"`
	Version      string `json:"version,omitempty"`
	Language     string `json:"language,omitempty"`
	Options      string `json:"options,omitempty"`
	Retries      string `json:"retries,omitempty"`
	ReplicaReads bool   `json:"replica_reads,omitempty"`
	Sees         string `json:"sees,omitempty"`
	Error        string `json:"error,omitempty"`
}

// wireOp is one op line.
type wireOp struct {
	ID       uint64          `json:"id"`
	Workload string          `json:"workload"`
	F        string          `json:"f"`
	Key      string          `json:"key"`
	Value    json.RawMessage `json:"value,omitempty"`
	Cmd      []string        `json:"cmd"`
	ReadOnly bool            `json:"readonly"`
}

// wireCompletion is one completion line.
type wireCompletion struct {
	ID        *uint64  `json:"id"`
	Type      string   `json:"type"`
	Value     any      `json:"value"`
	Error     string   `json:"error"`
	ElapsedMS *float64 `json:"elapsed_ms"`
	Node      string   `json:"node"`
	Attempts  int      `json:"attempts"`
	Resent    int      `json:"resent"`
	Replica   bool     `json:"replica"`
}

// reply is the completion as a library's reply (its type checked on arrival).
func (c wireCompletion) reply() workloads.LibReply {
	t, _ := history.ParseType(c.Type)
	return workloads.LibReply{Type: t, Reply: c.Value, Error: c.Error, Node: c.Node,
		Attempts: c.Attempts, Resent: c.Resent, Replica: c.Replica}
}

func openRedisPy(ctx context.Context, name string, o Options) (backend, error) {
	py := "python3"
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		py = "/usr/bin/python3" // Debian's, where python3-redis lives
	}
	return openBundled(ctx, name, "adapters/redis_py_adapter.py", []string{py}, nil, o)
}

func openNodeRedis(ctx context.Context, name string, o Options) (backend, error) {
	env := []string{"NODE_PATH=/usr/share/nodejs" + string(os.PathListSeparator) + os.Getenv("NODE_PATH")}
	return openBundled(ctx, name, "adapters/node_redis_adapter.js", []string{"node"}, env, o)
}

// openBundled writes an embedded adapter to a scratch directory and runs it.
func openBundled(ctx context.Context, name, file string, interp, env []string, o Options) (backend, error) {
	src, err := adapters.ReadFile(file)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "redline-client-")
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, filepath.Base(file))
	if err := os.WriteFile(path, src, 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	c := exec.Command(interp[0], append(interp[1:], path)...)
	c.Env = append(os.Environ(), env...)
	b, err := startExec(ctx, name, c, o)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	b.tmpDir = dir
	return b, nil
}

// openExec runs exec:CMD through the shell.
func openExec(ctx context.Context, name, command string, env []string, o Options) (backend, error) {
	if o.TLSConfig != nil {
		return nil, errors.New("exec clients get no TLS settings over the protocol (version 1): use a TLS-less cluster or an in-process client")
	}
	c := exec.Command("/bin/sh", "-c", command)
	c.Env = append(os.Environ(), env...)
	b, err := startExec(ctx, name, c, o)
	if err != nil {
		return nil, fmt.Errorf("client %s: %w", name, err)
	}
	return b, nil
}

func startExec(ctx context.Context, name string, c *exec.Cmd, o Options) (*execClient, error) {
	stdin, err := c.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := c.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if o.Log != nil {
		c.Stderr = &prefixWriter{w: o.Log, prefix: "client " + name + ": "}
	}
	if err := c.Start(); err != nil {
		return nil, fmt.Errorf("starting %v: %w", c.Args, err)
	}
	e := &execClient{proc: c, stdin: stdin, pending: map[uint64]chan wireCompletion{}, abandoned: map[uint64]bool{},
		readDone: make(chan struct{}), patience: max(10*o.Timeout, 30*time.Second), timeout: o.Timeout}
	lines := bufio.NewReaderSize(stdout, 1<<20)

	hello := wireHello{Type: "hello", Protocol: ProtocolVersion, Seeds: o.Seeds, TimeoutMS: o.Timeout.Milliseconds(),
		Concurrency: o.Concurrency, Username: o.Username, Password: o.Password}
	type answer struct {
		h   wireHello
		err error
	}
	got := make(chan answer, 1)
	go func() {
		line, err := lines.ReadBytes('\n')
		if err != nil {
			got <- answer{err: fmt.Errorf("the client process sent no hello line (%v)", err)}
			return
		}
		var h wireHello
		if err := json.Unmarshal(line, &h); err != nil {
			got <- answer{err: fmt.Errorf("the client's first line is no JSON hello: %q", bytes.TrimSpace(line))}
			return
		}
		got <- answer{h: h}
	}()
	var a answer
	if err := e.writeLine(hello); err != nil {
		// The process may have died saying why: its line first.
		select {
		case a = <-got:
		case <-time.After(2 * time.Second):
		}
		if a.err == nil && a.h.Type == "" {
			a.err = fmt.Errorf("sending the hello line: %w", err)
		}
	}
	if a.err == nil && a.h.Type == "" {
		select {
		case a = <-got:
		case <-time.After(helloTimeout):
			a.err = fmt.Errorf("no hello line from the client process within %s", helloTimeout)
		case <-ctx.Done():
			a.err = ctx.Err()
		}
	}
	switch {
	case a.err != nil:
	case a.h.Type == "error":
		a.err = fmt.Errorf("the client process refused to start: %s", a.h.Error)
	case a.h.Type != "hello":
		a.err = fmt.Errorf("the client's first line has type %q, want hello", a.h.Type)
	case a.h.Protocol != ProtocolVersion:
		a.err = fmt.Errorf("the client speaks protocol %d, redline speaks %d", a.h.Protocol, ProtocolVersion)
	case a.h.Library == "" || a.h.Version == "":
		a.err = errors.New("the client's hello names no library or version")
	}
	if a.err != nil {
		e.kill()
		return nil, a.err
	}
	h := a.h
	lib := h.Library
	if h.Language != "" {
		lib += " (" + h.Language + ")"
	}
	e.meta = Info{Name: name, Library: lib, Version: h.Version, Options: h.Options, Retries: h.Retries,
		ReplicaReads: h.ReplicaReads, Sees: h.Sees}
	if e.meta.Retries == "" {
		e.meta.Retries = "not stated by the adapter"
	}
	go e.read(lines)
	return e, nil
}

func (e *execClient) info() Info { return e.meta }

func (e *execClient) writeLine(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	e.wmu.Lock()
	defer e.wmu.Unlock()
	_, err = e.stdin.Write(b)
	return err
}

// read delivers completions until the process closes its stdout.
func (e *execClient) read(r *bufio.Reader) {
	defer close(e.readDone)
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			e.deliver(line)
		}
		if err != nil {
			if err != io.EOF {
				e.readErr = err
			}
			return
		}
	}
}

func (e *execClient) violation(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.protoErr == nil {
		e.protoErr = fmt.Errorf("client protocol broken: "+format, args...)
	}
}

func (e *execClient) deliver(line []byte) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var c wireCompletion
	if err := dec.Decode(&c); err != nil {
		e.violation("a line that is no JSON completion: %q", bytes.TrimSpace(line))
		return
	}
	if c.ID == nil {
		e.violation("a completion without an id: %q", bytes.TrimSpace(line))
		return
	}
	if _, ok := history.ParseType(c.Type); !ok || c.Type == "invoke" {
		e.violation("completion %d has type %q, want ok, fail or info", *c.ID, c.Type)
		return
	}
	e.mu.Lock()
	ch, ok := e.pending[*c.ID]
	delete(e.pending, *c.ID)
	late := e.abandoned[*c.ID]
	delete(e.abandoned, *c.ID)
	e.mu.Unlock()
	switch {
	case ok:
		ch <- c
	case late:
		// Recorded as info already: the op's outcome stays unknown.
	default:
		e.violation("completion for id %d, which is not in flight (completed twice, or never sent)", *c.ID)
	}
}

func (e *execClient) do(ctx context.Context, op workloads.LibOp, w workloads.Workload, inv history.Op) workloads.LibReply {
	select {
	case <-e.readDone:
		// Nothing is sent to a dead process: a certain failure. Paced by
		// the op timeout, so the workers do not spin until the time limit
		// (the run then fails: Close reports the exit).
		time.Sleep(e.timeout)
		return workloads.LibReply{Type: history.Fail, Error: "the client process has exited (its stderr is in run.log)"}
	default:
	}
	id := e.nextID.Add(1)
	ch := make(chan wireCompletion, 1)
	e.mu.Lock()
	e.pending[id] = ch
	e.mu.Unlock()
	abandon := func(why string) workloads.LibReply {
		e.mu.Lock()
		if _, still := e.pending[id]; still {
			delete(e.pending, id)
			e.abandoned[id] = true
		}
		e.mu.Unlock()
		return workloads.LibReply{Type: history.Info, Error: why}
	}
	line := wireOp{ID: id, Workload: w.Name(), F: inv.F, Key: inv.Key, Value: inv.Value, Cmd: op.Args, ReadOnly: op.ReadOnly}
	if err := e.writeLine(line); err != nil {
		// A write to a dead process may still have reached it.
		return abandon("could not send the op to the client process: " + err.Error())
	}
	timer := time.NewTimer(e.patience)
	defer timer.Stop()
	select {
	case c := <-ch:
		return c.reply()
	case <-e.readDone:
		select {
		case c := <-ch: // delivered just before the end
			return c.reply()
		default:
		}
		return abandon("the client process exited with the op in flight")
	case <-timer.C:
		return abandon(fmt.Sprintf("no completion from the client process within %s", e.patience))
	case <-ctx.Done():
		return abandon("interrupted: " + ctx.Err().Error())
	}
}

func (e *execClient) kill() {
	_ = e.stdin.Close()
	if e.proc.Process != nil {
		_ = e.proc.Process.Kill()
	}
	_ = e.proc.Wait()
	if e.tmpDir != "" {
		os.RemoveAll(e.tmpDir)
	}
}

// close ends the process: stdin closed is its signal to finish and exit.
func (e *execClient) close() error {
	e.closeOnce.Do(func() {
		_ = e.stdin.Close()
		exited := make(chan error, 1)
		go func() {
			<-e.readDone
			exited <- e.proc.Wait()
		}()
		var werr error
		select {
		case werr = <-exited:
		case <-time.After(10 * time.Second):
			_ = e.proc.Process.Kill()
			werr = <-exited
			werr = fmt.Errorf("the client process did not exit within 10 s of its stdin closing (killed): %v", werr)
		}
		if e.tmpDir != "" {
			os.RemoveAll(e.tmpDir)
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		switch {
		case e.protoErr != nil:
			e.closeErr = e.protoErr
		case e.readErr != nil:
			e.closeErr = fmt.Errorf("reading the client's completions: %w", e.readErr)
		case werr != nil:
			e.closeErr = fmt.Errorf("the client process: %w", werr)
		}
	})
	return e.closeErr
}

// prefixWriter prefixes each line written to w.
type prefixWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			break
		}
		fmt.Fprintf(p.w, "%s%s\n", p.prefix, p.buf[:i])
		p.buf = p.buf[i+1:]
	}
	return len(b), nil
}
