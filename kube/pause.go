package kube

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/redline-dev/redline/cluster"
)

// Pausing on Kubernetes. Chaos Mesh has no pause (its PodChaos kills, its
// StressChaos loads), so a pause is a signal sent from inside the pod: an
// exec (pods/exec) into the server's container that sends SIGSTOP or
// SIGCONT to the server process. The pods share one process namespace
// (shareProcessNamespace), because the server would otherwise be PID 1 of
// its container, and the kernel drops a SIGSTOP sent to a namespace's init
// from inside it without a word.

// signalCommand is what the exec runs to send sig ("STOP" or "CONT") to the
// server: redline's own helper in redline's image (FROM scratch: no shell),
// a shell loop over /proc in a Redis image (no pkill or pidof needed).
func signalCommand(target, sig string) []string {
	if target == "redis" {
		return []string{"sh", "-c", `n=0; for d in /proc/[0-9]*; do read c < $d/comm 2>/dev/null || continue; ` +
			`[ "$c" = redis-server ] && kill -` + sig + ` ${d#/proc/} && n=$((n+1)); done; ` +
			`[ $n -gt 0 ] || { echo "no redis-server process in the pod" >&2; exit 1; }`}
	}
	return []string{"/redline", "kube", "signal", sig, "redline"}
}

// Pause freezes the node's server (SIGSTOP by exec) and checks the
// cluster's own view of it: a frozen server takes connections (the kernel
// accepts them) but answers no PING.
func (c *Cluster) Pause(ctx context.Context, node string) error {
	n, err := c.node(node)
	if err != nil {
		return err
	}
	if out, err := c.exec(ctx, node, signalCommand(c.plan.spec.Target, "STOP")); err != nil {
		return fmt.Errorf("kube: pause %s: %w%s", node, err, outputTail(out))
	}
	if !frozen(ctx, c.plan.spec.RunUser, n.Addr) {
		return fmt.Errorf("kube: pause %s: the exec sent SIGSTOP, but the server still answers PING", node)
	}
	return nil
}

// frozen says the server at addr leaves a PING unanswered for 300 ms, in
// one of five tries 100 ms apart (a stop takes effect a moment after the
// signal is sent).
func frozen(ctx context.Context, creds cluster.Credentials, addr string) bool {
	for range 5 {
		pctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		cl := creds.AdminClient(addr)
		err := cl.Ping(pctx).Err()
		cl.Close()
		cancel()
		if err != nil {
			return ctx.Err() == nil
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(100 * time.Millisecond):
		}
	}
	return false
}

// Resume sends SIGCONT by exec and waits until the server answers.
func (c *Cluster) Resume(ctx context.Context, node string) error {
	n, err := c.node(node)
	if err != nil {
		return err
	}
	if out, err := c.exec(ctx, node, signalCommand(c.plan.spec.Target, "CONT")); err != nil {
		return fmt.Errorf("kube: resume %s: %w%s", node, err, outputTail(out))
	}
	if err := waitPing(ctx, c.plan.spec.RunUser, n.Addr, 30*time.Second); err != nil {
		return fmt.Errorf("kube: resume %s: the exec sent SIGCONT, but the server does not answer PING: %w", node, err)
	}
	return nil
}

var _ cluster.Pauser = (*Cluster)(nil)

// exec runs command in the node's server container through the API server
// and returns what it wrote. WebSocket first, as kubectl does, SPDY for an
// API server older than 1.30.
func (c *Cluster) exec(ctx context.Context, node string, command []string) (string, error) {
	pod := podName(c.plan.name, node)
	req := c.rt.cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(c.plan.namespace).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: ContainerName, Command: command, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	spdy, err := remotecommand.NewSPDYExecutor(c.rt.cfg, "POST", req.URL())
	if err != nil {
		return "", err
	}
	ws, err := remotecommand.NewWebSocketExecutor(c.rt.cfg, "GET", req.URL().String())
	if err != nil {
		return "", err
	}
	ex, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &out, Stderr: &out})
	if err != nil {
		return out.String(), fmt.Errorf("exec %q in pod %s: %w (the Role needs pods/exec)", strings.Join(command, " "), pod, err)
	}
	return out.String(), nil
}

func outputTail(out string) string {
	out = strings.TrimSpace(out)
	if out == "" {
		return ""
	}
	if len(out) > 300 {
		out = "..." + out[len(out)-300:]
	}
	return ": " + out
}

// Signal sends sig ("STOP" or "CONT") to every process of this process
// namespace whose command name is comm, this process aside: `redline kube
// signal`, run by exec inside a node's pod. It checks that each stopped
// process did stop (or a continued one runs): PID 1 of a namespace ignores
// SIGSTOP sent from inside it, and kill says nothing of that.
func Signal(sig, comm string) (int, error) {
	s := map[string]syscall.Signal{"STOP": syscall.SIGSTOP, "CONT": syscall.SIGCONT}[strings.TrimPrefix(strings.ToUpper(sig), "SIG")]
	if s == 0 {
		return 0, fmt.Errorf("signal %q: want STOP or CONT", sig)
	}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	self := os.Getpid()
	var pids []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || pid == self {
			continue
		}
		b, err := os.ReadFile(filepath.Join(d, "comm"))
		if err != nil || strings.TrimSpace(string(b)) != comm {
			continue
		}
		if err := syscall.Kill(pid, s); err != nil {
			return len(pids), fmt.Errorf("kill -%s %d: %w", sig, pid, err)
		}
		pids = append(pids, pid)
	}
	if len(pids) == 0 {
		return 0, fmt.Errorf("no process named %s in this process namespace", comm)
	}
	for _, pid := range pids {
		if err := waitState(pid, s == syscall.SIGSTOP); err != nil {
			return len(pids), err
		}
	}
	return len(pids), nil
}

// waitState waits (up to a second) until pid is stopped, or no longer is.
func waitState(pid int, stopped bool) error {
	var st byte
	for range 100 {
		st = procState(pid)
		if st == 0 || (st == 'T') == stopped {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	if stopped {
		return fmt.Errorf("process %d did not stop (state %c): PID 1 of a namespace ignores SIGSTOP from inside it; the pod needs shareProcessNamespace", pid, st)
	}
	return fmt.Errorf("process %d is still stopped (state %c)", pid, st)
}

// procState is the state letter of /proc/PID/stat (0: no such process).
func procState(pid int) byte {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return 0
	}
	return s[i+2]
}
