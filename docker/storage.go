package docker

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/moby/moby/client"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/docker/faultfs"
)

// storageWriteback is how old a change in a node's data directory must be
// to count as on disk without an fsync: the kernel's flusher writes a dirty
// page back once it is dirty_expire_centisecs old, 30 s by default, which
// is what `appendfsync no` relies on. A power cut loses what is newer.
const storageWriteback = 30 * time.Second

// storage is the faulting filesystems of a cluster's nodes (Spec.FaultFS):
// each node's data directory is <dir>/<node>/data, a faultfs mount of
// <dir>/<node>/backing, bind-mounted at /data in its container. The mounts
// are served by this process; they end with it.
type storage struct {
	dir string
	mu  sync.Mutex
	fs  map[string]*faultfs.FS // by node name
}

// newStorage makes the directory the cluster's mounts live in.
func newStorage(cluster string) (*storage, error) {
	dir, err := os.MkdirTemp("", "redline-"+cluster+"-")
	if err != nil {
		return nil, fmt.Errorf("docker: a directory for the nodes' data: %w", err)
	}
	// The Docker daemon (root) bind-mounts from here.
	os.Chmod(dir, 0o755)
	return &storage{dir: dir, fs: map[string]*faultfs.FS{}}, nil
}

// mount mounts node's data directory and returns the host path to bind.
func (s *storage) mount(cluster, node string) (string, error) {
	backing := filepath.Join(s.dir, node, "backing")
	mnt := filepath.Join(s.dir, node, "data")
	for _, d := range []string{backing, mnt} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", fmt.Errorf("docker: %w", err)
		}
	}
	f, err := faultfs.Mount(faultfs.Options{
		Backing: backing, Mountpoint: mnt,
		AllowOther: true, // the container's processes and the daemon's bind
		Writeback:  storageWriteback,
		Name:       "redline-faultfs:" + cluster + "/" + node,
	})
	if err != nil {
		return "", fmt.Errorf("docker: node %s: %w", node, err)
	}
	s.mu.Lock()
	s.fs[node] = f
	s.mu.Unlock()
	return mnt, nil
}

func (s *storage) of(node string) *faultfs.FS {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fs[node]
}

// unmount unmounts node's data directory (its container is gone).
func (s *storage) unmount(node string) error {
	s.mu.Lock()
	f := s.fs[node]
	delete(s.fs, node)
	s.mu.Unlock()
	if f == nil {
		return nil
	}
	return f.Unmount()
}

// close unmounts every node's data directory and removes the directory
// they live in (only when every unmount worked: never remove through a
// mount).
func (s *storage) close() error {
	s.mu.Lock()
	var names []string
	for n := range s.fs {
		names = append(names, n)
	}
	s.mu.Unlock()
	var errs []error
	for _, n := range names {
		if err := s.unmount(n); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("docker: unmounting the nodes' data directories under %s: %w", s.dir, errors.Join(errs...))
	}
	return os.RemoveAll(s.dir)
}

// checkpoint makes everything the nodes wrote so far durable.
func (s *storage) checkpoint() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.fs {
		f.Checkpoint()
	}
}

// StorageFaultsAvailable says why this machine cannot mount the nodes'
// data directories through faultfs (nil when it can): it needs /dev/fuse,
// and root or fusermount3 (Debian's fuse3).
func StorageFaultsAvailable() error {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return fmt.Errorf("no /dev/fuse (%v): the kernel's FUSE module is needed", err)
	}
	if os.Geteuid() != 0 {
		if _, err := exec.LookPath("fusermount3"); err != nil {
			return errors.New("not root and no fusermount3 (Debian's fuse3: scripts/install-deps)")
		}
	}
	return nil
}

// StorageFaults says why the power and disk faults cannot be caused on
// this cluster, nil when they can.
func (c *Cluster) StorageFaults() error {
	if c.storage == nil {
		return errors.New("the nodes' data directories are not mounted through redline's FUSE layer (the cluster was not started for the power or disk fault)")
	}
	return nil
}

// PowerCut cuts the power of the named nodes at one instant: every
// node's filesystem stops completing operations, the nodes are SIGKILLed,
// each file loses what was not fsynced (or keeps a torn prefix of its last
// write), and once the processes are gone their containers stay stopped
// until Restart. A write a node sent after the instant never lands.
func (c *Cluster) PowerCut(ctx context.Context, names []string, loss cluster.PowerLoss) ([]cluster.NodeLoss, error) {
	if err := c.StorageFaults(); err != nil {
		return nil, fmt.Errorf("docker: power cut: %w", err)
	}
	nodes := make([]*node, len(names))
	disks := make([]*faultfs.FS, len(names))
	for i, name := range names {
		n, err := c.node(name)
		if err != nil {
			return nil, err
		}
		if disks[i] = c.storage.of(name); disks[i] == nil {
			return nil, fmt.Errorf("docker: power cut: node %s has no faulting data directory", name)
		}
		nodes[i] = n
	}
	// The servers' host pids, read before the freeze: inside it a
	// Docker kill would wait for an exit that a server blocked on its
	// frozen filesystem cannot make until the freeze ends.
	var running []*node
	pids := map[*node]int{}
	for _, n := range nodes {
		ins, err := c.rt.cli.ContainerInspect(ctx, n.id, client.ContainerInspectOptions{})
		if err != nil {
			return nil, fmt.Errorf("docker: power cut %s: %w", n.name, err)
		}
		if st := ins.Container.State; st != nil && st.Running && st.Pid > 0 {
			running = append(running, n)
			pids[n] = st.Pid
		}
	}
	reports := make([]faultfs.Report, len(nodes))
	// Each filesystem is frozen inside the previous one's cut; inside the
	// last, every one is, and the servers are sent SIGKILL (delivered at
	// once; a server blocked on its frozen filesystem dies when the cuts
	// end, its blocked operations refused).
	var cut func(i int) error
	cut = func(i int) error {
		if i == len(nodes) {
			return each(running, func(n *node) error {
				if err := syscall.Kill(pids[n], syscall.SIGKILL); err != nil && err != syscall.ESRCH {
					return fmt.Errorf("SIGKILL to pid %d: %w", pids[n], err)
				}
				return nil
			})
		}
		rng := rand.New(rand.NewPCG(loss.Seed, uint64(i)))
		rep, err := disks[i].PowerCut(faultfs.Loss{Torn: loss.Torn, Rand: rng}, func() error { return cut(i + 1) })
		reports[i] = rep
		return err
	}
	err := cut(0)
	werr := each(running, func(n *node) error { return c.waitStopped(ctx, n) })
	out := make([]cluster.NodeLoss, len(nodes))
	for i, n := range nodes {
		out[i] = cluster.NodeLoss{Node: n.name, LostBytes: reports[i].LostBytes()}
		for _, f := range reports[i].Files {
			s := fmt.Sprintf("%s %d->%d", f.Path, f.SizeAt, f.SizeAfter)
			if f.TornOf > 0 {
				s += fmt.Sprintf(" (torn: %d of %d bytes kept)", f.TornKept, f.TornOf)
			}
			out[i].Files = append(out[i].Files, s)
		}
	}
	if err := errors.Join(err, werr); err != nil {
		return out, fmt.Errorf("docker: power cut %s: %w", strings.Join(names, ","), err)
	}
	return out, nil
}

// SetDiskError makes the node's data directory answer err on writes,
// truncates, creates and fsyncs; "" heals it.
func (c *Cluster) SetDiskError(_ context.Context, name string, e cluster.DiskError) error {
	if err := c.StorageFaults(); err != nil {
		return fmt.Errorf("docker: disk fault: %w", err)
	}
	if _, err := c.node(name); err != nil {
		return err
	}
	f := c.storage.of(name)
	if f == nil {
		return fmt.Errorf("docker: disk fault: node %s has no faulting data directory", name)
	}
	var errno syscall.Errno
	switch e {
	case "":
	case cluster.DiskFull:
		errno = syscall.ENOSPC
	case cluster.DiskFailing:
		errno = syscall.EIO
	default:
		return fmt.Errorf("docker: disk fault: unknown error %q (want %s or %s)", e, cluster.DiskFull, cluster.DiskFailing)
	}
	f.SetError(errno)
	return nil
}

// each runs f for every node concurrently and joins the errors.
func each(nodes []*node, f func(*node) error) error {
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(n); err != nil {
				errs[i] = fmt.Errorf("%s: %w", n.name, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

var (
	_ cluster.PowerCutter = (*Cluster)(nil)
	_ cluster.DiskFaulter = (*Cluster)(nil)
)
