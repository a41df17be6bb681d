package docker

import (
	"context"
	"fmt"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/redline-dev/redline/cluster"
)

// cfsPeriod is the CFS period a CPU cap is counted in (the kernel's
// default, 100 ms): a node capped at 5% runs 5 ms of every 100 ms.
const cfsPeriod = 100_000 // µs

// LimitCPU caps the CPU time of node's container at cpus of one CPU (0.05:
// 5 ms of every 100 ms) through the engine (docker update: the cgroup's CFS
// quota), so the node is slow, not dead: it answers, late, and its bus
// falls behind. 0 removes the cap. The cap is the container's: it outlives
// a Kill and Restart until removed. It is set as CpuQuota, not NanoCpus:
// the engine ignores a NanoCpus of 0, so a NanoCpus cap could not be lifted
// again, while a CpuQuota of -1 lifts it (checked on Docker 20.10).
func (c *Cluster) LimitCPU(ctx context.Context, name string, cpus float64) error {
	if cpus < 0 {
		return fmt.Errorf("docker: cpu limit %s: negative share %g", name, cpus)
	}
	n, err := c.node(name)
	if err != nil {
		return err
	}
	quota := int64(-1)
	if cpus > 0 {
		if err := c.rt.Probe(ctx, cluster.ProbeCPU); err != nil {
			return fmt.Errorf("docker: cpu limit %s: %w", name, err)
		}
		quota = max(int64(cpus*cfsPeriod), 1000) // the kernel's floor is 1 ms
	}
	_, err = c.rt.cli.ContainerUpdate(ctx, n.id, client.ContainerUpdateOptions{
		Resources: &container.Resources{CPUPeriod: cfsPeriod, CPUQuota: quota},
	})
	if err != nil {
		if quota < 0 && isNotFound(err) {
			return nil // gone: nothing to lift
		}
		return fmt.Errorf("docker: cpu limit %s: %w", name, err)
	}
	return nil
}

// CPUQuota is the CFS quota of node's container as the engine holds it, in
// µs per 100 ms period (-1 or 0: no cap).
func (c *Cluster) CPUQuota(ctx context.Context, name string) (int64, error) {
	n, err := c.node(name)
	if err != nil {
		return 0, err
	}
	ins, err := c.rt.cli.ContainerInspect(ctx, n.id, client.ContainerInspectOptions{})
	if err != nil {
		return 0, err
	}
	if ins.Container.HostConfig == nil {
		return 0, nil
	}
	return ins.Container.HostConfig.CPUQuota, nil
}
