package docker

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/moby/moby/client"
)

// Labels naming the process that owns a cluster, so a later redline can
// tell a cluster whose run was SIGKILLed (nobody will tear it down) from one
// still in use. Clusters of `redline cluster up` carry none: they are meant
// to outlive their process.
const (
	labelOwnerPID  = "redline.owner.pid"
	labelOwnerHost = "redline.owner.host"
	labelOwnerBoot = "redline.owner.start" // the process's start time, against pid reuse
)

// ownerLabels identify this process.
func ownerLabels() map[string]string {
	host, _ := os.Hostname()
	pid := os.Getpid()
	return map[string]string{labelOwnerPID: strconv.Itoa(pid), labelOwnerHost: host, labelOwnerBoot: processStart(pid)}
}

// processStart is field 22 of /proc/PID/stat (start time in clock ticks
// since boot), "" when the process does not exist.
func processStart(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	// The command name (field 2) may hold spaces; fields resume after ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

// orphaned says whether the owner a cluster's labels name is gone: same
// host, and no process with that pid and start time.
func orphaned(labels map[string]string) bool {
	pidText, ok := labels[labelOwnerPID]
	if !ok {
		return false
	}
	host, _ := os.Hostname()
	if labels[labelOwnerHost] != host {
		return false // another machine's process: not ours to judge
	}
	pid, err := strconv.Atoi(pidText)
	if err != nil {
		return false
	}
	start := processStart(pid)
	return start == "" || start != labels[labelOwnerBoot]
}

// ReapOrphans removes the containers, networks and volumes of clusters
// whose owning redline process is gone (a run or suite killed with
// SIGKILL), and returns a line per cluster removed.
func (r *Runtime) ReapOrphans(ctx context.Context) ([]string, error) {
	f := make(client.Filters).Add("label", labelOwnerPID)
	owners := map[string]map[string]string{} // cluster -> labels
	cs, err := r.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return nil, fmt.Errorf("docker: listing containers: %w", err)
	}
	for _, ct := range cs.Items {
		owners[ct.Labels[LabelCluster]] = ct.Labels
	}
	ns, err := r.cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		return nil, fmt.Errorf("docker: listing networks: %w", err)
	}
	for _, n := range ns.Items {
		owners[n.Labels[LabelCluster]] = n.Labels
	}
	var reaped []string
	for name, labels := range owners {
		if name == "" || !orphaned(labels) {
			continue
		}
		n, err := cleanupLabel(ctx, r.cli, LabelCluster+"="+name)
		if err != nil {
			return reaped, err
		}
		reaped = append(reaped, fmt.Sprintf("removed %d containers and networks of cluster %s: its redline process (pid %s) is gone", n, name, labels[labelOwnerPID]))
	}
	return reaped, nil
}
