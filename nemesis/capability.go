package nemesis

import (
	"slices"
	"strings"

	"github.com/redline-dev/redline/cluster"
)

// capabilityWords say what each capability lets a fault do, for errors
// and `--nemesis list` (the interfaces' names mean nothing to a user).
var capabilityWords = map[cluster.Capability]string{
	cluster.CanKill:      "kill and restart nodes",
	cluster.CanPause:     "pause and resume nodes",
	cluster.CanPartition: "cut node-to-node traffic",
	cluster.CanClock:     "offset a node's clock",
	cluster.CanShape:     "delay and drop the packets a node sends",
	cluster.CanGrow:      "add and remove nodes",
	cluster.CanDelay:     "delay the packets a node sends (netem: Chaos Mesh on kubernetes, the kernel's sch_netem on docker)",
	cluster.CanDrop:      "drop a share of the packets a node sends",
	cluster.CanThrottle:  "cap the rate a node sends at",
	cluster.CanOneWay:    "cut traffic in one direction only",
	cluster.CanLimitCPU:  "cap a node's CPU",
	cluster.CanPowerCut:  "cut nodes' power, losing what they had not fsynced (the docker runtime's FUSE layer under their data)",
	cluster.CanDiskFault: "fail the disk under a node's data directory (the docker runtime's FUSE layer)",
}

// CapabilityWords says a capability in words.
func CapabilityWords(c cluster.Capability) string { return capabilityWords[c] }

func needsWords(f fault) string { return capabilityWords[f.needs()] }

// borrows of the modes that strike with another fault's means.
func (*migrateFault) borrows(mode string) []string {
	if mode == classicReplicaFullSyncMode {
		return []string{"kill"}
	}
	_, strike, ok := splitHandoffMode(mode)
	if !ok {
		return nil
	}
	for _, f := range []string{"kill", "pause", "partition", "failover"} {
		if strings.HasPrefix(strike, f) {
			return []string{f}
		}
	}
	return nil
}

func (*failoverFault) borrows(mode string) []string {
	switch mode {
	case takeoverKilledMode, epochBumpUnheardMode:
		return []string{"kill"}
	case twoReplicaManualMode:
		return []string{"pause"}
	}
	return nil
}

func (*memberFault) borrows(mode string) []string {
	switch mode {
	case emptiedReplicaKillMode, orphanMigrationKillMode, killAfterReconfigureMode:
		return []string{"kill"}
	}
	return nil
}

// Unmet is a fault --nemesis names that a runtime cannot cause.
type Unmet struct {
	Name       string             // as --nemesis gave it: "delay", "migrate:atomic-kill-src"
	Fault      string             // the fault whose capability is missing ("kill" for that mode)
	Capability cluster.Capability // what the runtime lacks
	Hookable   bool               // a --nemesis-hook Fault=COMMAND could stand in
}

// Words says what is missing: "cannot kill and restart nodes".
func (u Unmet) Words() string {
	s := "cannot " + capabilityWords[u.Capability]
	if u.Fault != u.Name && !strings.HasPrefix(u.Name, u.Fault+":") {
		s += " (the mode strikes with " + u.Fault + ")"
	}
	return s
}

// Unsupported lists, before any cluster exists, the faults of names (as
// --nemesis takes them) that a runtime offering caps can never cause: a
// fault whose capability it lacks, or a mode that borrows such a fault,
// unless hooks (fault names of --nemesis-hook) stand in. "all", "none"
// and unknown names are never listed ("all" is what the target can
// cause; unknown names are validated elsewhere). A fault that passes may
// still be refused when its cluster starts (a probe that fails, Chaos
// Mesh not installed): caps are what the runtime can do at most.
func Unsupported(names []string, caps []cluster.Capability, hooks []string) []Unmet {
	var out []Unmet
	missing := func(name string) (cluster.Capability, bool) {
		f := lookup(name)
		if f == nil || f.needs() == "" || slices.Contains(caps, f.needs()) {
			return "", false
		}
		if f.hookable() && slices.Contains(hooks, name) {
			return "", false
		}
		return f.needs(), true
	}
	for _, raw := range names {
		name, mode, _ := strings.Cut(strings.TrimSpace(strings.ToLower(raw)), ":")
		f := lookup(name)
		if f == nil {
			continue
		}
		if c, ok := missing(name); ok {
			out = append(out, Unmet{Name: raw, Fault: name, Capability: c, Hookable: f.hookable()})
			continue
		}
		if mode == "" {
			continue
		}
		for _, b := range f.borrows(mode) {
			if c, ok := missing(b); ok {
				out = append(out, Unmet{Name: raw, Fault: b, Capability: c, Hookable: lookup(b).hookable()})
				break
			}
		}
	}
	return out
}
