package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"path"
	"strconv"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/redline-dev/redline/cluster"
)

// Kill sends SIGKILL to the node's server and waits until its container
// has stopped (also when it is paused; nothing when it is stopped already).
// Its data (in the container's filesystem) and IP are kept.
func (c *Cluster) Kill(ctx context.Context, name string) error {
	n, err := c.node(name)
	if err != nil {
		return err
	}
	if st, err := c.state(ctx, n); err != nil {
		return fmt.Errorf("docker: kill %s: %w", name, err)
	} else if !st.Running {
		return nil // already dead
	}
	ctx, cancel := seenThrough(ctx)
	defer cancel()
	if stateChangeSending != nil {
		stateChangeSending()
	}
	if _, err := c.rt.cli.ContainerKill(ctx, n.id, client.ContainerKillOptions{Signal: "KILL"}); err != nil {
		return fmt.Errorf("docker: kill %s: %w", name, err)
	}
	return c.waitStopped(ctx, n)
}

// stateChangeSending, when set (by a test), runs as a kill is about to be
// sent: where a caller's deadline would fall at the worst moment.
var stateChangeSending func()

// settleLimit bounds how long a container state change, once asked for, is
// waited for after its caller has given up.
const settleLimit = 30 * time.Second

// seenThrough is the context for a container state change (kill, start,
// pause, unpause) from the moment it is sent: the caller's cancellation no
// longer applies, only settleLimit. A run whose time ran out just as a kill
// was sent otherwise got "context deadline exceeded" back while the engine
// went on killing: the heal that followed found the container still running,
// took the restart for done, and the node died after it, unhealed (CI,
// TestRunClientsInDocker, 2026-12-06). A change either is not sent or is
// seen to its end.
func seenThrough(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), settleLimit)
}

// waitStopped waits until the node's container has stopped.
func (c *Cluster) waitStopped(ctx context.Context, n *node) error {
	for {
		ins, err := c.rt.cli.ContainerInspect(ctx, n.id, client.ContainerInspectOptions{})
		if err != nil {
			return fmt.Errorf("docker: kill %s: %w", n.name, err)
		}
		if st := ins.Container.State; st == nil || !st.Running {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("docker: kill %s: still running: %w", n.name, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Restart starts a killed node's container again (same data, same IP),
// waits until it answers PING and re-applies its partition rules, if any.
// Restarting a running node is a no-op.
func (c *Cluster) Restart(ctx context.Context, name string) error {
	n, err := c.node(name)
	if err != nil {
		return err
	}
	ins, err := c.rt.cli.ContainerInspect(ctx, n.id, client.ContainerInspectOptions{})
	if err != nil {
		return fmt.Errorf("docker: restart %s: %w", name, err)
	}
	if st := ins.Container.State; st != nil && st.Running {
		return nil
	}
	t0 := time.Now()
	sctx, cancel := seenThrough(ctx)
	defer cancel()
	if _, err := c.rt.cli.ContainerStart(sctx, n.id, client.ContainerStartOptions{}); err != nil {
		return fmt.Errorf("docker: restart %s: %w", name, err)
	}
	started := time.Since(t0)
	// A started node without its partition rules would be a healed cut
	// nobody asked for.
	if err := c.reapplyNet(sctx, n); err != nil {
		return err
	}
	if err := c.waitReady(ctx, n); err != nil {
		return err
	}
	// Where a restart's time goes, for a fault's RTO: Docker's start
	// (namespaces, mounts) against the server's own start and load.
	c.logf("restart %s: container started in %.2fs, answered PING %.2fs later", name, started.Seconds(), (time.Since(t0) - started).Seconds())
	return nil
}

// state inspects the node's container.
func (c *Cluster) state(ctx context.Context, n *node) (container.State, error) {
	ins, err := c.rt.cli.ContainerInspect(ctx, n.id, client.ContainerInspectOptions{})
	if err != nil {
		return container.State{}, err
	}
	if ins.Container.State == nil {
		return container.State{}, fmt.Errorf("container %s has no state", n.id)
	}
	return *ins.Container.State, nil
}

// Pause freezes every process of the node (docker pause, the cgroup
// freezer). Pausing a paused or stopped node does nothing.
func (c *Cluster) Pause(ctx context.Context, name string) error {
	n, err := c.node(name)
	if err != nil {
		return err
	}
	if st, err := c.state(ctx, n); err != nil {
		return fmt.Errorf("docker: pause %s: %w", name, err)
	} else if !st.Running || st.Paused {
		return nil // nothing to freeze, or frozen already
	}
	ctx, cancel := seenThrough(ctx)
	defer cancel()
	if _, err := c.rt.cli.ContainerPause(ctx, n.id, client.ContainerPauseOptions{}); err != nil {
		return fmt.Errorf("docker: pause %s: %w", name, err)
	}
	return nil
}

// Resume undoes Pause (nothing when the node is not paused).
func (c *Cluster) Resume(ctx context.Context, name string) error {
	n, err := c.node(name)
	if err != nil {
		return err
	}
	if st, err := c.state(ctx, n); err != nil {
		return fmt.Errorf("docker: resume %s: %w", name, err)
	} else if !st.Paused {
		return nil
	}
	ctx, cancel := seenThrough(ctx)
	defer cancel()
	if _, err := c.rt.cli.ContainerUnpause(ctx, n.id, client.ContainerUnpauseOptions{}); err != nil {
		return fmt.Errorf("docker: resume %s: %w", name, err)
	}
	return nil
}

// SetClockOffset shifts the node's wall clock by offset (absolute, not
// cumulative; 0 resets it; millisecond resolution). Monotonic clocks are
// left alone, as with a real clock step. The offset lives in the container's
// filesystem, so it survives Kill and Restart.
func (c *Cluster) SetClockOffset(ctx context.Context, name string, offset time.Duration) error {
	n, err := c.node(name)
	if err != nil {
		return err
	}
	if c.noClock != "" {
		return fmt.Errorf("docker: clock %s: %s", name, c.noClock)
	}
	if err := c.flav.clock(ctx, c, n, offset); err != nil {
		return err
	}
	c.mu.Lock()
	c.offsets[name] = offset
	c.mu.Unlock()
	return nil
}

// fileClock writes the offset in milliseconds to the clock shim's control
// file and waits until the shim has re-read it (every 10 ms).
func fileClock(ctx context.Context, c *Cluster, n *node, offset time.Duration) error {
	spec := []byte(fmt.Sprintf("%+d\n", offset.Milliseconds()))
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: path.Base(clockFile), Mode: 0o644, Size: int64(len(spec)), ModTime: time.Now()}); err != nil {
		return err
	}
	tw.Write(spec)
	if err := tw.Close(); err != nil {
		return err
	}
	if _, err := c.rt.cli.CopyToContainer(ctx, n.id, client.CopyToContainerOptions{DestinationPath: path.Dir(clockFile), Content: &buf}); err != nil {
		return fmt.Errorf("docker: clock %s: writing %s: %w", n.name, clockFile, err)
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(30 * time.Millisecond):
	}
	return nil
}

// commandClock asks the reference server to offset its clock.
func commandClock(ctx context.Context, c *Cluster, n *node, offset time.Duration) error {
	cl := c.spec.RunUser.AdminClient(n.addr())
	defer cl.Close()
	if err := cl.Do(ctx, "REDLINE", "CLOCK-OFFSET", strconv.FormatInt(offset.Milliseconds(), 10)).Err(); err != nil {
		return fmt.Errorf("docker: clock %s: REDLINE CLOCK-OFFSET: %w", n.name, err)
	}
	return nil
}

// AddNode starts one more empty node on the cluster's network. It is not
// part of the cluster until the caller MEETs it.
func (c *Cluster) AddNode(ctx context.Context) (cluster.Node, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return cluster.Node{}, fmt.Errorf("docker: cluster %s is closed", c.name)
	}
	n := c.allocNode()
	c.mu.Unlock()
	err := c.startNode(ctx, n)
	if n.id != "" {
		if err != nil {
			c.rt.cli.ContainerRemove(context.WithoutCancel(ctx), n.id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
			return cluster.Node{}, err
		}
		c.mu.Lock()
		c.nodes = append(c.nodes, n)
		c.mu.Unlock()
	}
	if err != nil {
		return cluster.Node{}, err
	}
	c.logf("added node %s at %s", n.name, n.addr())
	return n.public(), nil
}

// RemoveNode removes the node's container for good (the caller FORGETs it).
func (c *Cluster) RemoveNode(ctx context.Context, name string) error {
	n, err := c.node(name)
	if err != nil {
		return err
	}
	if _, err := c.rt.cli.ContainerRemove(ctx, n.id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !isNotFound(err) {
		return fmt.Errorf("docker: remove %s: %w", name, err)
	}
	c.mu.Lock()
	for i, m := range c.nodes {
		if m == n {
			c.nodes = append(c.nodes[:i], c.nodes[i+1:]...)
			break
		}
	}
	delete(c.net, name)
	delete(c.offsets, name)
	c.mu.Unlock()
	if c.storage != nil {
		return c.storage.unmount(name)
	}
	return nil
}

// Interface checks.
var (
	_ cluster.Runtime           = (*Runtime)(nil)
	_ cluster.Cluster           = (*Cluster)(nil)
	_ cluster.Killer            = (*Cluster)(nil)
	_ cluster.Pauser            = (*Cluster)(nil)
	_ cluster.Partitioner       = (*Cluster)(nil)
	_ cluster.OneWayPartitioner = (*Cluster)(nil)
	_ cluster.Shaper            = (*Cluster)(nil)
	_ cluster.Throttler         = (*Cluster)(nil)
	_ cluster.CPULimiter        = (*Cluster)(nil)
	_ cluster.Prober            = (*Cluster)(nil)
	_ cluster.Prober            = (*Runtime)(nil)
	_ cluster.Clock             = (*Cluster)(nil)
	_ cluster.Grower            = (*Cluster)(nil)
	_ cluster.LogSource         = (*Cluster)(nil)
	_ cluster.Describer         = (*Cluster)(nil)
)
