package kube

// The fake node's kubelet endpoint: the API server sends a pod's exec and
// log requests (pods/exec, pods/log) to the kubelet of the Node the pod is
// bound to, at the Node's address and kubelet port. The fake registers a
// Node of its own, binds its pods to it, and serves those two requests
// over HTTPS as the kubelet does: an exec is upgraded to SPDY streams
// (protocol v4.channel.k8s.io: stdout, stderr and an error stream carrying
// the exit status), and acted out on the pod's local process; a log is the
// pod's server output.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/httpstream/spdy"
)

// startKubelet serves the kubelet endpoint and registers the fake's Node.
func (f *fakeNode) startKubelet() error {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(f.serveKubelet))
	srv.StartTLS()
	f.kubelet = srv
	_, portText, _ := net.SplitHostPort(srv.Listener.Addr().String())
	port, _ := strconv.Atoi(portText)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n, err := f.cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: f.nodeName}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("registering Node %s: %w", f.nodeName, err)
	}
	n.Status = corev1.NodeStatus{
		Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(port)}},
		Conditions:      []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now()}},
	}
	if _, err := f.cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("the status of Node %s: %w", f.nodeName, err)
	}
	return nil
}

func (f *fakeNode) stopKubelet() {
	if f.kubelet == nil {
		return
	}
	f.kubelet.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = f.cs.CoreV1().Nodes().Delete(ctx, f.nodeName, metav1.DeleteOptions{})
}

// serveKubelet routes /exec/NS/POD/CONTAINER and
// /containerLogs/NS/POD/CONTAINER, the two paths the API server uses here.
func (f *fakeNode) serveKubelet(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) != 4 || parts[1] != f.ns {
		http.Error(w, "the fake kubelet serves /exec and /containerLogs of namespace "+f.ns, http.StatusNotFound)
		return
	}
	f.mu.Lock()
	p := f.pods[parts[2]]
	f.mu.Unlock()
	if p == nil || parts[3] != ContainerName && (p.container == "" || parts[3] != p.container) {
		http.Error(w, fmt.Sprintf("no container %s in a running pod %s", parts[3], parts[2]), http.StatusNotFound)
		return
	}
	switch parts[0] {
	case "exec":
		f.serveExec(w, r, p, r.URL.Query()["command"])
	case "containerLogs":
		f.serveLogs(w, r, p)
	default:
		http.Error(w, "not served by the fake kubelet: "+parts[0], http.StatusNotFound)
	}
}

// serveLogs writes the pod's server output (its previous container's
// with previous=true), its last tailLines lines when asked.
func (f *fakeNode) serveLogs(w http.ResponseWriter, r *http.Request, p *fakePod) {
	f.mu.Lock()
	n := p.restarts
	f.mu.Unlock()
	if r.URL.Query().Get("previous") == "true" {
		if n == 0 {
			http.Error(w, fmt.Sprintf("previous terminated container %q in pod %q not found", ContainerName, p.name), http.StatusBadRequest)
			return
		}
		n--
	}
	fh, err := os.Open(p.logFile(n))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer fh.Close()
	tail := -1
	if s := r.URL.Query().Get("tailLines"); s != "" {
		tail, _ = strconv.Atoi(s)
	}
	var lines []string
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if tail >= 0 && len(lines) > tail {
			lines = lines[1:]
		}
	}
	w.Header().Set("Content-Type", "text/plain")
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	f.logf("served the log of pod %s (%d lines)", p.name, len(lines))
}

// serveExec upgrades the request to SPDY streams, acts the command out on
// the pod's process and reports its exit status on the error stream.
func (f *fakeNode) serveExec(w http.ResponseWriter, r *http.Request, p *fakePod, command []string) {
	if _, err := httpstream.Handshake(r, w, []string{"v4.channel.k8s.io"}); err != nil {
		f.t.Logf("fake kubelet: exec handshake: %v", err)
		return
	}
	want := 1 // the error stream
	for _, q := range []string{"input", "output", "error"} {
		if r.URL.Query().Get(q) == "1" {
			want++
		}
	}
	streams := make(chan httpstream.Stream, 8)
	conn := spdy.NewResponseUpgrader().UpgradeResponse(w, r, func(s httpstream.Stream, _ <-chan struct{}) error {
		streams <- s
		return nil
	})
	if conn == nil {
		return
	}
	defer conn.Close()
	got := map[string]httpstream.Stream{}
	timeout := time.After(10 * time.Second)
	for len(got) < want {
		select {
		case s := <-streams:
			got[s.Headers().Get(corev1.StreamType)] = s
		case <-timeout:
			f.t.Logf("fake kubelet: exec in %s: %d of %d streams after 10s", p.name, len(got), want)
			return
		}
	}
	out, err := f.execIn(p, command)
	if s := got[corev1.StreamTypeStdout]; s != nil {
		_, _ = s.Write([]byte(out))
		s.Close()
	}
	if s := got[corev1.StreamTypeStderr]; s != nil {
		if err != nil {
			_, _ = s.Write([]byte(err.Error() + "\n"))
		}
		s.Close()
	}
	status := metav1.Status{Status: metav1.StatusSuccess}
	if err != nil {
		status = metav1.Status{Status: metav1.StatusFailure, Reason: "NonZeroExitCode", Message: err.Error(),
			Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: "ExitCode", Message: "1"}}}}
	}
	b, _ := json.Marshal(status)
	_, _ = got[corev1.StreamTypeError].Write(b)
	got[corev1.StreamTypeError].Close()
}

// execIn acts out what redline execs in a pod: the signal of a pause or a
// resume (signalCommand), sent to the pod's process.
func (f *fakeNode) execIn(p *fakePod, command []string) (string, error) {
	sig := ""
	switch {
	case len(command) == 5 && command[1] == "kube" && command[2] == "signal":
		sig = command[3]
	case len(command) == 3 && command[0] == "sh" && strings.Contains(command[2], "kill -STOP"):
		sig = "STOP"
	case len(command) == 3 && command[0] == "sh" && strings.Contains(command[2], "kill -CONT"):
		sig = "CONT"
	default:
		return "", fmt.Errorf("the fake does not act out exec %q", command)
	}
	s := map[string]syscall.Signal{"STOP": syscall.SIGSTOP, "CONT": syscall.SIGCONT}[sig]
	if s == 0 {
		return "", fmt.Errorf("signal %q: want STOP or CONT", sig)
	}
	if f.pretends("signal") {
		f.logf("pretends to have sent SIG%s to pod %s", sig, p.name)
		return fmt.Sprintf("sent SIG%s to 1 processes\n", sig), nil
	}
	f.mu.Lock()
	proc := p.cmd.Process
	f.mu.Unlock()
	if err := proc.Signal(s); err != nil {
		return "", err
	}
	verb := map[string]string{"STOP": "paused", "CONT": "resumed"}[sig]
	f.logf("%s pod %s (SIG%s by exec)", verb, p.name, sig)
	return fmt.Sprintf("sent SIG%s to 1 processes\n", sig), nil
}
