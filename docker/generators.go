package docker

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"

	"github.com/redline-dev/redline/cluster"
)

// A distributed bench's generators (cluster.Generators) run as containers
// of the reference image (redline's own binary) on the cluster's network,
// each `/redline bench-generator --config ...`; their reports are their
// standard output, read once they ended. They carry the cluster's labels,
// so Close and the reaping of dead runs remove them with it.

// LabelGenerator marks a generator's container with its index.
const LabelGenerator = "redline.generator"

// MaxGenerators bounds the generators on one cluster network: they take
// the addresses .200 and up of its /24, clear of the nodes' (from .2).
const MaxGenerators = 50

// GeneratorLead: a container from a local image starts in about a second,
// but several at once on a busy host took up to 0.9 s past a 3 s lead.
func (c *Cluster) GeneratorLead() time.Duration { return 10 * time.Second }

// RunGenerators runs the generators as containers and returns each one's
// output and exit, in order; the containers are removed.
func (c *Cluster) RunGenerators(ctx context.Context, runs []cluster.GeneratorRun) []cluster.GeneratorOutcome {
	outs := make([]cluster.GeneratorOutcome, len(runs))
	for i, r := range runs {
		outs[i] = cluster.GeneratorOutcome{Index: r.Index, Name: c.generatorName(r.Index)}
	}
	fail := func(err error) []cluster.GeneratorOutcome {
		for i := range outs {
			outs[i].Err = err
		}
		return outs
	}
	if len(runs) > MaxGenerators {
		return fail(fmt.Errorf("docker: at most %d generators on a cluster's network", MaxGenerators))
	}
	image, err := c.generatorImage(ctx)
	if err != nil {
		return fail(err)
	}
	var wg sync.WaitGroup
	for i, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.runGenerator(ctx, image, r, &outs[i])
		}()
	}
	wg.Wait()
	return outs
}

func (c *Cluster) generatorName(i int) string { return "redline-" + c.name + "-gen" + strconv.Itoa(i) }

// generatorImage is the reference image: the cluster's own when it runs
// the reference server, else built (or found) for the generators.
func (c *Cluster) generatorImage(ctx context.Context) (string, error) {
	if c.spec.Target == "reference" && c.spec.Image == "" {
		return c.image, nil
	}
	s, err := referenceImage(ctx, c.rt.opts.ReferenceBinary, c.logf)
	if err != nil {
		return "", fmt.Errorf("docker: the generators' image: %w", err)
	}
	tag, _, err := c.rt.ensureImage(ctx, s, c.logf)
	if err != nil {
		return "", fmt.Errorf("docker: the generators' image: %w", err)
	}
	return tag, nil
}

// generatorIP is generator i's address: .200+i of the cluster's /24.
func (c *Cluster) generatorIP(i int) netip.Addr {
	ip := c.subnet.Addr()
	for k := 0; k < 200+i; k++ {
		ip = ip.Next()
	}
	return ip
}

// runGenerator starts one generator's container, waits for it to end,
// reads its standard output and removes it.
func (c *Cluster) runGenerator(ctx context.Context, image string, r cluster.GeneratorRun, out *cluster.GeneratorOutcome) {
	labels := map[string]string{LabelRedline: "1", LabelCluster: c.name, LabelGenerator: strconv.Itoa(r.Index)}
	c.addOwner(labels)
	netName := c.netName
	ip := c.generatorIP(r.Index)
	req := testcontainers.ContainerRequest{
		Image:      image,
		Entrypoint: []string{"/redline"},
		Cmd:        append(append([]string(nil), r.Args...), "--index", strconv.Itoa(r.Index)),
		Labels:     labels,
		Name:       out.Name,
		Networks:   []string{netName},
		EndpointSettingsModifier: func(m map[string]*network.EndpointSettings) {
			es := m[netName]
			if es == nil {
				es = &network.EndpointSettings{}
				m[netName] = es
			}
			es.IPAMConfig = &network.EndpointIPAMConfig{IPv4Address: ip}
		},
	}
	ctr, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{
		ContainerRequest: req, Started: true, Logger: tclog.NewNoopLogger(),
	})
	id := ""
	if ctr != nil {
		id = ctr.GetContainerID()
	}
	if id != "" {
		defer func() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			_, _ = c.rt.cli.ContainerRemove(rctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
		}()
	}
	if err != nil && id == "" {
		out.Err = fmt.Errorf("docker: starting generator %d: %w", r.Index, err)
		return
	}
	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	var due <-chan time.Time
	if !r.Due.IsZero() {
		t := time.NewTimer(time.Until(r.Due))
		defer t.Stop()
		due = t.C
	}
	wait := c.rt.cli.ContainerWait(wctx, id, client.ContainerWaitOptions{})
	select {
	case <-due:
		// Hung: stopped, its output read as far as it got.
		_, _ = c.rt.cli.ContainerKill(context.WithoutCancel(ctx), id, client.ContainerKillOptions{Signal: "KILL"})
		out.Reason = "killed: still running at its due time"
	case <-wait.Result:
	case werr := <-wait.Error:
		if ctx.Err() == nil {
			out.Err = fmt.Errorf("docker: waiting for generator %d: %w", r.Index, werr)
		}
	case <-ctx.Done():
	}
	// Read what it wrote even after Ctrl-C or a failed wait: a bounded,
	// fresh context.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if ins, err := c.rt.cli.ContainerInspect(rctx, id, client.ContainerInspectOptions{}); err == nil && ins.Container.State != nil {
		st := ins.Container.State
		if !st.Running {
			out.Exited, out.ExitCode = true, st.ExitCode
		}
		switch {
		case st.OOMKilled:
			out.Reason = "OOMKilled"
		case st.Error != "":
			out.Reason = st.Error
		case ctx.Err() != nil:
			out.Reason = "interrupted"
		}
	}
	rc, err := c.rt.cli.ContainerLogs(rctx, id, client.ContainerLogsOptions{ShowStdout: true})
	if err != nil {
		if out.Err == nil {
			out.Err = fmt.Errorf("docker: the output of generator %d: %w", r.Index, err)
		}
		return
	}
	defer rc.Close()
	var stdout, stderr bytes.Buffer
	if _, err := stdcopy.StdCopy(&stdout, &stderr, rc); err != nil && out.Err == nil {
		out.Err = fmt.Errorf("docker: reading the output of generator %d: %w", r.Index, err)
	}
	out.Output = stdout.Bytes()
	if rc2, err := c.rt.cli.ContainerLogs(rctx, id, client.ContainerLogsOptions{ShowStderr: true}); err == nil {
		var log bytes.Buffer
		_, _ = stdcopy.StdCopy(&log, &log, rc2)
		rc2.Close()
		out.Log = log.Bytes()
	}
}
