package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
	"github.com/redline-dev/redline/harness"
)

// topologyFaults are the faults that change who serves what on a cluster
// redline did not create, and what each does there.
var topologyFaults = map[string]string{
	"migrate":  "moves slots between primaries with their keys, as redis-cli --cluster reshard does (MIGRATING/IMPORTING, MIGRATE of every key, SETSLOT NODE), and leaves some half-way until the fault stops; the end phase finishes exactly those",
	"failover": "sends a coordinated CLUSTER FAILOVER to a replica, which catches up and becomes primary (FORCE/TAKEOVER only if named: failover:force, failover:takeover); roles are switched back at the end only with --restore-roles",
}

// askConsent describes what the faults will do to a cluster redline did not
// create and asks on a terminal. --yes skips the question; without a
// terminal and without --yes, topology-changing faults are refused.
func askConsent(ctx context.Context, o *runOptions, cfg harness.Config, c cluster.Cluster) error {
	var faults []string
	for _, f := range cfg.Nemesis {
		if f == "all" {
			faults = append(faults, "migrate", "failover")
		} else if _, ok := topologyFaults[f]; ok {
			faults = append(faults, f)
		}
	}
	if len(faults) == 0 {
		return nil
	}
	w := o.stdout
	fmt.Fprintf(w, "redline did not create the cluster at %s. The faults you asked for change its topology:\n", strings.Join(cfg.Addrs, ","))
	for _, f := range faults {
		fmt.Fprintf(w, "  %s: %s\n", f, topologyFaults[f])
	}
	if e, ok := c.(*clusteradmin.External); ok {
		fmt.Fprintf(w, "Nodes (%s):\n", e.View().From)
		for _, m := range e.View().Members {
			role := "replica of " + m.MasterID
			if m.Primary {
				role = fmt.Sprintf("primary, %d slots, %s keys", m.Slots, dbsize(ctx, o.creds, m.Addr))
			}
			fmt.Fprintf(w, "  %s %s %s\n", m.Addr, m.ID, role)
		}
	}
	fmt.Fprintf(w, "redline writes only keys under %q, changes slots only by full migrations it journals, and audits every other key before and after.\n", cfg.KeyPrefix)
	if o.yes {
		return nil
	}
	// A terminal, not merely a character device (/dev/null is one).
	if !term.IsTerminal(int(os.Stdin.Fd())) {
		return badArgs("faults %s change the topology of a cluster redline did not create; "+
			"no terminal to ask on: pass --yes to go ahead, or choose other faults", strings.Join(faults, ","))
	}
	fmt.Fprint(w, "Type yes to go ahead: ")
	answer, err := bufio.NewReader(os.Stdin).ReadString('\n')
	if err != nil && err != io.EOF {
		return badArgs("reading the answer: %v", err)
	}
	if strings.TrimSpace(strings.ToLower(answer)) != "yes" {
		return badArgs("not confirmed: nothing was changed")
	}
	return nil
}

// dbsize is a primary's key count in words, for the consent message.
func dbsize(ctx context.Context, creds cluster.Credentials, addr string) string {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c := creds.AdminClient(addr)
	defer c.Close()
	n, err := c.DBSize(ctx).Result()
	if err != nil {
		return "? (" + err.Error() + ")"
	}
	return fmt.Sprint(n)
}
