package kube

// fakeNode plays, against the real API server, the parts of Kubernetes
// that are not there, the way kwok does: the StatefulSet controller
// (creates the pods), the garbage collector (removes the pods of a deleted
// StatefulSet), the kubelet (runs each pod's container as a local process
// on loopback, sets the pod Running and Ready with its IP, restarts a
// killed container, serves an exec into a pod and its log:
// fake_kubelet_test.go) and Chaos Mesh's controller and daemon (acts out
// NetworkChaos partitions, delays and losses, PodChaos container kills and
// TimeChaos on those processes, writes the objects' status, holds them with
// a finalizer until it has recovered their targets).
//
// Each pod's IP is a loopback address of its own, 127.0.N.k. The server
// listens on a twin address, 127.1.N.k (the one argument the fake adds:
// --bind), and a proxy on the pod IP forwards the client and bus ports to
// it. The proxy knows which pod a connection comes from by the socket's
// owner (/proc), so a partition stops exactly the pod-to-pod traffic it
// names, as a packet filter in the pod's network namespace would, and a
// delay or loss holds what the pod sends (its replies and what it dials
// out), as netem on the pod's interface would.

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/redline-dev/redline/cluster"
)

const chaosFinalizer = "chaos-mesh/records"

type fakeNode struct {
	t      *testing.T
	cs     kubernetes.Interface
	dyn    dynamic.Interface
	ns     string
	binary map[string]string // container command[0] -> local program
	subnet int               // N of 127.0.N.k
	dir    string

	mu      sync.Mutex
	pods    map[string]*fakePod // running, by pod name
	nextIP  int
	blocked map[[2]string]bool  // pod pairs a partition cuts, both orders
	chaos   map[string]bool     // chaos objects injected ("kind/name")
	shape   map[string]podShape // NetworkChaos delay and loss in force, by pod
	pretend map[string]bool     // actions reported injected and not acted out (Pretend)
	events  []string            // what it did, for the test
	conns   map[*proxyConn]bool

	jobPods map[string]bool // Job pods made, by name (fake_job_test.go)

	nodeName string           // the Node the pods are bound to
	kubelet  *httptest.Server // its kubelet endpoint (fake_kubelet_test.go)

	stop chan struct{}
	done chan struct{}
}

type fakePod struct {
	name     string
	podIP    string
	backIP   string
	argv     []string
	dir      string
	restarts int32
	// env is added to the process's environment; container names a Job
	// pod's container ("": the server's, ContainerName).
	env       []string
	container string
	cmd       *exec.Cmd
	exited    chan struct{}
	lns       []net.Listener
}

func startFakeNode(t *testing.T, cfg *rest.Config, ns string, binary map[string]string) *fakeNode {
	t.Helper()
	f := &fakeNode{
		t: t, cs: kubernetes.NewForConfigOrDie(cfg), dyn: dynamic.NewForConfigOrDie(cfg), ns: ns, binary: binary,
		subnet: 100 + rand.IntN(150), dir: t.TempDir(),
		pods: map[string]*fakePod{}, blocked: map[[2]string]bool{}, chaos: map[string]bool{}, conns: map[*proxyConn]bool{},
		shape: map[string]podShape{}, pretend: map[string]bool{}, jobPods: map[string]bool{},
		stop: make(chan struct{}), done: make(chan struct{}), nextIP: 10,
		nodeName: "redline-fake-" + ns,
	}
	if err := f.startKubelet(); err != nil {
		t.Fatal(err)
	}
	go f.loop()
	t.Cleanup(f.close)
	return f
}

func (f *fakeNode) close() {
	select {
	case <-f.stop:
		return
	default:
	}
	close(f.stop)
	<-f.done
	f.stopKubelet()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.pods {
		f.stopPod(p)
	}
}

func (f *fakeNode) logf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	f.mu.Lock()
	f.events = append(f.events, msg)
	f.mu.Unlock()
	f.t.Logf("fake: %s", msg)
}

// Events returns what the fake did so far.
func (f *fakeNode) Events() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.events)
}

// Pretend makes the fake report a chaos action injected from now on
// without acting it out (on false: act it out again), as a Chaos Mesh
// whose daemon failed silently would: what a test of redline's own
// evidence of a fault needs.
func (f *fakeNode) Pretend(action string, on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pretend[action] = on
}

func (f *fakeNode) pretends(action string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pretend[action]
}

// Running lists the pods whose process runs.
func (f *fakeNode) Running() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for name, p := range f.pods {
		select {
		case <-p.exited:
		default:
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

func (f *fakeNode) loop() {
	defer close(f.done)
	for {
		select {
		case <-f.stop:
			return
		case <-time.After(100 * time.Millisecond):
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		if err := f.sync(ctx); err != nil && ctx.Err() == nil {
			f.t.Logf("fake: sync: %v", err)
		}
		cancel()
	}
}

func (f *fakeNode) sync(ctx context.Context) error {
	ss, err := f.cs.AppsV1().StatefulSets(f.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	pods, err := f.cs.CoreV1().Pods(f.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	have := map[string]*corev1.Pod{}
	for i := range pods.Items {
		have[pods.Items[i].Name] = &pods.Items[i]
	}
	sets := map[string]bool{}
	// The StatefulSet controller: pods <name>-0 ... with the template.
	for _, s := range ss.Items {
		sets[s.Name] = true
		if s.DeletionTimestamp != nil {
			continue
		}
		for i := 0; i < int(*s.Spec.Replicas); i++ {
			name := s.Name + "-" + strconv.Itoa(i)
			if have[name] != nil {
				continue
			}
			labels := map[string]string{LabelPodName: name}
			for k, v := range s.Spec.Template.Labels {
				labels[k] = v
			}
			yes := true
			p := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns, Labels: labels, OwnerReferences: []metav1.OwnerReference{{
					APIVersion: "apps/v1", Kind: "StatefulSet", Name: s.Name, UID: s.UID, Controller: &yes,
				}}},
				Spec: *s.Spec.Template.Spec.DeepCopy(),
			}
			p.Spec.Hostname, p.Spec.Subdomain = name, s.Spec.ServiceName
			p.Spec.NodeName = f.nodeName // bound at once: no scheduler runs
			if _, err := f.cs.CoreV1().Pods(f.ns).Create(ctx, p, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("creating pod %s: %w", name, err)
			}
		}
	}
	if err := f.syncJobs(ctx, have); err != nil {
		return err
	}
	// The garbage collector and the kubelet.
	for name, p := range have {
		owned := len(p.OwnerReferences) > 0 && p.OwnerReferences[0].Kind == "StatefulSet"
		if owned && !sets[p.OwnerReferences[0].Name] && p.DeletionTimestamp == nil {
			_ = f.cs.CoreV1().Pods(f.ns).Delete(ctx, name, metav1.DeleteOptions{})
			continue
		}
		if p.Spec.NodeName != f.nodeName {
			continue // not bound to this node: another kubelet's (none here)
		}
		if p.DeletionTimestamp != nil {
			// A bound pod's deletion waits for its kubelet: stop the
			// container, then delete it for good (grace 0), as the
			// kubelet does once its containers have exited.
			f.mu.Lock()
			if fp := f.pods[name]; fp != nil {
				f.stopPod(fp)
				delete(f.pods, name)
				f.events = append(f.events, "stopped pod "+name)
			}
			f.mu.Unlock()
			zero := int64(0)
			if err := f.cs.CoreV1().Pods(f.ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !apierrors.IsNotFound(err) {
				f.t.Logf("fake: deleting pod %s: %v", name, err)
			}
			continue
		}
		f.mu.Lock()
		_, running := f.pods[name]
		f.mu.Unlock()
		if !running && p.DeletionTimestamp == nil && p.Labels[labelJobName] != "" {
			if err := f.startJobPod(p); err != nil {
				f.t.Logf("fake: starting job pod %s: %v", name, err)
			}
			continue
		}
		if !running && p.DeletionTimestamp == nil {
			if err := f.startPod(ctx, p); err != nil {
				f.t.Logf("fake: starting pod %s: %v", name, err)
			}
		}
	}
	f.mu.Lock()
	for name, p := range f.pods {
		if have[name] == nil {
			f.stopPod(p)
			delete(f.pods, name)
			f.events = append(f.events, "stopped pod "+name)
		}
	}
	f.mu.Unlock()
	return f.syncChaos(ctx)
}

// startPod runs the pod's container on loopback and reports it Running
// and, once the server accepts connections, Ready.
func (f *fakeNode) startPod(ctx context.Context, pod *corev1.Pod) error {
	c := pod.Spec.Containers[0]
	prog, ok := f.binary[c.Command[0]]
	if !ok {
		return fmt.Errorf("no local program for %q", c.Command[0])
	}
	f.mu.Lock()
	k := f.nextIP
	f.nextIP++
	f.mu.Unlock()
	p := &fakePod{
		name:   pod.Name,
		podIP:  fmt.Sprintf("127.0.%d.%d", f.subnet, k),
		backIP: fmt.Sprintf("127.1.%d.%d", f.subnet, k),
		dir:    filepath.Join(f.dir, pod.Name),
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = filepath.Join(p.dir, m.Name)
		if err := os.MkdirAll(mounts[m.MountPath], 0o755); err != nil {
			return err
		}
	}
	env := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "status.podIP" {
			env[e.Name] = p.podIP
		} else if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name" {
			env[e.Name] = pod.Name
		} else {
			env[e.Name] = e.Value
		}
	}
	p.argv = append([]string{prog}, c.Command[1:]...)
	for _, a := range c.Args {
		for k, v := range env { // the kubelet's $(VAR) expansion
			a = strings.ReplaceAll(a, "$("+k+")", v)
		}
		if d, ok := mounts[a]; ok {
			a = d
		}
		p.argv = append(p.argv, a)
	}
	p.argv = append(p.argv, "--bind", p.backIP)
	for _, port := range []int{Port, Port + 10000} {
		ln, err := net.Listen("tcp", net.JoinHostPort(p.podIP, strconv.Itoa(port)))
		if err != nil {
			for _, l := range p.lns {
				l.Close()
			}
			return err
		}
		p.lns = append(p.lns, ln)
		go f.serveProxy(p, ln, net.JoinHostPort(p.backIP, strconv.Itoa(port)))
	}
	if err := f.run(p); err != nil {
		return err
	}
	f.mu.Lock()
	f.pods[p.name] = p
	f.mu.Unlock()
	f.logf("started pod %s at %s", p.name, p.podIP)
	go f.reportReady(p)
	return nil
}

func (f *fakeNode) run(p *fakePod) error {
	f.mu.Lock()
	restarts := p.restarts
	f.mu.Unlock()
	logf, err := os.OpenFile(p.logFile(restarts), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(p.argv[0], p.argv[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = envOf(p)
	cmd.Dir = p.dir
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); logf.Close(); close(exited) }()
	f.mu.Lock()
	p.cmd, p.exited = cmd, exited
	f.mu.Unlock()
	return nil
}

// reportReady waits until the server listens, then sets the pod Running
// and Ready with its IP (the kubelet's TCP readiness probe).
func (f *fakeNode) reportReady(p *fakePod) {
	addr := net.JoinHostPort(p.backIP, strconv.Itoa(Port))
	for i := 0; i < 200; i++ {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	f.setStatus(p, true)
}

func (f *fakeNode) setStatus(p *fakePod, ready bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for try := 0; try < 5; try++ {
		pod, err := f.cs.CoreV1().Pods(f.ns).Get(ctx, p.name, metav1.GetOptions{})
		if err != nil {
			return
		}
		f.mu.Lock()
		restarts := p.restarts
		f.mu.Unlock()
		cond := corev1.ConditionFalse
		if ready {
			cond = corev1.ConditionTrue
		}
		now := metav1.Now()
		pod.Status = corev1.PodStatus{
			Phase: corev1.PodRunning, PodIP: p.podIP, PodIPs: []corev1.PodIP{{IP: p.podIP}}, HostIP: "127.0.0.1", StartTime: &now,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: cond, LastTransitionTime: now}},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: ContainerName, Ready: ready, RestartCount: restarts, Image: pod.Spec.Containers[0].Image,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
			}},
		}
		if _, err := f.cs.CoreV1().Pods(f.ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err == nil || !apierrors.IsConflict(err) {
			return
		}
	}
}

// stopPod kills the pod's process and closes its proxies (f.mu held).
func (f *fakeNode) stopPod(p *fakePod) {
	for _, l := range p.lns {
		l.Close()
	}
	if p.cmd != nil && p.cmd.Process != nil {
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	for c := range f.conns {
		if c.to == p.name || c.from == p.name {
			c.close()
			delete(f.conns, c)
		}
	}
}

// logFile is the output of the pod's container after restarts restarts,
// one file each, as the kubelet keeps the current and the previous one.
func (p *fakePod) logFile(restarts int32) string {
	return filepath.Join(p.dir, fmt.Sprintf("server-%d.log", restarts))
}

// killContainer is PodChaos container-kill: SIGKILL, then the kubelet
// starts the container again with its volume.
func (f *fakeNode) killContainer(name string) error {
	f.mu.Lock()
	p := f.pods[name]
	f.mu.Unlock()
	if p == nil {
		return fmt.Errorf("no pod %s runs", name)
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
	f.logf("killed the container of pod %s", name)
	f.setStatus(p, false)
	time.Sleep(300 * time.Millisecond)
	f.mu.Lock()
	p.restarts++
	f.mu.Unlock()
	if err := f.run(p); err != nil {
		return err
	}
	go f.reportReady(p)
	return nil
}

// proxyConn is one forwarded connection; cut drops what it carries, as a
// partition drops packets, until heal closes it.
type proxyConn struct {
	from, to string // pod names; from "" for a client (the harness)
	a, b     net.Conn
	cut      atomic.Bool
	once     sync.Once
}

func (c *proxyConn) close() {
	c.once.Do(func() { c.a.Close(); c.b.Close() })
}

func (f *fakeNode) serveProxy(p *fakePod, ln net.Listener, backend string) {
	for {
		in, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			from := f.podOf(in)
			out, err := net.DialTimeout("tcp", backend, 2*time.Second)
			if err != nil {
				in.Close()
				return
			}
			c := &proxyConn{from: from, to: p.name, a: in, b: out}
			f.mu.Lock()
			c.cut.Store(from != "" && f.blocked[[2]string{from, p.name}])
			f.conns[c] = true
			f.mu.Unlock()
			go f.pipe(c, in, out, p.name) // the pod's replies
			f.pipe(c, out, in, from)      // what the dialer sends
			c.close()
			f.mu.Lock()
			delete(f.conns, c)
			f.mu.Unlock()
		}()
	}
}

// pipe copies src to dst. What sender's pod sends is held as its
// NetworkChaos delay and loss say (f.hold): each chunk is queued with the
// time it is due, so a delay adds latency without cutting throughput, as
// netem does. Sender "" is the harness, never shaped.
func (f *fakeNode) pipe(c *proxyConn, dst, src net.Conn, sender string) {
	type chunk struct {
		b   []byte
		due time.Time
	}
	q := make(chan chunk, 256)
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		for ch := range q {
			if d := time.Until(ch.due); d > 0 {
				time.Sleep(d)
			}
			if _, err := dst.Write(ch.b); err != nil {
				c.close() // the reader ends and closes q; drain it
			}
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !c.cut.Load() {
			q <- chunk{b: bytes.Clone(buf[:n]), due: time.Now().Add(f.hold(sender))}
		}
		if err != nil { // EOF or reset: the other side goes too
			close(q)
			<-wrote
			c.close()
			return
		}
	}
}

// podShape is a pod's NetworkChaos delay and loss, as the fake acts them.
type podShape struct {
	latency, jitter time.Duration
	loss            int // percent
}

// retransmit is what a lost segment costs a TCP stream: Linux's minimum
// retransmission timeout. The fake cannot drop bytes from a stream it
// forwards (a dropped packet is resent by the kernel, never lost to the
// application), so it acts a loss out as that stall.
const retransmit = 200 * time.Millisecond

// hold is how long a chunk pod sends waits: its latency, jitter drawn
// uniformly either way, and a retransmission timeout for a lost one.
func (f *fakeNode) hold(pod string) time.Duration {
	if pod == "" {
		return 0
	}
	f.mu.Lock()
	s := f.shape[pod]
	f.mu.Unlock()
	d := s.latency
	if s.jitter > 0 {
		d += time.Duration(rand.Int64N(int64(2*s.jitter)+1)) - s.jitter
	}
	if s.loss > 0 && rand.IntN(100) < s.loss {
		d += retransmit
	}
	return d
}

// setShape applies (on) or lifts a NetworkChaos delay or loss on pods.
func (f *fakeNode) setShape(pods []string, action string, u *unstructured.Unstructured, on bool) (string, error) {
	var latency, jitter time.Duration
	loss := 0
	figure := ""
	if on {
		var err error
		switch action {
		case "delay":
			l, _, _ := unstructured.NestedString(u.Object, "spec", "delay", "latency")
			j, _, _ := unstructured.NestedString(u.Object, "spec", "delay", "jitter")
			if latency, err = time.ParseDuration(l); err != nil {
				return "", fmt.Errorf("delay latency %q: %v", l, err)
			}
			if j != "" {
				if jitter, err = time.ParseDuration(j); err != nil {
					return "", fmt.Errorf("delay jitter %q: %v", j, err)
				}
			}
			figure = l + " jitter " + j
		case "loss":
			l, _, _ := unstructured.NestedString(u.Object, "spec", "loss", "loss")
			if loss, err = strconv.Atoi(l); err != nil {
				return "", fmt.Errorf("loss %q: %v", l, err)
			}
			figure = l + "%"
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range pods {
		s := f.shape[p]
		if action == "delay" {
			s.latency, s.jitter = latency, jitter
		} else {
			s.loss = loss
		}
		f.shape[p] = s
	}
	return figure, nil
}

// podOf names the pod whose process opened the connection's other end
// ("" for anyone else: the harness, a client).
func (f *fakeNode) podOf(c net.Conn) string {
	inode := socketInode(c.RemoteAddr().(*net.TCPAddr), c.LocalAddr().(*net.TCPAddr))
	if inode == "" {
		return ""
	}
	f.mu.Lock()
	pids := map[int]string{}
	for name, p := range f.pods {
		if p.cmd != nil && p.cmd.Process != nil {
			pids[p.cmd.Process.Pid] = name
		}
	}
	f.mu.Unlock()
	want := "socket:[" + inode + "]"
	for pid, name := range pids {
		fds, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
		for _, fd := range fds {
			if l, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/" + fd.Name()); err == nil && l == want {
				return name
			}
		}
	}
	return ""
}

// socketInode finds in /proc/net/tcp the socket whose local end is local
// and remote end is remote.
func socketInode(local, remote *net.TCPAddr) string {
	data, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return ""
	}
	l, r := procAddr(local), procAddr(remote)
	for _, line := range strings.Split(string(data), "\n")[1:] {
		fs := strings.Fields(line)
		if len(fs) > 9 && fs[1] == l && fs[2] == r {
			return fs[9]
		}
	}
	return ""
}

// procAddr is an address as /proc/net/tcp writes it: the IPv4 address as
// a little-endian hex word, the port big-endian.
func procAddr(a *net.TCPAddr) string {
	ip := a.IP.To4()
	return fmt.Sprintf("%02X%02X%02X%02X:%04X", ip[3], ip[2], ip[1], ip[0], a.Port)
}

// setBlocked applies (on) or lifts a partition between pods and targets;
// lifting closes the connections it cut (their streams lost bytes).
func (f *fakeNode) setBlocked(pods, targets []string, on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, a := range pods {
		for _, b := range targets {
			for _, k := range [][2]string{{a, b}, {b, a}} {
				if on {
					f.blocked[k] = true
				} else {
					delete(f.blocked, k)
				}
			}
		}
	}
	for c := range f.conns {
		if c.from == "" {
			continue
		}
		if on && f.blocked[[2]string{c.from, c.to}] {
			c.cut.Store(true)
		}
		if !on && c.cut.Load() && !f.blocked[[2]string{c.from, c.to}] {
			c.close()
		}
	}
}

// syncChaos is Chaos Mesh's controller: inject what is new, recover what
// is being deleted, and say so in the objects' status and finalizers.
func (f *fakeNode) syncChaos(ctx context.Context) error {
	for _, res := range []string{NetworkChaos, PodChaos, TimeChaos} {
		ri := f.dyn.Resource(chaosGVR(res)).Namespace(f.ns)
		l, err := ri.List(ctx, metav1.ListOptions{})
		if err != nil {
			if apierrors.IsNotFound(err) {
				continue // the CRDs are not installed
			}
			return err
		}
		for i := range l.Items {
			u := &l.Items[i]
			key := res + "/" + u.GetName()
			f.mu.Lock()
			done := f.chaos[key]
			f.mu.Unlock()
			switch {
			case u.GetDeletionTimestamp() != nil:
				if done {
					if err := f.act(res, u, false); err != nil {
						f.t.Logf("fake: recovering %s: %v", key, err)
					}
					f.mu.Lock()
					delete(f.chaos, key)
					f.mu.Unlock()
				}
				u.SetFinalizers(slices.DeleteFunc(u.GetFinalizers(), func(s string) bool { return s == chaosFinalizer }))
				if _, err := ri.Update(ctx, u, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
					f.t.Logf("fake: dropping the finalizer of %s: %v", key, err)
				}
			case !done:
				// The finalizer first, as Chaos Mesh does: a fault
				// is never deleted before it is recovered.
				u.SetFinalizers(append(u.GetFinalizers(), chaosFinalizer))
				u, err = ri.Update(ctx, u, metav1.UpdateOptions{})
				if err != nil {
					continue
				}
				f.mu.Lock()
				f.chaos[key] = true
				f.mu.Unlock()
				actErr := f.act(res, u, true)
				setChaosStatus(u, actErr)
				if _, err := ri.Update(ctx, u, metav1.UpdateOptions{}); err != nil {
					f.t.Logf("fake: status of %s: %v", key, err)
				}
			}
		}
	}
	return nil
}

func selectedPods(u *unstructured.Unstructured, ns string, path ...string) []string {
	list, _, _ := unstructured.NestedStringSlice(u.Object, append(path, "pods", ns)...)
	return list
}

// act injects (on) or recovers one chaos object.
func (f *fakeNode) act(res string, u *unstructured.Unstructured, on bool) error {
	pods := selectedPods(u, f.ns, "spec", "selector")
	action, _, _ := unstructured.NestedString(u.Object, "spec", "action")
	verb := "recovered"
	if on {
		verb = "injected"
	}
	switch res {
	case NetworkChaos:
		if action == "delay" || action == "loss" {
			if on && f.pretends(action) {
				f.logf("pretends to have injected networkchaos %s on %s", action, strings.Join(pods, ","))
				return nil
			}
			figure, err := f.setShape(pods, action, u, on)
			if err != nil {
				return err
			}
			if figure != "" {
				figure += " "
			}
			f.logf("%s networkchaos %s %son %s", verb, action, figure, strings.Join(pods, ","))
			return nil
		}
		if action != "partition" {
			return fmt.Errorf("action %s is not acted out by the fake", action)
		}
		targets := selectedPods(u, f.ns, "spec", "target", "selector")
		f.setBlocked(pods, targets, on)
		f.logf("%s networkchaos partition %s from %s", verb, strings.Join(pods, ","), strings.Join(targets, ","))
	case PodChaos:
		if !on {
			f.logf("recovered podchaos %s %s", action, strings.Join(pods, ","))
			return nil
		}
		if action != "container-kill" {
			return fmt.Errorf("action %s is not acted out by the fake", action)
		}
		for _, p := range pods {
			if err := f.killContainer(p); err != nil {
				return err
			}
		}
		f.logf("injected podchaos container-kill %s", strings.Join(pods, ","))
	case TimeChaos:
		off, _, _ := unstructured.NestedString(u.Object, "spec", "timeOffset")
		d, err := time.ParseDuration(off)
		if err != nil {
			return err
		}
		if !on {
			d = 0
		}
		for _, name := range pods {
			f.mu.Lock()
			p := f.pods[name]
			f.mu.Unlock()
			if p == nil {
				return fmt.Errorf("no pod %s", name)
			}
			cl := cluster.AdminClient(net.JoinHostPort(p.backIP, strconv.Itoa(Port)))
			err := cl.Do(context.Background(), "REDLINE", "CLOCK-OFFSET", strconv.FormatInt(d.Milliseconds(), 10)).Err()
			cl.Close()
			if err != nil {
				return err
			}
		}
		f.logf("%s timechaos %s on %s", verb, off, strings.Join(pods, ","))
	}
	return nil
}

// setChaosStatus writes what Chaos Mesh's controller writes: the
// conditions and a record per target.
func setChaosStatus(u *unstructured.Unstructured, err error) {
	injected, phase := "True", "Injected"
	var events []any
	if err != nil {
		injected, phase = "False", "Not Injected"
		events = []any{map[string]any{"operation": "Apply", "type": "Failed", "message": err.Error(), "timestamp": time.Now().UTC().Format(time.RFC3339)}}
	}
	var recs []any
	for _, p := range selectedPods(u, u.GetNamespace(), "spec", "selector") {
		recs = append(recs, map[string]any{
			"id": u.GetNamespace() + "/" + p, "selectorKey": ".", "phase": phase,
			"injectedCount": int64(map[bool]int{true: 1}[err == nil]), "recoveredCount": int64(0), "events": events,
		})
	}
	u.Object["status"] = map[string]any{
		"conditions": []any{
			map[string]any{"type": "Selected", "status": "True"},
			map[string]any{"type": "AllInjected", "status": injected},
			map[string]any{"type": "AllRecovered", "status": "False"},
			map[string]any{"type": "Paused", "status": "False"},
		},
		"experiment": map[string]any{"desiredPhase": "Run", "containerRecords": recs},
	}
}
