package nemesis

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/redline-dev/redline/cluster"
)

// hook runs a user's shell command for one fault action.
type hook struct {
	fault string
	cmd   string
	c     cluster.Cluster
}

func (h hook) node(name string) cluster.Node {
	for _, nd := range h.c.Nodes() {
		if nd.Name == name {
			return nd
		}
	}
	return cluster.Node{Name: name}
}

// run executes the command with the REDLINE_* environment of doc.go.
func (h hook) run(ctx context.Context, action, node string, extra ...string) error {
	env := append(os.Environ(), "REDLINE_FAULT="+h.fault, "REDLINE_ACTION="+action)
	if node != "" {
		nd := h.node(node)
		env = append(env, "REDLINE_NODE="+nd.Name, "REDLINE_ADDR="+nd.Addr, "REDLINE_HOST="+nd.Host, "REDLINE_NODE_HOST="+nd.Host)
	}
	env = append(env, extra...)
	cmd := exec.CommandContext(ctx, "sh", "-c", h.cmd)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("--nemesis-hook %s (%s %s) failed: %v: %s", h.fault, action, node, err, strings.TrimSpace(string(out)))
	}
	return nil
}

type hookKiller struct{ hook }

func (h hookKiller) Kill(ctx context.Context, node string) error { return h.run(ctx, "kill", node) }
func (h hookKiller) Restart(ctx context.Context, node string) error {
	return h.run(ctx, "restart", node)
}

type hookPauser struct{ hook }

func (h hookPauser) Pause(ctx context.Context, node string) error  { return h.run(ctx, "pause", node) }
func (h hookPauser) Resume(ctx context.Context, node string) error { return h.run(ctx, "resume", node) }

type hookPartitioner struct{ hook }

func (h hookPartitioner) Cut(ctx context.Context, node string, peers []string, clients bool) error {
	var addrs, hosts []string
	for _, p := range peers {
		nd := h.node(p)
		addrs = append(addrs, nd.Addr)
		hosts = append(hosts, nd.Host)
	}
	return h.run(ctx, "cut", node, "REDLINE_PEERS="+strings.Join(peers, ","),
		"REDLINE_PEER_ADDRS="+strings.Join(addrs, ","), "REDLINE_PEER_HOSTS="+strings.Join(hosts, ","),
		"REDLINE_CLIENTS="+strconv.FormatBool(clients))
}

func (h hookPartitioner) Heal(ctx context.Context) error { return h.run(ctx, "heal", "") }

type hookClock struct{ hook }

func (h hookClock) SetClockOffset(ctx context.Context, node string, offset time.Duration) error {
	return h.run(ctx, "clock", node, "REDLINE_OFFSET_MS="+strconv.FormatInt(offset.Milliseconds(), 10))
}
