package docker

import (
	"context"
	"fmt"
	"strconv"

	"github.com/moby/moby/client"

	"github.com/redline-dev/redline/cluster"
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
	p := cluster.ThisProcess()
	return map[string]string{labelOwnerPID: strconv.Itoa(p.PID), labelOwnerHost: p.Host, labelOwnerBoot: p.Start}
}

// orphaned says whether the owner a cluster's labels name is gone: same
// host, and no process with that pid and start time.
func orphaned(labels map[string]string) bool {
	pidText, ok := labels[labelOwnerPID]
	if !ok {
		return false
	}
	pid, err := strconv.Atoi(pidText)
	if err != nil {
		return false
	}
	gone, _ := cluster.Process{Host: labels[labelOwnerHost], PID: pid, Start: labels[labelOwnerBoot]}.Gone()
	return gone
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
